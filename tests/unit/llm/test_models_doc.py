"""The scripted-model example in docs/models.md runs as written (the other blocks
there need a model server). It is also mypy --strict clean: it narrows the
``Message`` union before reading ``content`` (checked by hand; mypy is too slow here)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "models.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_the_scripted_model_example_runs() -> None:
    blocks = [b for b in _BLOCK.findall(DOC.read_text(encoding="utf-8")) if "ScriptedModel" in b]
    assert len(blocks) == 1
    (block,) = blocks
    assert "isinstance(last, UserMessage)" in block  # narrowed: AssistantMessage has no content
    exec(compile(block, str(DOC), "exec"), {"__name__": "models_doc"})
