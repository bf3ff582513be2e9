"""What a ``Skill`` tool result carries: its text, capped at the agent's output limit
(a note says where the rest is), and the ``data`` the permission layer and the
interfaces read (the skill's kind, folder, ``allowed_tools``/``forbidden_tools``).

Kept apart from :mod:`.skill_tool` so the tool's module is about what it does with
a skill (load, run, search) and this one about how an outcome is written down.
"""

from __future__ import annotations

from typing import Any

from skilldeck.skills.execution import PLAN_REFUSAL
from skilldeck.skills.model import Skill
from skilldeck.tools.base import ToolResult

__all__ = ["args_given", "cap_text", "plan_refusal", "skill_result"]


def plan_refusal(skill: Skill, detail: str) -> ToolResult:
    """The refusal of a skill that would run code under a read-only gate."""
    return skill_result(skill, f"{PLAN_REFUSAL} ({detail}).", error=True, mode="refused")


def cap_text(text: str, limit: int, *, source: str | None = None) -> tuple[str, dict[str, Any]]:
    """``text`` cut to at most ``limit`` characters, note included, and what was cut
    (empty when nothing was). The note names ``source``, where the rest can be read."""
    if len(text) <= limit:
        return text, {}
    where = f" The rest is in {source}; read it with Read (offset/limit)." if source else ""

    def note(shown: int) -> str:
        return f"\n\n[Cut: {len(text):,} characters, the first {shown:,} shown.{where}]"

    shown = max(0, limit - len(note(limit)))
    return text[:shown] + note(shown), {"cut": True, "total_chars": len(text), "source": source}


def args_given(args: Any) -> bool:
    """Whether the model passed arguments (a blank string is none)."""
    return args is not None and not (isinstance(args, str) and not args.strip())


def skill_result(
    skill: Skill,
    content: str,
    *,
    mode: str,
    error: bool = False,
    warnings: list[str] | None = None,
    extra: dict[str, Any] | None = None,
    limit: int | None = None,
) -> ToolResult:
    """A result about ``skill``: ``mode`` says what happened (loaded, ran, refused,
    failed, already_loaded); ``limit`` caps ``content``."""
    if limit is not None and len(content) > limit:
        content, cut = cap_text(content, limit)
        extra = {**(extra or {}), **cut}
    data = {
        "skill": skill.name,
        "kind": skill.kind.value,
        "mode": mode,
        "folder": str(skill.folder),
        "allowed_tools": list(skill.metadata.allowed_tools),
        "forbidden_tools": list(skill.metadata.forbidden),
        "warnings": list(warnings or []),
        **(extra or {}),
    }
    return ToolResult(content=content, is_error=error, data=data)
