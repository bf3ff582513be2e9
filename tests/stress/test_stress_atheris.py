"""Optional: coverage-guided fuzzing with atheris, for a bounded time.

Skipped when atheris is not installed (it is not a dependency). The harness is
``atheris_skill_md.py``; it runs in a subprocess (libFuzzer exits the process when it
stops) seeded with the bundled skills and the hostile frontmatters of the unit tests.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import stress_helpers as H
from hardening_helpers import HOSTILE_FRONTMATTER, KNOWN_BUGS

from skilldeck.skills.discovery import bundled_root

pytest.importorskip("atheris")

SECONDS = H.scale(20, 300)
HARNESS = Path(__file__).with_name("atheris_skill_md.py")


@pytest.mark.timeout(SECONDS + 120)
def test_atheris_finds_no_crash(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for i, md in enumerate(sorted(bundled_root().rglob("SKILL.md"))):
        (seeds / f"bundled-{i}").write_bytes(md.read_bytes())
    for name, text in HOSTILE_FRONTMATTER.items():
        (seeds / f"hostile-{name}").write_bytes(f"---\n{text}---\nbody\n".encode())
    proc = subprocess.run(
        [sys.executable, str(HARNESS), f"-max_total_time={SECONDS}", "-timeout=20",
         "-rss_limit_mb=2048", "-max_len=65536", f"-artifact_prefix={tmp_path}/",
         str(seeds)],
        capture_output=True, text=True, timeout=SECONDS + 100, cwd=tmp_path,
        env={**os.environ, "SKILLDECK_FUZZ_KNOWN": "|".join(KNOWN_BUGS)},
    )  # fmt: skip
    runs = re.findall(r"#(\d+)\s+(?:DONE|pulse|NEW|REDUCE|INITED)", proc.stderr)
    count = max((int(r) for r in runs), default=0)
    H.add(fuzz_cases=count, fuzz_cases_atheris=count)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert count > 0, proc.stderr[-2000:]
