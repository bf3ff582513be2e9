"""The root app's tables (what ``--help`` lists without importing a command module,
and which module each ``skills`` command lives in) match what the modules register."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

import skilldeck
from skilldeck.cli import main
from skilldeck.cli.main import build_app


def _registered(module_name: str) -> dict[str, str | None]:
    """Command name → help, as ``module_name.register`` declares them."""
    app = typer.Typer()
    main._register(module_name, app)
    return {c.name or "": c.help for c in app.registered_commands}


def test_root_listing_matches_the_commands_modules() -> None:
    for name, (module_name, help_text) in main._ROOT_COMMANDS.items():
        assert _registered(module_name)[name] == help_text


@pytest.mark.parametrize("group", sorted(main._GROUP_COMMANDS))
def test_group_command_table_matches_the_modules(group: str) -> None:
    declared = {
        command: module_name
        for module_name in main._GROUPS[group][1]
        for command in _registered(module_name)
    }
    assert main._GROUP_COMMANDS[group] == declared


def test_help_lists_every_command_and_group() -> None:
    result = CliRunner().invoke(build_app(["--help"]), ["--help"])
    assert result.exit_code == 0
    for name in [*main._ROOT_COMMANDS, *main._GROUPS, "--version"]:
        assert name in result.output


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys\nfrom skilldeck.cli.main import main\nsys.argv=['skilldeck','--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.endswith('_cmd') or m == 'skilldeck.config'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_version_flag_prints_the_package_version() -> None:
    for flag in ("--version", "-V"):
        out = subprocess.run(
            [sys.executable, "-m", "skilldeck.cli.main", flag],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert out == f"skilldeck {skilldeck.__version__}\n"
    result = CliRunner().invoke(build_app(["--version"]), ["--version"])
    assert result.exit_code == 0 and skilldeck.__version__ in result.output


def test_version_matches_the_package_metadata() -> None:
    from importlib.metadata import version

    assert skilldeck.__version__ == version("skilldeck")
