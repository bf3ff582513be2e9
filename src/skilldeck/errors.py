"""The one error hierarchy of skilldeck.

Every error skilldeck raises on purpose derives from :class:`SkilldeckError`, so a
caller can catch the whole family with one ``except`` and a CLI can turn any of them
into a clean one-line message instead of a traceback::

    SkilldeckError
    ├── ConfigError                 bad or unreadable config file / setting
    ├── SkillError
    │   ├── SkillParseError         SKILL.md unreadable: YAML, frontmatter, encoding
    │   ├── SkillValidationError    SKILL.md parsed but breaks a rule (has diagnostics)
    │   ├── SkillNotFoundError      no skill by that name (has suggestions)
    │   │   └── SkillInvalidError   a skill by that name exists but its SKILL.md is
    │   │                           invalid (has diagnostics)
    │   ├── SkillUnavailableError   exists but gated: disabled, missing tool/bin/env
    │   ├── SkillExecutionError     a script or code skill failed to run
    │   ├── EnvironmentBuildError   a skill's Python environment could not be built
    │   ├── ResourceAccessError     a level-3 path escaped the skill folder
    │   └── PackageError            .skill archive refused or signature bad
    │       ├── SourceError         a skill source (git, URL, index) refused:
    │       │                       SourceUnreachableError, RefNotFoundError,
    │       │                       DigestMismatchError, NotASkillSourceError,
    │       │                       SkillChoiceError
    │       ├── LocallyModifiedError  an update would overwrite local edits
    │       ├── DecryptionError   an encrypted .skillpack: wrong identity, truncated, tampered
    │       └── RiskyContentError the content scanner found high-severity findings
    ├── PolicyError                 a skill set cannot be composed (has diagnostics)
    ├── IntegrationError            a framework toolkit given what is not a tool call,
    │                               or called where it cannot run
    ├── PermissionDeniedError       a tool call denied by rules or by the user
    ├── SandboxError                sandbox required but unavailable / failed
    ├── SecretsError                a credential name, value or store refused
    ├── ToolError                   a tool failed in a way the model should see
    ├── ModelError
    │   ├── ModelConfigError        unknown provider, missing API key or base URL
    │   ├── ModelConnectionError    server unreachable after retries
    │   └── ScriptExhaustedError    the scripted model ran out of lines
    ├── SessionError
    │   ├── SessionNotFoundError
    │   └── SessionBusyError        another process is running that session now
    └── MCPError

    ConfigWarning (a UserWarning)   a setting that is ignored (unknown key, typo)
    EvalWarning (a UserWarning)     an eval file's field that is ignored (a stale skill_name)

Messages say what went wrong, where, and how to fix it. Exceptions carry data
(``path``, ``line``, ``code``, ``diagnostics``) and never have side effects.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skilldeck.skills.model.diagnostics import Diagnostic

__all__ = [
    "AgentNotFoundError",
    "ConfigError",
    "DecryptionError",
    "DigestMismatchError",
    "EnvironmentBuildError",
    "EvalWarning",
    "IntegrationError",
    "LocallyModifiedError",
    "MCPError",
    "ModelConfigError",
    "ModelConnectionError",
    "ModelError",
    "NotASkillSourceError",
    "PackageError",
    "PermissionDeniedError",
    "PolicyError",
    "RefNotFoundError",
    "ResourceAccessError",
    "RiskyContentError",
    "SandboxError",
    "ScriptExhaustedError",
    "SecretsError",
    "SessionBusyError",
    "SessionError",
    "SessionNotFoundError",
    "SkillChoiceError",
    "SkillError",
    "SkillExecutionError",
    "SkillInvalidError",
    "SkillNotFoundError",
    "SkillParseError",
    "SkillUnavailableError",
    "SkillValidationError",
    "SkilldeckError",
    "SourceError",
    "SourceUnreachableError",
    "ToolError",
]


class SkilldeckError(Exception):
    """Base of every error skilldeck raises deliberately."""


class ConfigError(SkilldeckError):
    """A config file or setting is invalid; the message names the file and key."""

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


class ConfigWarning(UserWarning):
    """A setting that has no effect (an unknown key, most often a typo): the
    configuration still loads, and the message names where the key is and the
    setting it was probably meant to be. The CLI prints these as ``warning:`` lines."""


class EvalWarning(UserWarning):
    """Part of a trigger-eval file that has no effect (a ``skill_name`` that is not the
    skill whose folder holds the file): the cases still run, and the message says
    which skill they run for and what to fix. The CLI prints these as ``warning:`` lines."""


class SkillError(SkilldeckError):
    """Base for errors about one skill."""


class SkillParseError(SkillError):
    """A SKILL.md could not be read as frontmatter + body.

    ``code`` is a stable rule code (``SD001``…), ``line`` is 1-based when known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        code: str = "SD000",
    ) -> None:
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(f"{where}{message}")
        self.bare_message = message
        # the parser gets a string path from discovery; errors always carry a Path
        self.path = Path(path) if isinstance(path, str) else path
        self.line = line
        self.code = code


class SkillValidationError(SkillError):
    """A skill parsed but breaks one or more rules; all of them are in ``diagnostics``."""

    def __init__(
        self, message: str, *, path: Path | None = None, diagnostics: Sequence[Diagnostic] = ()
    ) -> None:
        super().__init__(message)
        self.path = path
        self.diagnostics = list(diagnostics)


class SkillNotFoundError(SkillError, LookupError):
    """No skill has that name; ``suggestions`` holds close matches."""

    def __init__(self, name: str, *, suggestions: Sequence[str] = ()) -> None:
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(
            f"No skill named {name!r}.{hint} Run `skilldeck skills list` to see what is available."
        )
        self.name = name
        self.suggestions = list(suggestions)


class AgentNotFoundError(SkillNotFoundError):
    """No agent definition (built-in type or AGENT.md) has that name."""

    def __init__(self, name: str, *, suggestions: Sequence[str] = ()) -> None:
        super().__init__(name, suggestions=suggestions)
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        self.args = (
            f"No agent named {name!r}.{hint} Run `skilldeck agents list` to see what is available.",
        )


class SkillInvalidError(SkillNotFoundError):
    """A skill by that name was found but could not be loaded: its SKILL.md is invalid.
    ``diagnostics`` says where (path, line) and what to fix. A SkillNotFoundError, so
    code that treats "no usable skill by that name" alike keeps working."""

    def __init__(
        self, name: str, *, path: Path | None = None, diagnostics: Sequence[Diagnostic] = ()
    ) -> None:
        super().__init__(name)
        errors = [d for d in diagnostics if d.is_error] or list(diagnostics)
        reasons = "; ".join(str(d) for d in errors) or f"{path}: cannot be loaded"
        where = f" {path.parent}" if path else ""  # the skill's folder
        self.args = (
            f"Skill {name!r} is invalid: {reasons}. Fix its SKILL.md; "
            f"`skilldeck skills validate{where}` lists every problem.",
        )
        self.path = path
        self.diagnostics = list(diagnostics)


class SkillUnavailableError(SkillError):
    """The skill exists but cannot be used here; ``reason`` says why."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"Skill {name!r} is unavailable: {reason}")
        self.name = name
        self.reason = reason


class SkillExecutionError(SkillError):
    """Running a script or code skill failed before it could produce a result."""


class EnvironmentBuildError(SkillError):
    """A skill's own Python environment (its requirements) could not be built."""


class ResourceAccessError(SkillError):
    """A level-3 resource path points outside its skill folder, or does not exist."""


class PackageError(SkillError):
    """A .skill archive or folder was refused at pack, install or verify time."""


class SourceError(PackageError):
    """A skill source (a git repository, a URL, a skills index) cannot be used."""


class SourceUnreachableError(SourceError):
    """The host did not answer, timed out, or answered with an HTTP error."""


class RefNotFoundError(SourceError):
    """The tag, branch or commit asked for does not exist in the repository."""


class DigestMismatchError(SourceError):
    """Downloaded bytes do not match the sha256 the index promised: refused."""


class NotASkillSourceError(SourceError):
    """The source holds no skill (no SKILL.md), or not the one asked for."""


class SkillChoiceError(SourceError):
    """The source holds several skills and none was chosen; ``candidates`` names them."""

    def __init__(self, message: str, *, candidates: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.candidates = list(candidates)


class LocallyModifiedError(PackageError):
    """An installed skill was edited after install; an update would lose the edits."""


class DecryptionError(PackageError):
    """An encrypted skill pack cannot be opened: no matching identity, or the file is
    truncated or was modified (age authenticates every chunk)."""


class RiskyContentError(PackageError):
    """The content scanner found high-severity findings; ``findings`` lists them."""

    def __init__(self, message: str, *, findings: Sequence[object] = ()) -> None:
        super().__init__(message)
        self.findings = list(findings)


class PolicyError(SkilldeckError):
    """A skill set cannot be composed; ``diagnostics`` lists every reason."""

    def __init__(self, message: str, *, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class IntegrationError(SkilldeckError):
    """A framework toolkit (OpenAI, Anthropic) was given something that is not a tool
    call, or was called where it cannot run (``dispatch_sync`` inside an event loop);
    the message names what was expected."""


class PermissionDeniedError(SkilldeckError):
    """A tool call was denied by a rule, a mode or the user."""


class SandboxError(SkilldeckError):
    """The sandbox is required but unavailable, or failed to start."""


class SecretsError(SkilldeckError):
    """A credential's name or value was refused, or the secrets store failed."""


class ToolError(SkilldeckError):
    """A tool failed; the loop turns this into an error result for the model."""


class ModelError(SkilldeckError):
    """Base for errors talking to a language model."""


class ModelConfigError(ModelError):
    """The model spec or its credentials are wrong; the message names the fix."""


class ModelConnectionError(ModelError):
    """The model server could not be reached or kept failing after retries."""


class ScriptExhaustedError(ModelError):
    """The scripted model has no line left for this conversation."""


class SessionError(SkilldeckError):
    """The session store failed or a session cannot continue."""


class SessionNotFoundError(SessionError, LookupError):
    """No session has that id."""


class SessionBusyError(SessionError):
    """Another process holds the session's lease (it is running the session now): a
    session has one writer at a time. ``owner`` describes that process."""

    def __init__(self, message: str, *, owner: str = "") -> None:
        super().__init__(message)
        self.owner = owner


class MCPError(SkilldeckError):
    """An MCP server failed to start, or answered with an error."""
