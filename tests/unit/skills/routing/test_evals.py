"""Trigger eval sets: the formats read, the router's picks, the report's figures and
what a new skill would cost the catalog (``skills/routing/evals.py``, ``coexist.py``)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from skilldeck.errors import EvalWarning, SkillError
from skilldeck.skills.format import load_skill, new_skill
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.routing import SkillMatcher
from skilldeck.skills.routing.coexist import block_fit, coexistence
from skilldeck.skills.routing.evals import (
    EVAL_FILES,
    CaseResult,
    TriggerCase,
    build_report,
    find_eval_file,
    load_eval_file,
    router_picker,
    router_results,
    run_picker,
)

CATALOG = {
    "pdf-tools": "Extract text and tables from PDF files, fill PDF forms, merge PDF documents.",
    "git-commit": "Write conventional commit messages for staged git changes.",
    "slack-gif-creator": "Create animated GIFs sized for Slack emoji and messages.",
    "invoice-chase": "Follow up politely with customers about unpaid invoices they owe.",
}


def write_skill(root: Path, name: str, description: str, extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n",
        encoding="utf-8",
    )
    return folder


def loaded(folder: Path) -> Skill:
    skill, diagnostics = load_skill(folder)
    assert skill is not None, diagnostics
    return skill


def skills(tmp_path: Path, catalog: dict[str, str] = CATALOG) -> list[Skill]:
    return [loaded(write_skill(tmp_path, n, d)) for n, d in catalog.items()]


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ---- formats ----------------------------------------------------------------------------


def test_skill_creator_list_format(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "e.json",
        [
            {"query": " merge two PDFs ", "should_trigger": True},
            {"query": "hi", "should_trigger": False},
        ],
    )
    assert load_eval_file(path, skill="pdf-tools") == [
        TriggerCase("pdf-tools", "merge two PDFs", True),
        TriggerCase("pdf-tools", "hi", False),
    ]


def test_evals_object_with_prompt_and_output_evals_count_as_positive(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "evals.json",
        {
            "skill_name": "pdf-tools",
            "evals": [
                {"id": 1, "prompt": "fill this PDF form", "expected_output": "a filled form"},
                {"prompt": "tell a joke", "should_trigger": False},
            ],
        },
    )
    cases = load_eval_file(path)
    assert [(c.skill, c.query, c.should_trigger) for c in cases] == [
        ("pdf-tools", "fill this PDF form", True),
        ("pdf-tools", "tell a joke", False),
    ]


def test_a_stale_skill_name_is_a_warning_and_the_folders_skill_wins(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "evals.json",
        {"skill_name": "old-name", "evals": [{"query": "fill this PDF form"}]},
    )
    with pytest.warns(EvalWarning, match="skill_name 'old-name' is not the skill 'pdf-tools'"):
        cases = load_eval_file(path, skill="pdf-tools")
    assert [c.skill for c in cases] == ["pdf-tools"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_eval_file(path, skill="old-name")[0].skill == "old-name"


def test_suite_files_name_their_skills(tmp_path: Path) -> None:
    listed = write_json(
        tmp_path / "suite.json",
        [{"skill": "git-commit", "query": "commit message please", "should_trigger": True}],
    )
    mapped = write_json(
        tmp_path / "suite2.json", {"pdf-tools": [{"query": "merge PDFs", "should_trigger": True}]}
    )
    assert load_eval_file(listed)[0].skill == "git-commit"
    assert load_eval_file(mapped) == [TriggerCase("pdf-tools", "merge PDFs", True)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"query": "x"}, "must be a JSON list"),
        ([{"query": ""}], '"query" must be a non-empty string'),
        ([{"query": "x", "should_trigger": "yes"}], '"should_trigger" must be true or false'),
        (["x"], "expected an object"),
        ([{"query": "x", "should_trigger": True}], "no skill named"),
        ([], "holds no case; add"),
        ({"pdf-tools": [], "git-commit": []}, "holds no case; add"),
    ],
)
def test_bad_eval_sets_say_where_and_how(tmp_path: Path, data: Any, message: str) -> None:
    path = write_json(tmp_path / "bad.json", data)
    with pytest.raises(SkillError, match=message) as info:
        load_eval_file(path)
    assert str(path) in str(info.value)


def test_an_empty_set_is_an_error_only_where_it_was_asked_for(tmp_path: Path) -> None:
    """A catalog-wide run reads every skill's file: one skill's empty file must not
    stop everyone's (``allow_empty``); a suite's empty list for one skill is skipped."""
    empty = write_json(tmp_path / "empty.json", [])
    assert load_eval_file(empty, skill="pdf-tools", allow_empty=True) == []
    suite = write_json(tmp_path / "suite.json", {"pdf-tools": [{"query": "merge"}], "x": []})
    assert load_eval_file(suite) == [TriggerCase("pdf-tools", "merge", True)]


def test_invalid_json_is_a_skill_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(SkillError, match="not valid JSON"):
        load_eval_file(path, skill="x")


def test_find_eval_file_takes_the_first_convention(tmp_path: Path) -> None:
    assert find_eval_file(tmp_path) is None
    write_json(tmp_path / "evals" / "evals.json", [])
    assert find_eval_file(tmp_path) == tmp_path / "evals" / "evals.json"
    write_json(tmp_path / EVAL_FILES[0], [])
    assert find_eval_file(tmp_path) == tmp_path / EVAL_FILES[0]


# ---- the report ---------------------------------------------------------------------------


def test_report_rates_false_triggers_and_confusions() -> None:
    pos1 = TriggerCase("a", "q1", True)
    pos2 = TriggerCase("a", "q2", True)
    neg = TriggerCase("a", "q3", False)
    results = [
        CaseResult(pos1, ("a", "a", "b")),  # 2/3: passes
        CaseResult(pos2, ("b", None, "b")),  # 0/3: fails, b took it twice
        CaseResult(neg, ("a", None, None)),  # 1/3 false trigger: still passes
    ]
    report = build_report("router", 3, results)
    (a,) = report.skills
    assert (a.positives, a.negatives) == (2, 1)
    assert a.trigger_rate == pytest.approx(2 / 6)
    assert a.false_triggers == 1
    assert dict(a.confusions) == {"b": 3}
    assert a.pass_rate == pytest.approx(2 / 3)
    assert report.below(0.7) == [a]
    assert report.below(0.6) == []
    summary = report.to_dict()["summary"]
    assert summary == {
        "skills": 1,
        "cases": 3,
        "passed": 2,
        "pass_rate": 0.6667,
        "trigger_rate": 0.3333,
        "false_triggers": 1,
    }


def test_router_picker_needs_the_threshold(tmp_path: Path) -> None:
    matcher = SkillMatcher.from_skills(skills(tmp_path))
    cases = [
        TriggerCase("pdf-tools", "extract the tables from this PDF file", True),
        TriggerCase("pdf-tools", "write a commit message for my staged git changes", False),
    ]
    results = run_picker(cases, router_picker(matcher, threshold=0.1))
    assert [r.picks for r in results] == [("pdf-tools",), ("git-commit",)]
    assert all(r.passed for r in results)
    nothing = run_picker(cases, router_picker(matcher, threshold=1.01))
    assert [r.picks for r in nothing] == [(None,), (None,)]


def test_router_never_picks_a_skill_the_model_may_not_invoke(tmp_path: Path) -> None:
    listed = skills(tmp_path)
    hidden = loaded(
        write_skill(
            tmp_path,
            "pdf-merge",
            "Merge PDF documents into one PDF.",
            "disable-model-invocation: true\n",
        )
    )
    matcher = SkillMatcher.from_skills([*listed, hidden])
    pick = router_picker(matcher, threshold=0.05)
    assert matcher.rank("merge PDF documents", k=1)[0].name == "pdf-merge"
    assert pick("merge PDF documents") == "pdf-tools"


# ---- coexistence -----------------------------------------------------------------------------


def test_coexistence_names_the_skill_that_loses_and_who_takes_over(tmp_path: Path) -> None:
    existing = skills(tmp_path / "catalog")
    new = loaded(
        write_skill(
            tmp_path / "new",
            "animated-gif-slack",
            "Create an animated GIF for Slack; animated GIF creator for Slack.",
        )
    )
    cases = [
        TriggerCase("slack-gif-creator", "create an animated GIF for Slack", True),
        TriggerCase("pdf-tools", "merge these PDF documents", True),
        TriggerCase("pdf-tools", "make a GIF", False),
    ]
    result = coexistence(existing, new, cases, threshold=0.05, budget=8000)
    assert result.checked == 2
    assert result.losers == ["slack-gif-creator"]
    assert result.lost[0].taken_by == "animated-gif-slack"
    assert result.to_dict()["newly_left_out"] == 0


def test_block_fit_counts_what_a_small_budget_leaves_out(tmp_path: Path) -> None:
    catalog = skills(tmp_path)
    roomy = block_fit(catalog, budget=100_000)
    assert (roomy.skills, roomy.left_out, roomy.shortened) == (4, 0, 0)
    tight = block_fit(catalog, budget=700)
    assert tight.skills == 4
    assert tight.left_out > 0 or tight.shortened > 0


def test_skills_new_writes_a_trigger_eval_template_that_loads(tmp_path: Path) -> None:
    folder = new_skill("release-notes", directory=tmp_path)
    found = find_eval_file(folder)
    assert found == folder / "evals" / "trigger_evals.json"
    cases = load_eval_file(found, skill="release-notes")
    assert {c.should_trigger for c in cases} == {True, False}
    assert all(c.skill == "release-notes" for c in cases)


def test_router_results_say_how_far_off_a_miss_was(tmp_path: Path) -> None:
    matcher = SkillMatcher.from_skills(skills(tmp_path))
    cases = [
        TriggerCase("pdf-tools", "extract the tables from this PDF file", True),
        TriggerCase("invoice-chase", "extract the tables from this PDF file", True),
        TriggerCase("git-commit", "bake a chocolate cake", True),
    ]
    first, second, third = router_results(matcher, cases, threshold=0.1)
    assert first.picks == ("pdf-tools",) and first.detail.startswith("pdf-tools: rank 1, score ")
    assert second.picks == ("pdf-tools",) and not second.passed
    assert second.detail.startswith("invoice-chase: ") and "rank 1," not in second.detail
    assert third.detail == "git-commit: not in the top 50"
    assert first.to_dict()["detail"] == first.detail


# ---- what an agent here would see -------------------------------------------------------


def test_router_never_picks_a_skill_an_agent_here_cannot_use(tmp_path: Path) -> None:
    listed = skills(tmp_path)
    gated = loaded(write_skill(tmp_path, "pdf-tables", "Extract the tables from a PDF file."))
    matcher = SkillMatcher.from_skills([*listed, gated])
    query = "extract the tables from this PDF file"
    assert matcher.rank(query, k=1)[0].name == "pdf-tables"  # it still ranks first
    assert router_picker(matcher, threshold=0.05)(query) == "pdf-tables"

    def usable(skill: Skill) -> bool:
        return skill.name != "pdf-tables"

    assert router_picker(matcher, threshold=0.05, usable=usable)(query) == "pdf-tools"
    case = TriggerCase("pdf-tools", query, True)
    (result,) = router_results(matcher, [case], threshold=0.05, usable=usable)
    assert result.passed and result.detail.startswith("pdf-tools: rank 2, ")


def test_coexistence_leaves_unusable_skills_out_of_picks_and_block(tmp_path: Path) -> None:
    existing = skills(tmp_path / "catalog")
    gated = loaded(write_skill(tmp_path / "catalog", "gif-maker", "Create an animated GIF."))
    new = loaded(
        write_skill(
            tmp_path / "new",
            "animated-gif-slack",
            "Create an animated GIF for Slack; animated GIF creator for Slack.",
        )
    )
    cases = [TriggerCase("gif-maker", "create an animated GIF", True)]

    def usable(skill: Skill) -> bool:
        return skill.name != "gif-maker"

    everyone = coexistence([*existing, gated], new, cases, threshold=0.05, budget=100_000)
    assert everyone.losers == ["gif-maker"] and everyone.before.skills == 5
    here = coexistence(
        [*existing, gated], new, cases, threshold=0.05, budget=100_000, usable=usable
    )
    assert here.checked == 1 and here.lost == []  # never took it here: cannot lose it
    assert (here.before.skills, here.after.skills) == (4, 5)
