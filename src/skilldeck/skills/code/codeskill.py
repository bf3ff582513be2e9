"""Code skills: a ``skill.py`` holding one :class:`CodeSkill` subclass.

A code skill is for work that needs logic between tool calls — loops, parsing,
aggregation — rather than instructions for the model. It never touches the machine
directly: it asks ``ctx.tools`` (the same ``Read``/``Glob``/``Bash``… the model uses,
through the same permission checks) and, optionally, ``ctx.llm``::

    from skilldeck.skills.code.codeskill import CodeSkill, SkillContext, SkillResult

    class RepoStats(CodeSkill):
        async def execute(self, ctx: SkillContext) -> SkillResult:
            found = await ctx.tools.call("Glob", {"pattern": "**/*.py"})
            return SkillResult(success=not found.is_error, output=found.content)

``skills/`` must not import ``agent/``, ``tools/`` or ``llm/``, so what a code skill
receives is described as small Protocols (``skills/code/codeapi.py``, re-exported here);
the agent passes implementations.

**Where the code runs is decided by content, not by name** (``skills/code/codetrust.py``):
the skill folder's ``.py`` files are read once into a snapshot and hashed. A bundled
skill of the installed package, or one whose SHA-256 the user recorded with
``skilldeck skills trust NAME``, is imported *in process* from that snapshot (source
only, never bytecode: ``skills/code/_srcimport.py``). Every other code skill runs *out of
process*, in the sandbox, with ``ctx.tools``/``ctx.llm`` proxied back through the
same gate (``skills/code/codehost.py``). ``skills.code_skills``: ``"off"`` refuses every
code skill; ``"sandboxed"`` (default) is the above; ``"audit"`` and ``"on"`` are
older names for ``"sandboxed"`` — no setting runs untrusted code in process. The AST
audit (``skills/code/audit.py``) is advice: its findings are logged and attached to the
result, they decide nothing. Every in-process import is logged with the digest.
"""

from __future__ import annotations

import logging

import anyio

from skilldeck.config import Settings
from skilldeck.errors import SkillExecutionError, SkillUnavailableError
from skilldeck.sandbox import Sandbox
from skilldeck.skills.code._srcimport import SourceSnapshot, import_snapshot, snapshot_code
from skilldeck.skills.code.audit import Finding, audit_skill
from skilldeck.skills.code.codeapi import (
    CodeSkill,
    LLMClient,
    NoTools,
    SkillContext,
    SkillResult,
    ToolDispatcher,
    ToolOutcome,
    bind_code_skill,
    bound_code_skill,
    keyword_score,
    module_name_for,
    skill_class,
)
from skilldeck.skills.code.codehost import IsolatedCodeSkill
from skilldeck.skills.code.codetrust import Placement, placement
from skilldeck.skills.model.skill import Skill

__all__ = [
    "CodeSkill",
    "LLMClient",
    "NoTools",
    "SkillContext",
    "SkillResult",
    "ToolDispatcher",
    "ToolOutcome",
    "bind_code_skill",
    "check_trust",
    "keyword_score",
    "load_code_skill",
    "run_code_skill",
]

log = logging.getLogger(__name__)


# ---- loading ----------------------------------------------------------------------

#: content digest → the CodeSkill subclass imported from it (in process)
_CLASS_CACHE: dict[str, type[CodeSkill]] = {}
#: audit results by content digest (routing asks for the same skills again and again)
_AUDIT_CACHE: dict[str, list[Finding]] = {}


def _audit(snapshot: SourceSnapshot) -> list[Finding]:
    if snapshot.digest not in _AUDIT_CACHE:
        _AUDIT_CACHE[snapshot.digest] = audit_skill(snapshot.folder, include_scripts=True)
    return _AUDIT_CACHE[snapshot.digest]


def check_trust(skill: Skill, *, settings: Settings) -> tuple[SourceSnapshot, Placement]:
    """Apply ``skills.code_skills`` and decide where ``skill`` runs; refuse a folder
    that cannot be snapshotted (bytecode without source…). A disabled skill never
    gets here: the registry refuses it (``SkillRegistry.get``) and leaves it out of
    ``list()``, which the Skill tool and the matcher read."""
    if settings.skills.code_skills == "off":
        raise SkillUnavailableError(
            skill.name, 'code skills are disabled (skills.code_skills = "off")'
        )
    if not (skill.folder / "skill.py").is_file():
        raise SkillExecutionError(f"Skill {skill.name!r} has no skill.py in {skill.folder}.")
    snapshot = snapshot_code(skill.folder)
    if "skill.py" not in snapshot.files:
        raise SkillExecutionError(f"Skill {skill.name!r} has no skill.py in {skill.folder}.")
    return snapshot, placement(skill, snapshot, settings)


def load_code_skill(
    skill: Skill, *, settings: Settings, sandbox: Sandbox | None = None
) -> CodeSkill:
    """The CodeSkill for ``skill``: bound in code, imported in process when trusted by
    content, else an :class:`IsolatedCodeSkill` that runs it out of process."""
    bound = bound_code_skill(skill)
    if bound is not None:
        return bound
    snapshot, where = check_trust(skill, settings=settings)
    findings = _audit(snapshot)
    if findings:
        log.warning(
            "code skill %r: the audit (advice only) found %d risky construct(s), first: %s",
            skill.name,
            len(findings),
            findings[0],
        )
    if not where.in_process:
        log.info("code skill %r: %s", skill.name, where.reason)
        return IsolatedCodeSkill(skill, settings=settings, sandbox=sandbox, findings=findings)
    cls = _CLASS_CACHE.get(snapshot.digest)
    if cls is None:
        log.info(
            "importing code skill %r in process from %s (sha256 %s, root %s; %s; audit "
            "findings: %d; ignored bytecode: %d)",
            skill.name,
            snapshot.folder,
            snapshot.digest,
            skill.root,
            where.reason,
            len(findings),
            len(snapshot.ignored),
        )
        module = import_snapshot(snapshot, module_name_for(skill.name, snapshot.digest))
        cls = _CLASS_CACHE[snapshot.digest] = skill_class(module, snapshot.folder / "skill.py")
    instance = cls(skill)
    bind_code_skill(skill, instance)
    return instance


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
