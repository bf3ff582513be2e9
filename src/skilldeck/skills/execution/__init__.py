"""Using a skill: the one load operation, level 1/2/3 rendering, substitutions, dynamic
context, gating, declared credentials and the secrets store (with redaction), per-skill
Python environments, the script runner and process handling.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.execution.credentials import (
        Credential,
        active_credentials,
        credential_env,
        declared_credentials,
        missing_credentials,
        secret_store,
        started_by,
    )
    from skilldeck.skills.execution.disclosure import (
        DESCRIPTION_LIMITS,
        render_available_skills,
        render_level2,
    )
    from skilldeck.skills.execution.dynamic import (
        CommandOutput,
        DynamicCommand,
        PermissionCheck,
        ShellRunner,
        expand_dynamic_context,
        find_commands,
        has_dynamic_context,
        shell_runner,
    )
    from skilldeck.skills.execution.environments import (
        ENVS_RECORD,
        Environments,
        SkillEnvironment,
        build_at_install,
        environment_key,
        read_requirements,
    )
    from skilldeck.skills.execution.gating import (
        compatibility_problem,
        gating_reason,
        machine_gating,
        machine_reason,
        tools_reason,
        unavailable_for,
    )
    from skilldeck.skills.execution.invocation import (
        SECRET_MARKERS,
        entrypoint_of,
        interpreter_argv,
        normalize_args,
        scratch_prefix,
        scrub_env,
    )
    from skilldeck.skills.execution.loading import (
        NO_GATE,
        PLAN_REFUSAL,
        CommandGate,
        CommandRunner,
        LoadedSkill,
        LoadStatus,
        argument_string,
        load_skill_for_use,
    )
    from skilldeck.skills.execution.process import (
        ProcessOutcome,
        kill_group,
        run_process,
    )
    from skilldeck.skills.execution.runner import ScriptResult, ScriptRunner
    from skilldeck.skills.execution.secrets import (
        KEYRING_SERVICE,
        MIN_REDACTED,
        SecretEntry,
        SecretStore,
        check_secret_name,
        check_skill_name,
        redact,
        redact_data,
        remember,
        remember_stored,
    )
    from skilldeck.skills.execution.substitute import (
        split_arguments,
    )

_HOME: dict[str, str] = {
    "Credential": "credentials",
    "active_credentials": "credentials",
    "credential_env": "credentials",
    "declared_credentials": "credentials",
    "missing_credentials": "credentials",
    "secret_store": "credentials",
    "started_by": "credentials",
    "NO_GATE": "loading",
    "PLAN_REFUSAL": "loading",
    "CommandGate": "loading",
    "CommandRunner": "loading",
    "LoadStatus": "loading",
    "LoadedSkill": "loading",
    "argument_string": "loading",
    "load_skill_for_use": "loading",
    "DESCRIPTION_LIMITS": "disclosure",
    "render_available_skills": "disclosure",
    "render_level2": "disclosure",
    "split_arguments": "substitute",
    "CommandOutput": "dynamic",
    "DynamicCommand": "dynamic",
    "PermissionCheck": "dynamic",
    "ShellRunner": "dynamic",
    "expand_dynamic_context": "dynamic",
    "find_commands": "dynamic",
    "has_dynamic_context": "dynamic",
    "shell_runner": "dynamic",
    "ENVS_RECORD": "environments",
    "Environments": "environments",
    "SkillEnvironment": "environments",
    "build_at_install": "environments",
    "environment_key": "environments",
    "read_requirements": "environments",
    "compatibility_problem": "gating",
    "gating_reason": "gating",
    "machine_gating": "gating",
    "machine_reason": "gating",
    "tools_reason": "gating",
    "unavailable_for": "gating",
    "SECRET_MARKERS": "invocation",
    "ScriptResult": "runner",
    "ScriptRunner": "runner",
    "entrypoint_of": "invocation",
    "interpreter_argv": "invocation",
    "normalize_args": "invocation",
    "scratch_prefix": "invocation",
    "scrub_env": "invocation",
    "ProcessOutcome": "process",
    "KEYRING_SERVICE": "secrets",
    "MIN_REDACTED": "secrets",
    "SecretEntry": "secrets",
    "SecretStore": "secrets",
    "check_secret_name": "secrets",
    "check_skill_name": "secrets",
    "redact": "secrets",
    "redact_data": "secrets",
    "remember": "secrets",
    "remember_stored": "secrets",
    "kill_group": "process",
    "run_process": "process",
}

__all__ = [
    "DESCRIPTION_LIMITS",
    "ENVS_RECORD",
    "KEYRING_SERVICE",
    "MIN_REDACTED",
    "NO_GATE",
    "PLAN_REFUSAL",
    "SECRET_MARKERS",
    "CommandGate",
    "CommandOutput",
    "CommandRunner",
    "Credential",
    "DynamicCommand",
    "Environments",
    "LoadStatus",
    "LoadedSkill",
    "PermissionCheck",
    "ProcessOutcome",
    "ScriptResult",
    "ScriptRunner",
    "SecretEntry",
    "SecretStore",
    "ShellRunner",
    "SkillEnvironment",
    "active_credentials",
    "argument_string",
    "build_at_install",
    "check_secret_name",
    "check_skill_name",
    "compatibility_problem",
    "credential_env",
    "declared_credentials",
    "entrypoint_of",
    "environment_key",
    "expand_dynamic_context",
    "find_commands",
    "gating_reason",
    "has_dynamic_context",
    "interpreter_argv",
    "kill_group",
    "load_skill_for_use",
    "machine_gating",
    "machine_reason",
    "missing_credentials",
    "normalize_args",
    "read_requirements",
    "redact",
    "redact_data",
    "remember",
    "remember_stored",
    "render_available_skills",
    "render_level2",
    "run_process",
    "scratch_prefix",
    "scrub_env",
    "secret_store",
    "shell_runner",
    "split_arguments",
    "started_by",
    "tools_reason",
    "unavailable_for",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
