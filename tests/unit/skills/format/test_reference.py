"""skills/format/reference/: loaded only by strict validation and the compat layer, and
part of the code stamp that drops discovery snapshots when the code changes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from skilldeck.skills.discovery import cache
from skilldeck.skills.format import reference

SKILL_MD = "---\nname: demo\ndescription: A demo skill. Use it in tests.\n---\n\n# Demo\n"
PROBE = """
import sys
from pathlib import Path
from skilldeck.skills.format import validate_path
[report] = validate_path(Path(sys.argv[1]), strict=sys.argv[2] == "strict")
assert report.valid, report.to_dict()
print(sorted(m for m in sys.modules if m.startswith("skilldeck.skills.format.reference.")))
"""


def loaded_reference_modules(folder: Path, mode: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout.strip()


def test_plain_validation_does_not_import_the_reference_reader(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    assert loaded_reference_modules(folder, "lenient") == "[]"
    strict = loaded_reference_modules(folder, "strict")
    assert "skilldeck.skills.format.reference._refcheck" in strict
    assert "skilldeck.skills.format.reference._refyaml" in strict


def test_the_facade_gives_strictyaml_values_and_errors() -> None:
    assert reference.load_reference_yaml("a: 1\nb:\n  - x\n") == {"a": "1", "b": ["x"]}
    try:
        reference.load_reference_yaml("a: [1, 2]\n", delegate=False)
    except reference.ReferenceYAMLError as e:
        assert "Found ugly disallowed JSONesque flow mapping" in str(e)
        assert e.line == 0
    else:  # pragma: no cover - the assertion below explains
        raise AssertionError("a flow sequence must be refused")


def test_every_format_folder_is_in_the_snapshot_code_stamp() -> None:
    """An edited strict check must drop strict snapshots, as before the split."""
    format_dir = Path(reference.__file__).resolve().parents[1]
    folders = {
        p.parent.relative_to(format_dir.parent).as_posix()
        for p in format_dir.rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert folders <= set(cache._STAMPED_PACKAGES)
