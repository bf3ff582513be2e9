"""Coverage-guided fuzzing of the SKILL.md parser and validator with atheris.

Run by ``test_stress_atheris.py`` (skipped when atheris is not installed; it is not a
dependency: ``pip install atheris``). Usable by hand too::

    python tests/stress/atheris_skill_md.py -max_total_time=300 SEED_DIR

Each input is written as a SKILL.md and run through ``parse_skill_md`` and
``load_skill`` (lenient and strict). Anything raised other than a ``SkilldeckError``
from ``parse_skill_md`` — or anything at all from ``load_skill`` — is a crash.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["skilldeck"]):
    from skilldeck.errors import SkilldeckError
    from skilldeck.skills.format import load_skill, parse_skill_md

FOLDER = Path(tempfile.mkdtemp(prefix="atheris-", dir=Path.cwd())) / "fuzz-skill"
FOLDER.mkdir()  # under the working directory, which the test makes a tmp folder
PATH = FOLDER / "SKILL.md"


#: signatures of known, already-reported crashes (``|``-separated): ignored, so the run
#: keeps searching for new ones instead of stopping at the first known one
KNOWN = [k for k in os.environ.get("SKILLDECK_FUZZ_KNOWN", "").split("|") if k]


def test_one_input(data: bytes) -> None:
    PATH.write_bytes(data)
    try:
        _check()
    except Exception as e:
        if not any(k in f"{type(e).__name__}: {e}" for k in KNOWN):
            raise


def _check() -> None:
    with contextlib.suppress(SkilldeckError):
        parse_skill_md(PATH)
    for strict in (False, True):
        skill, diagnostics = load_skill(PATH, strict=strict)
        if skill is None and not any(d.is_error for d in diagnostics):
            raise AssertionError("a skill was dropped without an error diagnostic")


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
