"""``skills eval``'s catalog: a disabled skill the author names is held as if enabled
— in the router's index and in the level-1 block the model mode's agent is shown —
without touching the config; skills nobody named stay as configured."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from skilldeck.cli.skills.skills_eval_catalog import (
    catalog,
    disabled_targets,
    ignored_workspace_skill,
    ranked,
    split_unpickable,
    with_added_skill,
)
from skilldeck.errors import ConfigWarning, SkillError
from skilldeck.integrations.trigger_probe import probe_agent
from skilldeck.skills.routing import TriggerCase, compare_catalogs
from skilldeck.skills.routing import match as match_mod
from skilldeck.skills.routing._bm25f import F32


def write(root: Path, name: str, description: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "skills"
    write(base, "pdf-tools", "Extract text and tables from PDF files.")
    write(base, "mine", "Summarise meeting notes into action items.")
    write(base, "other", "Draft release notes from merged pull requests.")
    config = Path(os.environ["SKILLDECK_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[skills]\ndisabled = ["mine", "other"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return base


def test_named_disabled_skills_join_the_catalog_as_if_enabled(root: Path) -> None:
    current = catalog(["mine"], [root], True)
    registry = current.registry
    assert current.as_if_enabled == ["mine"]
    assert [s.name for s in registry.usable()] == ["mine", "pdf-tools"]  # not "other"
    assert registry.settings.skills.disabled == ["other"]
    config = Path(os.environ["SKILLDECK_HOME"]) / "config.toml"
    assert '"mine"' in config.read_text(encoding="utf-8")  # nothing written


def test_the_model_is_shown_the_named_skill(root: Path, tmp_path: Path) -> None:
    script = tmp_path / "model.jsonl"
    script.write_text('{"text": "ok"}\n', encoding="utf-8")
    registry = catalog([str(root / "mine")], [root], True).registry
    with probe_agent(registry.settings, registry, f"scripted:{script}") as agent:
        system = agent.system_prompt
        prompt = system("summarise my notes") if callable(system) else system
    assert "<name>mine</name>" in prompt and "<name>other</name>" not in prompt


def test_targets_name_disabled_skills_by_folder_file_or_name(root: Path) -> None:
    registry = catalog([], [root], True).registry
    evals = root / "mine" / "evals" / "trigger_evals.json"
    evals.parent.mkdir()
    evals.write_text("[]", encoding="utf-8")
    assert disabled_targets(registry, [str(root / "mine")]) == ["mine"]
    assert disabled_targets(registry, [str(evals)]) == ["mine"]
    assert disabled_targets(registry, ["mine", "other", "pdf-tools"]) == ["mine", "other"]
    assert disabled_targets(registry, [str(root / "pdf-tools"), "missing"]) == []


def test_unnamed_disabled_skills_are_not_run_and_say_how_to_evaluate_them(
    root: Path,
) -> None:
    registry = catalog([], [root], True).registry
    cases = [TriggerCase("other", "draft release notes", True)]
    kept, not_run = split_unpickable(registry, cases)
    assert kept == [] and [n.skill for n in not_run] == ["other"]
    assert not_run[0].reason.startswith("disabled in config; `skilldeck skills eval other`")


# ---- --coexist: the agent's ranking, a disabled name -----------------------------------


class BindingTopic:
    """A stand-in for the packaged embedder: binding pages together (the new skill and
    the request) points one way, everything else the other."""

    def embed(self, texts: Sequence[str]) -> F32:
        near = ("bind", "merge these")
        rows = [[1.0, 0.0] if any(w in t.lower() for w in near) else [0.0, 1.0] for t in texts]
        return np.asarray(rows, dtype=np.float32)


@pytest.fixture
def binder(tmp_path: Path) -> Path:
    return write(tmp_path / "new", "page-binder", "Bind loose pages together into one file.")


def lost_to_binder(root: Path, binder: Path) -> list[tuple[str, str | None]]:
    current = catalog([], [root], True)
    added = with_added_skill(current, binder)
    cases = [TriggerCase("pdf-tools", "merge these PDF documents", True)]
    result = compare_catalogs(
        ranked(current.registry),
        ranked(added.registry),
        added.skill.name,
        cases,
        threshold=0.05,
        budget=8000,
    )
    return [(r.skill, r.taken_by) for r in result.lost]


def test_coexist_ranks_with_embeddings_when_they_are_on(
    root: Path, binder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert lost_to_binder(root, binder) == []  # the suite's SKILLDECK_EMBEDDINGS=none
    monkeypatch.delenv("SKILLDECK_EMBEDDINGS", raising=False)
    monkeypatch.setattr(match_mod, "default_embedder", lambda _dir: BindingTopic())
    match_mod._INDEX_MEMO.clear()
    match_mod._MATCHER_MEMO.clear()
    assert lost_to_binder(root, binder) == [("pdf-tools", "page-binder")]


def test_a_new_skill_whose_name_is_disabled_is_added_as_if_enabled(
    root: Path, tmp_path: Path
) -> None:
    copy = write(tmp_path / "ns2", "mine", "Summarise meeting notes into action items.")
    added = with_added_skill(catalog([], [root], True), copy)
    assert added.was_disabled and added.skill.folder == copy
    assert added.registry.is_available(added.skill)
    assert "mine" not in added.registry.settings.skills.disabled
    assert "other" in added.registry.settings.skills.disabled  # the rest as configured


def test_a_folder_without_a_skill_says_so(root: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SkillError, match=r"has no SKILL\.md"):
        with_added_skill(catalog([], [root], True), empty)


# ---- a NAME only an untrusted workspace root holds -------------------------------------


def test_a_name_in_an_untrusted_workspace_root_joins_with_a_note(
    root: Path, tmp_path: Path, untrusted_workspaces: None
) -> None:
    own = write(tmp_path / ".skilldeck" / "skills", "my-skill", "Tidy up CSV headers.")
    with pytest.warns(ConfigWarning, match="not trusted"):
        current = catalog(["my-skill"], [root], False)
    assert current.untrusted_named == [own]
    assert current.registry.get("my-skill").folder == own
    # --no-defaults reads no workspace root, so a name is not looked up there either
    assert catalog(["my-skill"], [root], True).untrusted_named == []
    assert ignored_workspace_skill(current.registry.settings, "../skills/my-skill") is None


def test_a_trusted_workspace_needs_no_fallback(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_TRUST_WORKSPACE", "1")
    write(tmp_path / ".skilldeck" / "skills", "my-skill", "Tidy up CSV headers.")
    current = catalog(["my-skill"], [root], False)
    assert current.untrusted_named == []
    assert "my-skill" in current.registry


def test_a_failed_request_keeps_a_long_skill_name_whole_when_the_line_has_room() -> None:
    """ "sharepoint-list-insights-automation (should trigger) -> (none)" fits in 78
    columns; the name used to be cut at 20 characters whatever the room."""
    from skilldeck.cli.skills.skills_eval_cmd import report_lines
    from skilldeck.skills.routing.evals import CaseResult, TriggerCase, build_report

    name = "sharepoint-list-insights-automation"
    failed = CaseResult(TriggerCase(name, "build an insights report", True), (None,))
    lines = report_lines(build_report("router", 1, [failed]), threshold=0.35)
    line = next(line for line in lines if "(should trigger)" in line)
    assert line == f"  {name} (should trigger) -> (none)"
    assert max(len(line) for line in lines) <= 80
