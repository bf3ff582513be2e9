"""``skilldeck skills list --json`` stays import-light (its start-up time budget)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("typer", "click", "rich", "pydantic", "pydantic_settings", "yaml")

RUN = """
import sys
sys.argv = ["skilldeck", *sys.argv[1:]]
from skilldeck.cli.main import main
try:
    main()
except SystemExit as e:
    code = e.code
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"code": code, "heavy": heavy}}), file=sys.stderr)
""".replace("import sys\n", "import json, sys\n", 1)


def run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[object, dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-c", RUN.format(heavy=HEAVY), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return json.loads(out.stdout), json.loads(out.stderr.strip().splitlines()[-1])


def test_warm_listing_imports_no_cli_or_model_framework(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    root = tmp_path / "skills"
    for name, extra in (("one", ""), ("two", "compatibility: Linux only\n"), ("three", "x: 1\n")):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Skill {name}.\n{extra}---\nBody\n", encoding="utf-8"
        )
    past = time.time() - 3600  # older than the snapshot's "racy" window
    for path in [*root.rglob("*"), root]:
        os.utime(path, (past, past))
    env = {**os.environ, "SKILLDECK_HOME": str(skilldeck_home), "HOME": str(tmp_path)}
    args = ["skills", "list", "--json", "--no-defaults", "--root", str(root)]
    cold_rows, cold = run(args, tmp_path, env)
    warm_rows, warm = run(args, tmp_path, env)
    assert cold["code"] == warm["code"] == 0
    assert warm_rows == cold_rows and [r["name"] for r in warm_rows] == ["one", "three", "two"]
    assert warm["heavy"] == []  # the snapshot answers: no YAML, no metadata model, no typer
    assert "typer" not in cold["heavy"] and "rich" not in cold["heavy"]
