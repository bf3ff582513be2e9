"""docs/agent.md states the loop guard's defaults as the code has them: the `stuck`
row of the status table, the prose and the TOML example (a reader took the row's exit
code for the default once: the row now names the default itself)."""

from __future__ import annotations

import re
from pathlib import Path

from skilldeck.settings.model import AgentSettings

DOC = Path(__file__).resolve().parents[3] / "docs" / "agent.md"


def test_every_stated_loop_guard_default_is_the_codes() -> None:
    text = DOC.read_text(encoding="utf-8")
    defaults = AgentSettings()
    for name in ("repeat_warn_after", "repeat_stop_after"):
        want = str(getattr(defaults, name))
        stated = re.findall(rf"`agent\.{name}`[^|\n]*?\(default (\d+)", text)
        stated += re.findall(rf"^{name} = (\d+)", text, flags=re.M)
        assert stated and set(stated) == {want}, (name, stated)
    (row,) = [line for line in text.splitlines() if line.startswith("| `stuck` |")]
    assert f"default {defaults.repeat_stop_after}" in row
