"""The fetch progress display: a status line on stderr when it is a terminal, nothing
(no control codes) when it is a pipe."""

from __future__ import annotations

import io

import pytest

from skilldeck.cli.skills import skills_pkg_cmd


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_display_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())
    with skills_pkg_cmd.cli_reporter() as reporter:
        assert reporter is None


def test_steps_update_one_status_line_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    updates: list[str] = []

    class _Status:
        def __enter__(self) -> _Status:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def update(self, text: str) -> None:
            updates.append(text)

    class _Console:
        def status(self, text: str) -> _Status:
            return _Status()

    monkeypatch.setattr("sys.stderr", _Tty())
    monkeypatch.setattr(skills_pkg_cmd, "stderr_console", _Console)
    with skills_pkg_cmd.cli_reporter() as reporter:
        assert reporter is not None
        reporter.step("fetching https://example.com/x.git at 0123abcd")
    assert updates == ["fetching https://example.com/x.git at 0123abcd…"]
