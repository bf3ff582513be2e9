"""A plain ``Skill``: the model knows no snapshot encoding, and only the class
itself builds a Skill without ``__init__`` (issue 16, "a plain Skill")."""

from __future__ import annotations

import re
from pathlib import Path

import skilldeck
from skilldeck.skills.discovery._blob import SnapshotBlob, encode_stored
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource

SRC = Path(skilldeck.__file__).parent


def test_the_model_knows_no_marshal_or_snapshot_blob() -> None:
    for module in (SRC / "skills" / "model").glob("*.py"):
        text = module.read_text()
        assert "marshal" not in text, module
        assert "SnapshotBlob" not in text, module


def test_nothing_outside_skill_builds_one_without_init() -> None:
    pattern = re.compile(r"object\.__new__|_new_skill|__new__\(Skill\)")
    offenders = [
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if p != SRC / "skills" / "model" / "skill.py" and pattern.search(p.read_text())
    ]
    assert offenders == []


def test_a_stored_skill_decodes_its_fields_on_first_use(tmp_path: Path) -> None:
    md = tmp_path / "demo" / "SKILL.md"
    md.parent.mkdir()
    md.write_text("---\nname: demo\ndescription: d\n---\nbody\n")
    row = ["SD901", "rule", "a warning", "warning", 2, "="]
    blob = SnapshotBlob.in_memory(encode_stored({"name": "demo", "description": "d"}, [row]))
    [skill] = Skill._many_from_store(
        blob,
        [(str(md), "demo", 0, len(blob.chunk(0, 10**6)), 0, SkillKind.PROMPT)],
        source=SkillSource.ROOT,
        root=tmp_path,
    )
    assert skill.name == "demo" and skill.description == "d"
    assert skill.metadata.name == "demo"
    assert [d.code for d in skill.diagnostics] == ["SD901"]
    assert skill.folder == md.parent
    # facts only: being enabled or available is the registry's view, not the skill's
    assert not {"enabled", "unavailable_reason", "available"} & set(dir(skill))
