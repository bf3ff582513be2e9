"""The untrusted-workspace warning leaves out the skill roots a command would not
read (``--no-defaults``), and only the warning: the trust decision is unchanged."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from skilldeck._trust_text import skill_roots_unread, untrusted_message, warn_if_ignored
from skilldeck.errors import ConfigWarning
from skilldeck.trust import assess_workspace


def _warned(ws: Path, home: Path) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_ignored(assess_workspace(ws, home), home)
    return [str(w.message) for w in caught if w.category is ConfigWarning]


@pytest.mark.usefixtures("untrusted_workspaces")
def test_skill_roots_drop_out_of_the_warning_only_while_unread(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".skilldeck" / "skills" / "planted").mkdir(parents=True)
    (ws / ".skilldeck" / "agents").mkdir()
    assert ".skilldeck/skills" in _warned(ws, home)[0]
    with skill_roots_unread():
        [message] = _warned(ws, home)
        assessment = assess_workspace(ws, home)
        assert not assessment.accepts(".skilldeck/skills")  # still not read
    assert ".skilldeck/skills" not in message and ".skilldeck/agents is ignored" in message
    assert ".skilldeck/skills" in _warned(ws, home)[0]  # the context ended


@pytest.mark.usefixtures("untrusted_workspaces")
def test_nothing_else_to_ignore_means_no_warning(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".claude" / "skills").mkdir(parents=True)
    assessment = assess_workspace(ws, home)
    assert untrusted_message(assessment, home) is not None
    assert untrusted_message(assessment, home, skill_roots=False) is None
    with skill_roots_unread():
        assert _warned(ws, home) == []
