"""Packages split into subpackages: old module paths that still import, and the lazy
half of every subpackage facade.

``redirect_moved_modules("skilldeck.agent", {"session": "store"})`` makes
``import skilldeck.agent.store.session`` hand back ``skilldeck.agent.store.session`` itself
(one module object under both names), with a DeprecationWarning naming the new path.
Used by the ``__init__`` of each split package, so code written against an earlier
release keeps working while ours imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from collections.abc import Mapping, MutableMapping, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

__all__ = ["load_attribute", "redirect_moved_modules"]


class _MovedModuleFinder:
    """Resolve ``<package>.<old>`` to ``<package>.<sub>.<old>`` for one package.

    A finder and loader by protocol (``find_spec``, ``create_module``,
    ``exec_module``), not by subclassing ``importlib.abc``: that module imports
    ``importlib.resources`` (tempfile, shutil, lzma…), which every command would pay
    for at start-up (``python -m bench startup``).
    """

    def __init__(self, package: str, moved: Mapping[str, str]) -> None:
        self.package = package
        self.moved = dict(moved)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        prefix, _, leaf = fullname.rpartition(".")
        if prefix != self.package or leaf not in self.moved or leaf == self.moved[leaf]:
            return None
        return importlib.util.spec_from_loader(fullname, self)  # type: ignore[arg-type]  # by protocol

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        leaf = spec.name.rpartition(".")[2]
        new_name = f"{self.package}.{self.moved[leaf]}.{leaf}"
        warnings.warn(
            f"{spec.name} moved to {new_name}; import it (or its subpackage) from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new_name)

    def exec_module(self, module: ModuleType) -> None:
        """The moved module is already executed."""


def redirect_moved_modules(package: str, moved: Mapping[str, str]) -> None:
    """Install (once) the finder that maps ``package``'s old flat module names."""
    if not any(isinstance(f, _MovedModuleFinder) and f.package == package for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder(package, moved))


def load_attribute(
    package: str, homes: Mapping[str, str], name: str, namespace: MutableMapping[str, Any]
) -> Any:
    """A facade's ``__getattr__``: ``name`` from ``package.<homes[name]>``, cached in
    ``namespace`` (the facade's globals), so importing a facade costs nothing and a
    command that uses one name never imports its siblings (``python -m bench
    startup``); an unknown name is the AttributeError Python expects."""
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{package}.{home}"), name)
    namespace[name] = value
    return value
