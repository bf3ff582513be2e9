"""docs/security.md cannot rot: every test it cites exists, and every known gap pinned
by a strict xfail in the hardening tests is listed in its "Known gaps" table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "security.md"
#: `tests/a/b.py::test_x`, `b.py::test_x`, `::test_y` (same file as the previous one), `b.py`
_REF = re.compile(r"`((?:[\w/.-]+\.py)?)(?:::(\w+))?`")


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _resolve(name: str) -> Path:
    if "/" in name:
        return REPO / name
    found = [p for p in (REPO / "tests").rglob(name) if p.is_file()]
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def _references() -> list[tuple[Path, str | None, int]]:
    refs: list[tuple[Path, str | None, int]] = []
    current: Path | None = None
    for lineno, line in enumerate(DOC.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.startswith("|"):
            continue
        for cell in line.split("|"):
            for file, func in _REF.findall(cell):
                if not file and not func:
                    continue
                if file:
                    if not Path(file).name.startswith("test_"):
                        continue  # a source module, e.g. `skills/unpack.py`
                    current = _resolve(file)
                    if not func:
                        refs.append((current, None, lineno))
                        continue
                assert current is not None, f"line {lineno}: `::{func}` without a file before it"
                refs.append((current, func, lineno))
    return refs


def test_every_cited_test_exists() -> None:
    refs = _references()
    assert len(refs) > 80
    missing = []
    for path, func, lineno in refs:
        if not path.is_file():
            missing.append(f"line {lineno}: {path.relative_to(REPO)} does not exist")
        elif func and func not in _test_functions(path):
            missing.append(f"line {lineno}: {path.relative_to(REPO)}::{func} does not exist")
    assert not missing, "\n".join(missing)


def test_every_strict_xfail_is_a_listed_gap() -> None:
    gaps = DOC.read_text(encoding="utf-8").split("### Known gaps", 1)[1].split("###", 1)[0]
    unlisted = []
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            marks = [ast.unparse(d) for d in node.decorator_list]
            if any("xfail" in m and "strict=True" in m for m in marks) and node.name not in gaps:
                unlisted.append(f"{path.name}::{node.name}")
    assert not unlisted, unlisted
