"""The Python example in docs/agent.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "agent.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_agent_doc_examples_run() -> None:
    blocks = _BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert blocks
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {"__name__": "agent_doc"})
