"""What a code skill is given and returns: the API ``skill.py`` is written against.

Kept apart from loading (``skills/code/codeskill.py``) and from the out-of-process host
(``skills/code/codehost.py``) because all three need it, and because the child process
that runs an untrusted skill (``skills/code/_codechild.py``) should import as little of
skilldeck as it can. ``skills/code/codeskill.py`` re-exports every name here, which is
where skill authors import them from.
"""

from __future__ import annotations

import inspect
import re
import weakref
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Protocol, runtime_checkable

from skilldeck.errors import SkillExecutionError
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.model.spec import SkillMetadata

__all__ = [
    "CodeSkill",
    "LLMClient",
    "NoTools",
    "SkillContext",
    "SkillResult",
    "ToolDispatcher",
    "ToolOutcome",
    "bind_code_skill",
    "bound_code_skill",
    "keyword_score",
    "module_name_for",
    "skill_class",
]

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "is"}
    | {"it", "me", "my", "of", "on", "or", "please", "the", "this", "to", "use", "using"}
    | {"what", "when", "with", "you", "your"}
)


# ---- what a code skill is given ---------------------------------------------------


@runtime_checkable
class ToolOutcome(Protocol):
    """What a tool call returns (``tools.base.ToolResult`` satisfies this)."""

    content: str
    is_error: bool


@runtime_checkable
class ToolDispatcher(Protocol):
    """Calls a tool by name, going through the same permission checks as the model."""

    async def call(self, name: str, input: dict[str, Any]) -> ToolOutcome: ...


@runtime_checkable
class LLMClient(Protocol):
    """A one-shot completion, for skills that want a model's judgement."""

    async def complete(self, prompt: str, system: str | None = None) -> str: ...


@dataclass
class _NoToolResult:
    content: str
    is_error: bool = True


class NoTools:
    """The dispatcher used when none is wired: every call is an error result."""

    async def call(self, name: str, input: dict[str, Any]) -> ToolOutcome:
        return _NoToolResult(f"No tools are available to this skill (asked for {name!r}).")


@dataclass
class SkillContext:
    """Everything a code skill may use during ``execute``."""

    tools: ToolDispatcher = field(default_factory=NoTools)
    llm: LLMClient | None = None
    #: the session id ("none" outside a session)
    session: str = "none"
    user_message: str = ""
    #: this skill's settings (``[skills.settings.<name>]``)
    config: dict[str, Any] = field(default_factory=dict)
    #: the arguments the skill was invoked with (object, list or string)
    args: Any = None
    skill_dir: Path | None = None
    workspace: Path | None = None
    #: per-session scratch state shared between calls
    state: dict[str, Any] = field(default_factory=dict)


@dataclass
class SkillResult:
    """What a code skill returns. ``prompt_injection`` is extra guidance for the model."""

    success: bool
    output: str = ""
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    prompt_injection: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def render(self) -> str:
        """The text a model sees."""
        if self.success:
            text = self.output
        else:
            text = f"Error: {self.error or 'the skill failed'}"
            if self.output:
                text += f"\n{self.output}"
        if self.prompt_injection:
            text += f"\n\nInstructions from the skill:\n{self.prompt_injection}"
        return text


def keyword_score(query: str, text: str) -> float:
    """Share of the query's meaningful words that appear in ``text`` (0.0–1.0)."""
    wanted = {w for w in _WORD.findall(query.lower()) if w not in _STOPWORDS}
    if not wanted:
        return 0.0
    have = set(_WORD.findall(text.lower()))
    return len(wanted & have) / len(wanted)


# ---- the base class ---------------------------------------------------------------


class CodeSkill:
    """Base for code skills. Subclass it once in ``skill.py`` and implement ``execute``.

    When the skill folder has a SKILL.md, its metadata wins; the class attributes
    describe skills registered in code (see :meth:`to_skill`).
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    version: ClassVar[str | None] = None
    tags: ClassVar[Sequence[str]] = ()
    requires_tools: ClassVar[Sequence[str]] = ()
    timeout: ClassVar[float | None] = None

    def __init__(self, skill: Skill | None = None) -> None:
        self.skill = skill

    @property
    def metadata(self) -> SkillMetadata:
        if self.skill is not None:
            return self.skill.metadata
        cls = type(self)
        doc = inspect.getdoc(cls) or ""
        return SkillMetadata(
            name=cls.name or _kebab(cls.__name__),
            description=cls.description or doc.split("\n\n")[0] or cls.__name__,
            version=cls.version,
            tags=list(cls.tags),
            requires_tools=list(cls.requires_tools),
            timeout=cls.timeout,
        )

    async def execute(self, ctx: SkillContext) -> SkillResult:
        """Do the work. Model-facing failures are ``SkillResult(success=False, …)``."""
        raise SkillExecutionError(f"{type(self).__name__} does not implement execute().")

    def can_handle(self, query: str) -> float:
        """How relevant this skill is to ``query`` (0.0–1.0): keyword overlap with the
        name, description and tags. Override for something smarter."""
        meta = self.metadata
        text = " ".join([meta.name.replace("-", " "), meta.description, *meta.tags])
        return keyword_score(query, text)

    @classmethod
    def to_skill(cls, *, folder: Path | None = None, body: str | None = None) -> Skill:
        """A registrable :class:`Skill` for this class (no SKILL.md needed)."""
        instance = cls()
        meta = instance.metadata
        where = folder or Path(inspect.getfile(cls)).resolve().parent
        skill = Skill(
            metadata=meta,
            folder=where,
            skill_md=where / "SKILL.md",
            source=SkillSource.REGISTERED,
            kind=SkillKind.CODE,
        ).with_body(body if body is not None else (inspect.getdoc(cls) or meta.description))
        instance.skill = skill
        bind_code_skill(skill, instance)
        return skill


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower().removesuffix("-skill") or name.lower()


# ---- instances registered in code ---------------------------------------------------

_BOUND: weakref.WeakKeyDictionary[Skill, CodeSkill] = weakref.WeakKeyDictionary()


def bind_code_skill(skill: Skill, instance: CodeSkill) -> None:
    """Attach an instance to ``skill``: a skill registered from code (already running
    in this process) needs no import and no trust decision."""
    _BOUND[skill] = instance


def bound_code_skill(skill: Skill) -> CodeSkill | None:
    """The instance bound to ``skill`` by :func:`bind_code_skill`, if any."""
    return _BOUND.get(skill)


def skill_class(module: ModuleType, path: Path) -> type[CodeSkill]:
    """The one CodeSkill subclass ``module`` (imported from ``path``) defines."""
    classes = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, CodeSkill)
        and obj is not CodeSkill
        and obj.__module__ == module.__name__
    ]
    if len(classes) != 1:
        names = ", ".join(c.__name__ for c in classes) or "none"
        raise SkillExecutionError(
            f"{path} must define exactly one CodeSkill subclass; found {len(classes)} ({names})."
        )
    return classes[0]


def module_name_for(name: str, digest: str) -> str:
    """A module name unique to a skill's name and content (an identifier)."""
    return f"_skilldeck_code_{re.sub(r'[^0-9a-zA-Z_]', '_', name)}_{digest[:16]}"
