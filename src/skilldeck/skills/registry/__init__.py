"""``SkillRegistry``: what is registered, versions and shadowing, enable/disable, and the
entries it reports.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.registry.entries import (
        EntryStatus,
        RefreshResult,
        Shadowing,
        SkillEntry,
        active_row,
    )
    from skilldeck.skills.registry.registry import SkillRegistry

_HOME: dict[str, str] = {
    "EntryStatus": "entries",
    "RefreshResult": "entries",
    "Shadowing": "entries",
    "SkillEntry": "entries",
    "SkillRegistry": "registry",
    "active_row": "entries",
}

__all__ = [
    "EntryStatus",
    "RefreshResult",
    "Shadowing",
    "SkillEntry",
    "SkillRegistry",
    "active_row",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
