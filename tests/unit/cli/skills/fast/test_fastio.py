"""The fast paths' shared output (cli/skills/fast/fastio.py), which every --json uses."""

from __future__ import annotations

import json
import math

from skilldeck.cli.skills.fast.fastio import json_text


def test_json_output_is_strict_json_even_for_nan_and_infinity() -> None:
    data = {"v": math.nan, "rows": [1.5, math.inf, {"x": -math.inf}], "p": "ok"}
    text = json_text(data, indent=2)
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"v": None, "rows": [1.5, None, {"x": None}], "p": "ok"}
    assert json_text({"a": 1}) == '{"a": 1}'
