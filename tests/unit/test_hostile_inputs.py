"""Hostile input found by a QA pass: each used to end in a traceback, to hang on a
special file or to destroy one; each is now a clear one-line error or handled.
(src/skilldeck/_atomic.py, cli/main.py, settings/layers.py, _trust_text.py,
skills/packaging/signing.py, llm/scripted.py, skills/routing/evals.py,
agent/store/session.py, cli/chat_input.py)"""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path

import pytest

import skilldeck.cli.main as cli_main
from skilldeck._atomic import atomic_write_text
from skilldeck._trust_text import settings_lines
from skilldeck.agent.store import SessionStore
from skilldeck.cli.chat_input import StdinReader
from skilldeck.errors import (
    ConfigError,
    ModelConfigError,
    PackageError,
    SessionNotFoundError,
    SkillError,
)
from skilldeck.llm.scripted import load_script
from skilldeck.settings.layers import parse_toml
from skilldeck.skills.packaging.signing import keygen
from skilldeck.skills.routing.evals import load_eval_file

DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_TOML = "a = " + "[" * 500 + "]" * 500


def test_a_fifo_or_a_device_is_never_replaced(tmp_path: Path) -> None:
    """``skills pack -o /dev/null`` renamed a zip over the device node."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        atomic_write_text(fifo, "x")
    assert fifo.is_fifo()
    with pytest.raises(IsADirectoryError):
        atomic_write_text(tmp_path, "x")


def test_a_symlink_is_replaced_never_written_through(tmp_path: Path) -> None:
    """A link a workspace plants (``config.toml -> ~/.bashrc``) must not redirect a
    write; the link itself is replaced, its target untouched."""
    (tmp_path / "target").write_text("keep", encoding="utf-8")
    link = tmp_path / "config.toml"
    link.symlink_to("target")
    atomic_write_text(link, "new")
    assert not link.is_symlink() and link.read_text(encoding="utf-8") == "new"
    assert (tmp_path / "target").read_text(encoding="utf-8") == "keep"
    devnull = tmp_path / "to-devnull"
    devnull.symlink_to(os.devnull)
    atomic_write_text(devnull, "x")
    assert not devnull.is_symlink() and Path(os.devnull).is_char_device()


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (OSError(errno.ENAMETOOLONG, "File name too long", "a" * 300), "File name too long: 'aaa"),
        (RecursionError(), "nested too deeply"),
    ],
)
def test_the_cli_turns_os_and_recursion_errors_into_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: Exception, line: str
) -> None:
    def dispatch(argv: list[str]) -> None:
        raise error

    monkeypatch.setattr(cli_main, "_dispatch", dispatch)
    monkeypatch.setattr("sys.argv", ["skilldeck", "skills", "validate", "x"])
    with pytest.raises(SystemExit) as exit_:
        cli_main.main()
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and line in err and err.count("\n") == 1 and len(err) < 200


def test_deeply_nested_files_are_clear_errors_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nested too deeply"):
        parse_toml(DEEP_TOML.encode(), tmp_path / "config.toml")
    assert settings_lines(DEEP_TOML.encode()) == [
        "(not valid TOML: values nested too deeply to read)"
    ]
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP_JSON, encoding="utf-8")
    with pytest.raises(SkillError, match=r"deep\.json is not valid JSON here: nested too deeply"):
        load_eval_file(deep, skill="x")
    script = tmp_path / "deep.jsonl"
    script.write_text(DEEP_JSON + "\n", encoding="utf-8")
    with pytest.raises(ModelConfigError, match=r"deep.jsonl:1: .*nested too deeply"):
        load_script(script)


@pytest.mark.parametrize("out", ["", ".", ".."])
def test_keygen_needs_a_file_name(tmp_path: Path, out: str) -> None:
    with pytest.raises(PackageError, match="names no file"):
        keygen(Path(out))


def test_text_that_is_not_valid_unicode_is_stored_as_replacement_characters(
    tmp_path: Path,
) -> None:
    """``skilldeck sessions show $'\\xff'`` and a chat line of such bytes reached
    SQLite, which refuses lone surrogates."""
    with SessionStore(tmp_path / "sessions.db") as store:
        record = store.create(model="m", agent="a", cwd="/tmp/d\udcff", task="\udcff hello")
        assert record.task == "\ufffd hello" and record.cwd == "/tmp/d\ufffd"
        with pytest.raises(SessionNotFoundError, match="No session"):
            store.resolve("\udcff")


@pytest.mark.anyio
async def test_a_chat_line_of_bytes_that_are_not_utf8_is_readable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("\udcff hi\n"))
    assert await StdinReader().read("> ") == "\ufffd hi"


def test_a_fifo_or_a_folder_as_the_scripted_model_file_is_an_error_not_a_hang(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "f.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(
        ModelConfigError, match=r"f\.jsonl is a FIFO \(named pipe\), not a regular file"
    ):
        load_script(fifo)
    (tmp_path / "d.jsonl").mkdir()
    with pytest.raises(ModelConfigError, match=r"d\.jsonl is a folder, not a regular file"):
        load_script(tmp_path / "d.jsonl")
