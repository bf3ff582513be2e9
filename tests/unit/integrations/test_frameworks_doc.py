"""The runnable examples in docs/frameworks.md run (``python live`` blocks need an API key)."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import tempfile
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "frameworks.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_framework_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    if importlib.util.find_spec("pydantic_ai") is None:  # the optional extra is absent
        blocks = [b for b in blocks if "pydantic_ai" not in b]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    namespace: dict[str, object] = {"__name__": "frameworks_doc"}
    # Pydantic AI's run_sync runs on the current event loop (creating one if there is
    # none) and never closes it; anyio.run (the toolkits' dispatch_sync) unsets it.
    loop = asyncio.new_event_loop()
    try:
        for block in blocks:
            asyncio.set_event_loop(loop)
            exec(compile(block, str(DOC), "exec"), namespace)
    finally:
        asyncio.set_event_loop(None)
        loop.close()
