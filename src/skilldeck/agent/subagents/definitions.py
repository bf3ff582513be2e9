"""Agent definitions: the built-in sub-agent types and AGENT.md files.

An AGENT.md is frontmatter (``name``, ``description``, ``model``, ``tools``,
``disallowed-tools``, ``skills``, ``allow-skills``, ``permission-mode``, ``max-turns``)
plus a body that becomes the agent's system prompt. Roots, first wins on a name:
``./.skilldeck/agents``, ``$SKILLDECK_HOME/agents``, then the bundled ones. A file is
``<name>.md`` or ``<name>/AGENT.md``. The three built-in types (``general-purpose``,
``explore``, ``plan``) are defined here in code and can be overridden by a file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.config import Settings
from skilldeck.errors import AgentNotFoundError, SkilldeckError, SkillParseError
from skilldeck.skills.format import parse_skill_md
from skilldeck.skills.model.diagnostics import Diagnostic, Severity
from skilldeck.skills.model.spec import canonical_field
from skilldeck.skills.rules import split_tool_list

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
#: an agent's name also names its memory folder and its sessions: keep it a plain word
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: read-only shell commands a ``plan`` agent may run. Prefix rules approve only literal
#: simple commands with no redirection to a file and no writing or command-running
#: argument (``find -delete``/``-exec``, ``rg --pre``, ``--output=…``): skills/rules/shellrules.py
READ_ONLY_BASH = (
    "Bash(ls:*)",
    "Bash(cat:*)",
    "Bash(head:*)",
    "Bash(tail:*)",
    "Bash(wc:*)",
    "Bash(find:*)",
    "Bash(grep:*)",
    "Bash(rg:*)",
    "Bash(pwd)",
    "Bash(tree:*)",
    "Bash(git status:*)",
    "Bash(git log:*)",
    "Bash(git diff:*)",
    "Bash(git show:*)",
)


@dataclass
class AgentDefinition:
    name: str
    description: str
    instructions: str = ""
    model: str | None = None
    #: tool rules the agent may use; None = inherit the parent's tools (minus Task)
    tools: list[str] | None = None
    disallowed_tools: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    allow_skills: bool = True
    permission_mode: str | None = None
    max_turns: int | None = None
    path: Path | None = None
    source: str = "builtin"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "model": self.model,
            "tools": self.tools,
            "disallowed_tools": self.disallowed_tools,
            "skills": self.skills,
            "allow_skills": self.allow_skills,
            "permission_mode": self.permission_mode,
            "max_turns": self.max_turns,
            "path": str(self.path) if self.path else None,
            "source": self.source,
        }


BUILTIN_AGENTS: dict[str, AgentDefinition] = {
    "general-purpose": AgentDefinition(
        name="general-purpose",
        description="A capable agent for multi-step tasks: research, code search, edits. "
        "Holds the parent's tools except sub-agent spawning.",
        instructions="You are a sub-agent. Complete the task you are given with the tools you "
        "have, then answer with a concise report of what you found or did.",
        max_turns=10,
    ),
    "explore": AgentDefinition(
        name="explore",
        description="Fast read-only exploration of a codebase: find files, search code, read.",
        instructions="You are a read-only exploration sub-agent. Find and read what the task "
        "asks about; never modify anything. Answer with the findings and file paths.",
        tools=["Read", "Glob", "Grep"],
        allow_skills=False,
        max_turns=5,
    ),
    "plan": AgentDefinition(
        name="plan",
        description="Researches a codebase read-only and returns a step-by-step plan.",
        instructions="You are a planning sub-agent. Investigate read-only (files and read-only "
        "shell commands), then answer with a numbered implementation plan.",
        tools=["Read", "Glob", "Grep", *READ_ONLY_BASH],
        allow_skills=False,
        max_turns=10,
    ),
}


def agent_roots(settings: Settings) -> list[tuple[str, Path]]:
    bundled = Path(__file__).resolve().parents[2] / "bundled" / "agents"
    # a workspace's own definitions count only in a trusted folder (skilldeck.trust)
    workspace = [("workspace", settings.workspace / ".skilldeck" / "agents")]
    return [
        *(workspace if settings.workspace_trust.accepts(".skilldeck/agents") else []),
        ("user", settings.home / "agents"),
        ("bundled", bundled),
    ]


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return split_tool_list(value)
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def _as_bool(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"true", "yes", "1", "on"}


def load_definition(path: Path, *, source: str) -> AgentDefinition:
    """Parse one AGENT.md; raises SkillParseError with the file and line on bad input."""
    parsed = parse_skill_md(path)
    data = {canonical_field(str(k)): v for k, v in parsed.data.items()}
    default_name = path.parent.name if path.name.upper() == "AGENT.MD" else path.stem
    name = str(data.get("name") or default_name)
    if not _NAME.match(name) or ".." in name:
        raise SkillParseError(
            f"agent name {name!r} must be letters, digits, '.', '_' or '-' (at most 64)",
            path=path,
            line=parsed.key_lines.get("name"),
            code="SD402",
        )
    mode = data.get("permission-mode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise SkillParseError(
            f"permission-mode {mode!r} is not one of {', '.join(PERMISSION_MODES)}",
            path=path,
            line=parsed.key_lines.get("permission-mode"),
            code="SD401",
        )
    max_turns = _max_turns(data.get("max-turns"), path, parsed.key_lines.get("max-turns"))
    lines = {canonical_field(str(k)): n for k, n in parsed.key_lines.items()}
    _check_types(data, path, lines)
    body = path.read_bytes()[parsed.body_offset :].decode("utf-8", errors="replace").strip()
    return AgentDefinition(
        name=name,
        description=str(data.get("description") or ""),
        instructions=body,
        model=str(data["model"]) if data.get("model") else None,
        tools=_as_list(data["tools"]) if "tools" in data else None,
        disallowed_tools=_as_list(data.get("disallowed-tools")),
        skills=_as_list(data.get("skills")),
        allow_skills=_as_bool(data.get("allow-skills"), True),
        permission_mode=str(mode) if mode else None,
        max_turns=max_turns,
        path=path,
        source=source,
    )


#: AGENT.md fields and what each must be: text, or text / a list of texts
_TEXT_FIELDS = ("description", "model")
#: YAML scalars, read as the text they were written as
_SCALARS = (str, int, float, bool)
_LIST_FIELDS = ("tools", "disallowed-tools", "skills")


def _check_types(data: dict[str, Any], path: Path, lines: dict[str, int]) -> None:
    """SD404 for a field of the wrong shape (``model: [x]``, ``skills: {a: 1}``), which
    used to surface later as a Python repr or as a skill that does not exist, naming
    neither the file nor the line. A YAML scalar (``description: 2024``) is its text."""
    for key in (*_TEXT_FIELDS, *_LIST_FIELDS):
        value = data.get(key)
        if value is None or isinstance(value, _SCALARS):
            continue
        listed = key in _LIST_FIELDS and isinstance(value, list)
        if listed and all(isinstance(v, _SCALARS) for v in value):
            continue
        shape = "text" if key in _TEXT_FIELDS else "a name or a list of names"
        kind = "a table" if isinstance(value, dict) else "a list"
        raise SkillParseError(
            f"{key} must be {shape}, not {kind}: {value!r}",
            path=path,
            line=lines.get(key),
            code="SD404",
        )


def _max_turns(value: object, path: Path, line: int | None) -> int | None:
    """``max-turns`` as a positive whole number; anything else is the author's mistake
    (``-3`` or ``ten`` used to be dropped in silence, and the agent ran to the default)."""
    if value is None:
        return None
    if isinstance(value, int | str) and not isinstance(value, bool):
        text = str(value).strip()
        if text.isascii() and text.isdigit() and len(text) <= 9 and int(text) >= 1:
            return int(text)
    raise SkillParseError(
        f"max-turns {value!r} is not a whole number of turns of at least 1",
        path=path,
        line=line,
        code="SD403",
    )


def _candidate_files(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    found = [p for p in sorted(root.glob("*.md")) if p.is_file() and p.name.upper() != "README.MD"]
    found += [p for p in sorted(root.glob("*/AGENT.md")) if p.is_file()]
    return found


@dataclass
class AgentCatalog:
    agents: dict[str, AgentDefinition]
    diagnostics: list[Diagnostic]

    def get(self, name: str) -> AgentDefinition:
        if name not in self.agents:
            import difflib

            raise AgentNotFoundError(
                name, suggestions=difflib.get_close_matches(name, list(self.agents), n=3)
            )
        return self.agents[name]

    def names(self) -> list[str]:
        return sorted(self.agents)


def discover_agents(settings: Settings, *, extra: Sequence[AgentDefinition] = ()) -> AgentCatalog:
    """Built-ins, overridden by bundled, user, then workspace files (highest wins)."""
    agents = dict(BUILTIN_AGENTS)
    diagnostics: list[Diagnostic] = []
    for source, root in reversed(agent_roots(settings)):
        for path in _candidate_files(root):
            try:
                definition = load_definition(path, source=source)
            except SkilldeckError as e:
                diagnostics.append(
                    Diagnostic(
                        code=getattr(e, "code", "SD400"),
                        rule="bad-agent-definition",
                        message=getattr(e, "bare_message", str(e)),
                        severity=Severity.ERROR,
                        path=path,
                        line=getattr(e, "line", None),
                    )
                )
                continue
            agents[definition.name] = definition
    for definition in extra:
        agents[definition.name] = definition
    return AgentCatalog(agents=agents, diagnostics=diagnostics)
