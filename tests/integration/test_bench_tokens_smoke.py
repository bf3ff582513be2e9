"""``python -m bench tokens`` keeps running and keeps its promise: the compact profile's
first request is smaller than the default's, which is smaller than the old one that
sent the skills catalog twice. (Token counts, not timings.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

tokens = pytest.importorskip("bench.tokens")


def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> list[dict[str, Any]]:
    monkeypatch.setenv("SKILLDECK_HOME", str(tmp_path / "home"))  # restored after the test
    results = tmp_path / "tokens.json"
    assert tokens.main([*argv, "--results", str(results)]) == 0
    rows: list[dict[str, Any]] = json.loads(results.read_text(encoding="utf-8"))["rows"]
    return rows


def by_profile(rows: list[dict[str, Any]], catalog: str) -> dict[str, dict[str, Any]]:
    return {r["profile"]: r for r in rows if r["catalog"] == catalog}


def test_bundled_catalog_without_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = run(tmp_path, monkeypatch, "--corpus", str(tmp_path / "no-corpus"))
    assert "no corpus" in capsys.readouterr().out
    assert {r["catalog"] for r in rows} == {"bundled"}
    rows_of = by_profile(rows, "bundled")
    assert rows_of["compact"]["tokens"] < rows_of["default"]["tokens"] < rows_of["before"]["tokens"]
    assert rows_of["compact"]["tool_schema_bytes"] < rows_of["default"]["tool_schema_bytes"]
    assert rows_of["default"]["skills"] > 0


@pytest.mark.corpus
def test_corpus_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpus: Path) -> None:
    rows = run(tmp_path, monkeypatch, "--corpus", str(corpus), "--skills", "30")
    rows_of = by_profile(rows, "corpus-30")
    assert rows_of["default"]["skills"] >= 20
    assert rows_of["compact"]["tokens"] < rows_of["default"]["tokens"] < rows_of["before"]["tokens"]
