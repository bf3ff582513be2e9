"""``SkillRegistry``: what is registered, versions and shadowing, enable/disable, and the
entries it reports.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilldeck.skills.registry.entries import (
        active_row,
    )
    from skilldeck.skills.registry.registry import (
        EntryStatus,
        RefreshResult,
        Shadowing,
        SkillEntry,
        SkillRegistry,
    )

_HOME: dict[str, str] = {
    "EntryStatus": "registry",
    "RefreshResult": "registry",
    "Shadowing": "registry",
    "SkillEntry": "registry",
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
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
