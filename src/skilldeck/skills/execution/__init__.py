"""Using a skill: the one load operation, level 1/2/3 rendering, substitutions, dynamic
context, gating, the script runner and process handling.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
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
    from skilldeck.skills.execution.gating import (
        apply_gating,
        compatibility_problem,
        gating_reason,
        machine_reason,
        tools_reason,
        unavailable_for,
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
    from skilldeck.skills.execution.runner import (
        SECRET_MARKERS,
        ScriptResult,
        ScriptRunner,
        entrypoint_of,
        interpreter_argv,
        normalize_args,
        scratch_prefix,
        scrub_env,
    )
    from skilldeck.skills.execution.substitute import (
        split_arguments,
    )

_HOME: dict[str, str] = {
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
    "apply_gating": "gating",
    "compatibility_problem": "gating",
    "gating_reason": "gating",
    "machine_reason": "gating",
    "tools_reason": "gating",
    "unavailable_for": "gating",
    "SECRET_MARKERS": "runner",
    "ScriptResult": "runner",
    "ScriptRunner": "runner",
    "entrypoint_of": "runner",
    "interpreter_argv": "runner",
    "normalize_args": "runner",
    "scratch_prefix": "runner",
    "scrub_env": "runner",
    "ProcessOutcome": "process",
    "kill_group": "process",
    "run_process": "process",
}

__all__ = [
    "DESCRIPTION_LIMITS",
    "NO_GATE",
    "PLAN_REFUSAL",
    "SECRET_MARKERS",
    "CommandGate",
    "CommandOutput",
    "CommandRunner",
    "DynamicCommand",
    "LoadStatus",
    "LoadedSkill",
    "PermissionCheck",
    "ProcessOutcome",
    "ScriptResult",
    "ScriptRunner",
    "ShellRunner",
    "apply_gating",
    "argument_string",
    "compatibility_problem",
    "entrypoint_of",
    "expand_dynamic_context",
    "find_commands",
    "gating_reason",
    "has_dynamic_context",
    "interpreter_argv",
    "kill_group",
    "load_skill_for_use",
    "machine_reason",
    "normalize_args",
    "render_available_skills",
    "render_level2",
    "run_process",
    "scratch_prefix",
    "scrub_env",
    "shell_runner",
    "split_arguments",
    "tools_reason",
    "unavailable_for",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
