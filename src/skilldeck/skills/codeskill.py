"""Code skills: a ``skill.py`` holding one :class:`CodeSkill` subclass.

A code skill is for work that needs logic between tool calls — loops, parsing,
aggregation — rather than instructions for the model. It never touches the machine
directly: it asks ``ctx.tools`` (the same ``Read``/``Glob``/``Bash``… the model uses,
through the same permission checks) and, optionally, ``ctx.llm``::

    from skilldeck.skills.codeskill import CodeSkill, SkillContext, SkillResult

    class RepoStats(CodeSkill):
        async def execute(self, ctx: SkillContext) -> SkillResult:
            found = await ctx.tools.call("Glob", {"pattern": "**/*.py"})
            return SkillResult(success=not found.is_error, output=found.content)

``skills/`` must not import ``agent/``, ``tools/`` or ``llm/``, so what a code skill
receives is described here as small Protocols; the agent passes implementations.

**Loading is trust-on-install.** ``skill.py`` is imported only for an enabled skill
found in a configured root, every import is logged (path and SHA-256), and
``skills.code_skills`` decides: ``off`` refuses all code skills, ``audit`` (default)
refuses one whose AST audit (``skills/audit.py``) has findings unless its name is in
``skills.trusted``, ``on`` imports without auditing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import logging
import re
import sys
import weakref
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Protocol, runtime_checkable

import anyio

from skilldeck.config import Settings
from skilldeck.errors import SkillExecutionError, SkillUnavailableError
from skilldeck.skills.audit import Finding, audit_skill, python_files
from skilldeck.skills.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.spec import SkillMetadata

__all__ = [
    "CodeSkill",
    "LLMClient",
    "NoTools",
    "SkillContext",
    "SkillResult",
    "ToolDispatcher",
    "ToolOutcome",
    "bind_code_skill",
    "keyword_score",
    "load_code_skill",
    "run_code_skill",
]

log = logging.getLogger(__name__)

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


# ---- loading (trust-on-install) -----------------------------------------------------

_BOUND: weakref.WeakKeyDictionary[Skill, CodeSkill] = weakref.WeakKeyDictionary()
#: (resolved skill.py, mtime_ns, size) → the CodeSkill subclass it defined
_CLASS_CACHE: dict[tuple[str, int, int], type[CodeSkill]] = {}


def bind_code_skill(skill: Skill, instance: CodeSkill) -> None:
    """Attach an instance to ``skill`` (skills registered in code skip the import)."""
    _BOUND[skill] = instance


#: audit results by the (path, mtime, size) of every audited file: routing and the
#: Skill tool ask for the same skills again and again; a changed file re-audits
_AUDIT_CACHE: dict[tuple[tuple[str, int, int], ...], list[Finding]] = {}


def _audit(folder: Path) -> list[Finding]:
    key = tuple(
        (str(p), st.st_mtime_ns, st.st_size) for p in python_files(folder) for st in [p.stat()]
    )
    if key not in _AUDIT_CACHE:
        _AUDIT_CACHE[key] = audit_skill(folder)
    return _AUDIT_CACHE[key]


def check_trust(skill: Skill, *, settings: Settings) -> list[Finding]:
    """Apply ``skills.code_skills``; return the audit findings that were accepted."""
    mode = settings.skills.code_skills
    if mode == "off":
        raise SkillUnavailableError(
            skill.name, 'code skills are disabled (skills.code_skills = "off")'
        )
    if not skill.enabled:
        raise SkillUnavailableError(skill.name, "the skill is disabled")
    if mode == "on":
        return []
    findings = _audit(skill.folder)
    if findings and skill.name not in settings.skills.trusted:
        listed = "\n".join(f"  {f}" for f in findings[:20])
        raise SkillExecutionError(
            f"Code skill {skill.name!r} was not loaded: the audit found {len(findings)} "
            f"risky construct(s):\n{listed}\nReview {skill.folder / 'skill.py'}; if you trust "
            f'it, add {skill.name!r} to skills.trusted (or set skills.code_skills = "on").'
        )
    return findings


def load_code_skill(skill: Skill, *, settings: Settings) -> CodeSkill:
    """The CodeSkill instance for ``skill``: bound in code, or imported from skill.py."""
    bound = _BOUND.get(skill)
    if bound is not None:
        return bound
    path = skill.folder / "skill.py"
    if not path.is_file():
        raise SkillExecutionError(f"Skill {skill.name!r} has no skill.py in {skill.folder}.")
    accepted = check_trust(skill, settings=settings)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    cls = _CLASS_CACHE.get(key)
    if cls is None:
        cls = _import_skill_class(path, skill, trusted_findings=len(accepted))
        _CLASS_CACHE[key] = cls
    instance = cls(skill)
    _BOUND[skill] = instance
    return instance


def _import_skill_class(path: Path, skill: Skill, *, trusted_findings: int) -> type[CodeSkill]:
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    module_name = f"_skilldeck_code_{re.sub(r'[^0-9a-zA-Z_]', '_', skill.name)}_{digest[:12]}"
    log.info(
        "importing code skill %r from %s (sha256 %s, root %s, accepted audit findings: %d)",
        skill.name,
        path,
        digest,
        skill.root,
        trusted_findings,
    )
    module = _exec_module(module_name, path)
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


def _exec_module(module_name: str, path: Path) -> ModuleType:
    """Import ``path`` as a package-like module so ``from . import helpers`` works."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(
        module_name, path, submodule_search_locations=[str(path.parent)]
    )
    if spec is None or spec.loader is None:
        raise SkillExecutionError(f"Cannot import {path}.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(module_name, None)
        raise SkillExecutionError(
            f"Importing {path} failed: {type(e).__name__}: {e}. Fix the skill's code."
        ) from e
    return module


async def run_code_skill(instance: CodeSkill, ctx: SkillContext, *, timeout: float) -> SkillResult:
    """``execute`` with a deadline; a crash or a wrong return type becomes a failed
    SkillResult (with the exception logged), so a buggy skill cannot end a run."""
    name = instance.metadata.name
    try:
        with anyio.fail_after(timeout):
            result = await instance.execute(ctx)
    except TimeoutError:
        return SkillResult(
            success=False, error=f"Code skill {name!r} timed out after {timeout:g}s."
        )
    except SkillUnavailableError:
        raise
    except Exception as e:
        log.exception("code skill %r raised", name)
        return SkillResult(
            success=False, error=f"Code skill {name!r} raised {type(e).__name__}: {e}"
        )
    if not isinstance(result, SkillResult):
        return SkillResult(
            success=False,
            error=f"Code skill {name!r} returned {type(result).__name__}, not a SkillResult.",
        )
    return result
