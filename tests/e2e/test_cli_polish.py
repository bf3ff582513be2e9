"""The install/check/update/pin wording a QA pass found wanting, through the real CLI
at 80 columns: "(1 file)" kept whole, a pinned skill that says it is pinned, what a
content pin holds, a deleted skill that check reports and ``update --force`` restores."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import skilldeck

NARROW = {"COLUMNS": "80"}


def one_file_skill(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: A one-file skill for wording tests.\n---\n\nBody.\n",
        encoding="utf-8",
    )
    return folder


def test_one_file_is_singular_and_never_split_at_80_columns(tmp_path: Path) -> None:
    source = one_file_skill(tmp_path / "src" / "report-writer", "report-writer")
    ws = tmp_path / "a-workspace-with-a-rather-long-name" / "and-a-deep-folder"
    ws.mkdir(parents=True)
    done = skilldeck("skills", "install", str(source), cwd=ws, env=NARROW)
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("Installed")]
    assert "(1 file) → " in line and "files" not in line
    assert line.endswith(str(ws / ".skilldeck" / "skills" / "report-writer")), done.stdout
