"""Remote skill sources: install from git, a URL or a skills index; check, update, pin.

The one place in ``skills/`` that reaches the network — through the ``git`` command
(guarded: :mod:`skilldeck._gitguard`) and an ``httpx2`` client whose transport the
caller can inject (:class:`FetchOptions`), every step with a timeout. What is fetched
lands in a temp dir and goes through the one install flow
(:func:`skilldeck.skills.packaging.package.install`): the same safety checks, the
same lock file, which also records each remote skill's origin (source, requested
ref, resolved commit, content hash), so ``check_updates`` / ``update`` / ``pin``
know where to look.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.sources.installer import Choice, install_from, list_source
    from skilldeck.skills.sources.resolve import Candidate
    from skilldeck.skills.sources.spec import FetchOptions, Reporter, SourceSpec, parse_source
    from skilldeck.skills.sources.updatecheck import UpdateStatus, check_updates
    from skilldeck.skills.sources.updates import UpdateResult, pin, update

_HOME: dict[str, str] = {
    "Candidate": "resolve",
    "Choice": "installer",
    "FetchOptions": "spec",
    "Reporter": "spec",
    "SourceSpec": "spec",
    "UpdateResult": "updates",
    "UpdateStatus": "updatecheck",
    "check_updates": "updatecheck",
    "install_from": "installer",
    "list_source": "installer",
    "parse_source": "spec",
    "pin": "updates",
    "update": "updates",
}

__all__ = [
    "Candidate",
    "Choice",
    "FetchOptions",
    "Reporter",
    "SourceSpec",
    "UpdateResult",
    "UpdateStatus",
    "check_updates",
    "install_from",
    "list_source",
    "parse_source",
    "pin",
    "update",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
