"""`pack` never destroys what ``-o`` points at by mistake (skills/packaging/package.py
``check_output``): the skill's own files, the signing key, a file that is not a package."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from skilldeck.errors import PackageError
from skilldeck.skills.packaging import keygen, pack


def _skill(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Says hello to whoever asks, for tests.\n---\nHi\n",
        encoding="utf-8",
    )
    return folder


def test_a_skill_file_may_go_inside_the_folder_and_nothing_else(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "demo")
    before = (skill / "SKILL.md").read_bytes()
    for output in (skill / "SKILL.md", skill / "notes.txt", skill / "demo.zip"):
        with pytest.raises(PackageError, match="inside the skill folder"):
            pack(skill, output=output)
    assert (skill / "SKILL.md").read_bytes() == before
    packed = pack(skill, output=skill)  # `cd demo && skilldeck skills pack .`
    assert packed == skill / "demo.skill"
    again = pack(skill, output=skill)
    with zipfile.ZipFile(again) as zf:
        assert not any(n.endswith(".skill") for n in zf.namelist())  # never packs itself


def test_the_signing_key_and_other_files_are_never_replaced(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "demo")
    key, _pub = keygen(tmp_path / "sign.key")
    secret = key.read_bytes()
    with pytest.raises(PackageError, match="is the signing key"):
        pack(skill, output=key, sign_key=key)
    notes = tmp_path / "notes.md"
    notes.write_text("important\n", encoding="utf-8")
    document = tmp_path / "report.docx"  # a zip, but no skill package
    with zipfile.ZipFile(document, "w") as zf:
        zf.writestr("word/document.xml", "<w/>")
    for output in (notes, document):
        with pytest.raises(PackageError, match="is not a skill package"):
            pack(skill, output=output)
    assert key.read_bytes() == secret and notes.read_text() == "important\n"
    assert zipfile.ZipFile(document).namelist() == ["word/document.xml"]


def test_an_earlier_package_is_replaced(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "demo")
    out = tmp_path / "demo.skill"
    assert pack(skill, output=out) == out
    assert pack(skill, output=out) == out and out.read_bytes()[:2] == b"PK"
