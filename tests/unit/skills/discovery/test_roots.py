"""``Root`` behaves as the frozen dataclass it was: immutable (the dataclass's
``FrozenInstanceError``), equal and hashed by value, its ``repr``, pickled."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from skilldeck.skills.discovery import Root
from skilldeck.skills.model.skill import SkillSource


def test_root_is_a_frozen_value() -> None:
    root = Root(Path("/skills"), SkillSource.USER)
    assert root == Root(Path("/skills"), SkillSource.USER, explicit=False)
    assert root != Root(Path("/skills"), SkillSource.USER, explicit=True)
    assert len({root, Root(Path("/skills"), SkillSource.USER)}) == 1
    assert repr(root) == (
        "Root(path=PosixPath('/skills'), source=<SkillSource.USER: 'user'>, explicit=False)"
    )
    assert pickle.loads(pickle.dumps(root)) == root
    with pytest.raises(FrozenInstanceError):
        root.path = Path("/elsewhere")
    with pytest.raises(FrozenInstanceError):
        del root.explicit
    match root:
        case Root(path, source, explicit):
            assert (path, source, explicit) == (Path("/skills"), SkillSource.USER, False)
