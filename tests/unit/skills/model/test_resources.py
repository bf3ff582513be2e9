"""Level-3 reads (skills/model/resources.py): a path the system cannot open is a
ResourceAccessError naming the skill and the path, never a bare OSError (MCP showed
"Error executing tool" and logged a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.errors import ResourceAccessError
from skilldeck.skills.model.resources import read_resource


@pytest.mark.parametrize("relative", ["a" * 300, "a/" * 5000])
def test_a_path_too_long_is_a_resource_error(tmp_path: Path, relative: str) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: echo\ndescription: d\n---\n")
    with pytest.raises(ResourceAccessError, match=r"Skill 'echo': cannot read 'a.*…'"):
        read_resource(tmp_path, "echo", relative)


def test_a_missing_file_lists_what_there_is(tmp_path: Path) -> None:
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "guide.md").write_text("# Guide\n")
    with pytest.raises(ResourceAccessError, match=r"has no file 'nope\.md'.*references/guide\.md"):
        read_resource(tmp_path, "echo", "nope.md")
    assert read_resource(tmp_path, "echo", "references/guide.md") == "# Guide\n"
