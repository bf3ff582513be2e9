"""``skilldeck trust`` and the one question ``chat`` / an interactive ``run`` ask."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from skilldeck.cli import workspace as cli_workspace
from skilldeck.cli.main import build_app
from skilldeck.trust import TrustState, assess_workspace, store_path

pytestmark = pytest.mark.usefixtures("untrusted_workspaces")


def cli(*argv: str) -> Result:
    return CliRunner().invoke(build_app(list(argv)), list(argv))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".skilldeck").mkdir(parents=True)
    (workspace / ".skilldeck" / "config.toml").write_text(
        '[permissions]\nallow = ["Bash"]\n', encoding="utf-8"
    )
    return workspace


def test_trust_shows_the_config_then_records_it(ws: Path, skilldeck_home: Path) -> None:
    result = cli("trust", str(ws))
    assert result.exit_code == 0, result.output
    assert '! permissions.allow = ["Bash"]' in result.output
    assert f"Trusted {ws}" in result.output
    assert assess_workspace(ws, skilldeck_home).state is TrustState.TRUSTED
    assert store_path(skilldeck_home).stat().st_mode & 0o777 == 0o600


def test_list_and_revoke(ws: Path, skilldeck_home: Path) -> None:
    assert cli("trust", str(ws)).exit_code == 0
    listed = cli("trust", "--list", "--json")
    assert [row["folder"] for row in json.loads(listed.output)] == [str(ws)]
    (ws / ".skilldeck" / "config.toml").write_text("model = 'a:b'\n", encoding="utf-8")
    assert "config changed since trusted" in cli("trust", "--list").output
    assert cli("trust", "--revoke", str(ws)).exit_code == 0
    again = cli("trust", "--revoke", str(ws))
    assert again.exit_code == 1 and "is not a trusted folder" in again.output
    assert json.loads(cli("trust", "--list", "--json").output) == []


def test_the_home_folder_is_refused(skilldeck_home: Path) -> None:
    result = cli("trust", str(Path.home()))
    assert result.exit_code == 1 and "does not trust / or your home folder" in result.output


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_question_trusts_on_yes(
    ws: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = Tty()
    monkeypatch.setattr("sys.stdin", Tty("y\n"))
    monkeypatch.setattr("sys.stderr", err)
    cli_workspace.offer_trust(ws)
    assert "Trust this folder?" in err.getvalue()
    assert '! permissions.allow = ["Bash"]' in err.getvalue()
    assert assess_workspace(ws, skilldeck_home).state is TrustState.TRUSTED


@pytest.mark.parametrize("answer", ["\n", "n\n", ""])
def test_the_question_defaults_to_no(
    ws: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    monkeypatch.setattr("sys.stdin", Tty(answer))
    monkeypatch.setattr("sys.stderr", Tty())
    cli_workspace.offer_trust(ws)
    assert not store_path(skilldeck_home).exists()


def test_no_question_without_a_terminal(
    ws: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = Tty()
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # piped: never asked
    monkeypatch.setattr("sys.stderr", err)
    cli_workspace.offer_trust(ws)
    assert err.getvalue() == "" and not store_path(skilldeck_home).exists()


def test_no_question_in_the_home_folder(
    skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Path.home()
    (home / ".claude" / "skills").mkdir(parents=True)
    monkeypatch.setenv("SKILLDECK_HOME", str(home / "elsewhere"))
    err = Tty()
    monkeypatch.setattr("sys.stdin", Tty("y\n"))
    monkeypatch.setattr("sys.stderr", err)
    cli_workspace.offer_trust(home)
    assert err.getvalue() == ""
