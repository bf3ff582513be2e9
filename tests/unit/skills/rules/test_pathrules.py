"""Path rules judge the resolved real path (deny: either spelling; allow: the real one),
on the input key the tool really uses, with a matcher that cannot backtrack."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilldeck.agent.permissions import PermissionPolicy, Verdict
from skilldeck.skills.rules import compile_matcher, path_argument, path_rule_matches


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    work = (tmp_path / "ws").resolve()
    (work / "secrets").mkdir(parents=True)
    (work / "secrets" / "key.txt").write_text("k\n", encoding="utf-8")
    (work / "docs").mkdir()
    (work / "link").symlink_to(work / "secrets")
    (work / "docs" / "cfg").symlink_to(work / ".git" / "config")
    return work


@pytest.mark.parametrize(
    "spelling",
    [
        "{ws}/link/key.txt",
        "/proc/self/root{ws}/secrets/key.txt",
        "{ws}/docs/../secrets/key.txt",
        "/proc/self/root/proc/self/root{ws}/link/key.txt",
    ],
)
def test_a_deny_rule_matches_every_spelling(ws: Path, spelling: str) -> None:
    target = Path(spelling.format(ws=ws))
    assert path_rule_matches("./secrets/**", target, ws, deny=True)
    assert path_rule_matches("secrets", target, ws, deny=True)


def test_proc_self_cwd_is_the_process_directory(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ws)
    assert path_rule_matches("./secrets/key.txt", Path("/proc/self/cwd/secrets/key.txt"), ws)
    pid_cwd = Path(f"/proc/{os.getpid()}/cwd/link/key.txt")
    assert path_rule_matches("./secrets/**", pid_cwd, ws)


def test_an_allow_rule_vouches_only_for_the_real_path(ws: Path) -> None:
    # docs/cfg is literally under docs/, but really .git/config
    assert not path_rule_matches("docs/**", ws / "docs" / "cfg", ws, deny=False)
    assert path_rule_matches("docs/**", ws / "docs" / "cfg", ws, deny=True)  # literal
    assert path_rule_matches(
        "./secrets/**", Path(f"/proc/self/root{ws}/secrets/key.txt"), ws, deny=False
    )


def test_the_gate_denies_symlink_and_proc_spellings(ws: Path) -> None:
    policy = PermissionPolicy.from_lists(
        mode="bypassPermissions", deny=["Read(./secrets/**)", "Edit(secrets/**)"]
    )
    for tool, key in (("Read", "file_path"), ("Write", "file_path"), ("Grep", "path")):
        for spelling in ("link/key.txt", f"/proc/self/root{ws}/secrets/key.txt", "link"):
            decision = policy.evaluate(tool, {key: spelling}, workspace=ws)
            assert decision.verdict is Verdict.DENY, (tool, spelling)


def test_a_search_is_judged_on_the_key_it_really_uses(ws: Path) -> None:
    # Grep searches `path` (default: the workspace), never `file_path`
    assert path_argument("Grep", {"file_path": "README.md"}, ws) == ws
    assert path_argument("Grep", {"path": "secrets", "file_path": "README.md"}, ws) == (
        ws / "secrets"
    )
    assert path_argument("Read", {"path": "README.md", "file_path": "secrets/k"}, ws) == (
        ws / "secrets/k"
    )
    policy = PermissionPolicy.from_lists(deny=["Read(./secrets/**)"])
    decision = policy.evaluate(
        "Grep", {"pattern": "x", "path": "secrets", "file_path": "README.md"}, workspace=ws
    )
    assert decision.verdict is Verdict.DENY


def test_rule_patterns_keep_their_gitignore_meaning(ws: Path) -> None:
    assert path_rule_matches("*.env", ws / "deep/dir/.env", ws)
    assert path_rule_matches("secrets/**", ws / "secrets", ws)
    assert not path_rule_matches("secrets/**", ws / "src/secrets/x", ws)  # anchored
    assert path_rule_matches("secrets", ws / "src/secrets/x", ws)  # no slash: any depth
    assert path_rule_matches("file[1].txt", ws / "file[1].txt", ws)  # [ is literal
    assert path_rule_matches("**", ws, ws)


def test_matcher_semantics() -> None:
    m = compile_matcher("src/**/*.{ts,tsx}")
    assert m.match("src/a.ts") and m.match("src/x/y/b.tsx") and not m.match("lib/a.ts")
    assert compile_matcher("**/**/**/*.py").match("a.py")
    assert compile_matcher("[a-c]?.md").match("bx.md") and not compile_matcher("[!a]*").match("ab")
    assert compile_matcher("secrets", braces=False).match_prefix("secrets/a/b")
    with pytest.raises(ValueError, match="alternatives"):
        compile_matcher("{a,b}" * 12)
