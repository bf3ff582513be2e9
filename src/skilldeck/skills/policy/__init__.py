"""Composing skill sets into a tool policy (most restrictive wins) and policy-aware
selection.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    pass

_HOME: dict[str, str] = {}

__all__ = []


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
