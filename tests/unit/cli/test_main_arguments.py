"""Command-line arguments that are not valid UTF-8 (src/skilldeck/cli/main.py)."""

from __future__ import annotations

import os
from pathlib import Path

from skilldeck.cli.main import _valid_arguments


def test_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    """Python hands undecodable argv bytes over as lone surrogates, which SQLite,
    JSON and tokenizers refuse; a task or a request gets U+FFFD instead."""
    assert _valid_arguments(["run", "\udcff hello", "--json"]) == ["run", "\ufffd hello", "--json"]
    assert _valid_arguments(["\ud800"]) == ["?"]  # a surrogate no byte decodes to


def test_an_argument_naming_an_existing_file_keeps_its_bytes(tmp_path: Path) -> None:
    odd = tmp_path / "skills\udcff"
    odd.mkdir()
    assert _valid_arguments(["--root", str(odd)]) == ["--root", str(odd)]
    assert os.fsencode(_valid_arguments([str(odd)])[0]).endswith(b"skills\xff")
