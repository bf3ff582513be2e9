"""The registry's records behave as the frozen dataclasses they were: built by
position or keyword, immutable, equal and hashed by value, the same repr, pickled,
matched by position."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from skilldeck.skills.model.skill import SkillSource
from skilldeck.skills.registry.entries import EntryStatus, RefreshResult, SkillEntry


def _entry(**changes: object) -> SkillEntry:
    fields: dict[str, object] = {
        "name": "a",
        "status": EntryStatus.INVALID,
        "source": SkillSource.USER,
        "folder": Path("/s/a"),
        "skill_md": Path("/s/a/SKILL.md"),
    }
    return SkillEntry(**{**fields, **changes})  # type: ignore[arg-type]


def test_defaults_and_value_semantics() -> None:
    entry = _entry()
    assert (entry.skill, entry.shadowed_by, entry.reason, entry.diagnostics, entry.enabled) == (
        None,
        None,
        None,
        (),
        None,
    )
    assert entry == _entry() and hash(entry) == hash(_entry())
    assert entry != _entry(reason="x")
    assert entry.__eq__(object()) is NotImplemented
    assert {entry, _entry()} == {entry}


def test_immutable() -> None:
    entry = _entry()
    with pytest.raises(FrozenInstanceError):
        entry.name = "b"
    with pytest.raises(FrozenInstanceError):
        del entry.reason
    with pytest.raises(AttributeError):
        entry.extra = 1


def test_repr_pickle_copy_match() -> None:
    entry = _entry(enabled=False)
    assert repr(entry) == (
        "SkillEntry(name='a', status=<EntryStatus.INVALID: 'invalid'>, "
        "source=<SkillSource.USER: 'user'>, folder=PosixPath('/s/a'), "
        "skill_md=PosixPath('/s/a/SKILL.md'), skill=None, shadowed_by=None, reason=None, "
        "diagnostics=(), enabled=False)"
    )
    assert pickle.loads(pickle.dumps(entry)) == entry
    assert copy.copy(entry) == entry
    match entry:
        case SkillEntry(name, status):
            assert (name, status) == ("a", EntryStatus.INVALID)
        case _:  # pragma: no cover
            pytest.fail("no positional match")


def test_refresh_result() -> None:
    result = RefreshResult(["a"], [], [])
    assert result.any and not RefreshResult([], [], []).any
    assert result == RefreshResult(added=["a"], changed=[], removed=[])
    assert repr(result) == "RefreshResult(added=['a'], changed=[], removed=[])"
    with pytest.raises(TypeError):
        hash(result)  # lists: unhashable, as with the dataclass
