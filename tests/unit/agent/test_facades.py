"""The agent's subpackage facades: every public name loads from its home module, and
no name hides a submodule (``from pkg import name`` must not hand back a module)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

FACADES = [
    "skilldeck.agent.assembly",
    "skilldeck.agent.permissions",
    "skilldeck.agent.run",
    "skilldeck.agent.store",
    "skilldeck.agent.subagents",
]


@pytest.mark.parametrize("facade", FACADES)
def test_every_public_name_is_the_object_at_its_home(facade: str) -> None:
    package = importlib.import_module(facade)
    homes: dict[str, str] = package._HOME
    assert sorted(package.__all__) == sorted(homes), "__all__ and _HOME must list the same names"
    for name in package.__all__:
        home = importlib.import_module(f"{facade}.{homes[name]}")
        assert getattr(package, name) is getattr(home, name), f"{facade}.{name}"


@pytest.mark.parametrize("facade", FACADES)
def test_no_public_name_is_also_a_submodule(facade: str) -> None:
    package = importlib.import_module(facade)
    submodules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert not submodules & set(package.__all__)
