"""One ``skilldeck run`` opens each config file once (issue 16: it was eight times).

Every open of a ``config.toml`` is counted, whichever way it is opened (``os.open``
— the settings reader and the trust decision — or ``open``/``Path.open``), while the
CLI's ``run`` command runs in this process with a scripted model.
"""

from __future__ import annotations

import builtins
import collections
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skilldeck.cli.main import build_app


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    real_os_open, real_open = os.open, builtins.open

    def count(path: Any) -> None:
        if isinstance(path, str | Path) and str(path).endswith("config.toml"):
            counts[os.path.realpath(path)] += 1

    def os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        count(path)
        return real_os_open(path, *args, **kwargs)

    def any_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        count(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", any_open)
    monkeypatch.setattr(io, "open", any_open)
    return counts


def test_one_run_reads_each_config_file_once(
    tmp_path: Path, skilldeck_home: Path, opened: collections.Counter[str]
) -> None:
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    user = skilldeck_home / "config.toml"
    user.write_text('[permissions]\nallow = ["Read"]\n', encoding="utf-8")
    ws = tmp_path / "ws"
    (ws / ".skilldeck").mkdir(parents=True)
    own = ws / ".skilldeck" / "config.toml"
    own.write_text('[permissions]\ndeny = ["WebFetch"]\n[agent]\nmax_turns = 5\n')
    script = tmp_path / "turns.jsonl"
    script.write_text(json.dumps({"text": "done"}) + "\n", encoding="utf-8")
    argv = ["run", "hello", "--model", f"scripted:{script}", "--cwd", str(ws), "--json"]
    opened.clear()
    result = CliRunner().invoke(build_app(argv), argv)
    assert result.exit_code == 0, result.output
    assert opened[os.path.realpath(user)] == 1
    assert opened[os.path.realpath(own)] == 1
