"""``skilldeck skills eval`` as a new user meets it, through the real CLI: the README
flow in a fresh, untrusted folder (``skills new`` then ``skills eval NAME``), a new
skill whose name is disabled in config under ``--coexist``, and ``--coexist`` ranking
exactly as ``skills match`` (the agent's ranking, embeddings on) does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import REPO, skilldeck, tool_call, write_script

BUNDLED = REPO / "src" / "skilldeck" / "bundled" / "skills"
RELEASE_NOTES = (
    "---\nname: my-skill\ndescription: Draft release notes from merged pull requests, "
    "grouping changes and crediting authors in a changelog entry.\n---\n\n# my-skill\n"
)
RELEASE_EVALS = [
    {
        "query": "draft the release notes for v2.3 from the merged pull requests",
        "should_trigger": True,
    },
    {
        "query": "write a changelog entry crediting the authors of merged PRs",
        "should_trigger": True,
    },
    {"query": "profile the columns of orders.csv", "should_trigger": False},
]


def run(*args: str, cwd: Path) -> Any:
    env = {
        "SKILLDECK_HOME": str(cwd.parent / "home" / ".skilldeck"),
        "HOME": str(cwd.parent / "home"),
    }
    return skilldeck(*args, cwd=cwd, env=env)


@pytest.fixture
def fresh(tmp_path: Path, untrusted_workspaces: None) -> Path:
    """A new project folder, never trusted, with a fresh home."""
    (tmp_path / "home").mkdir()
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


def test_the_readme_flow_works_in_a_fresh_folder(fresh: Path) -> None:
    created = run("skills", "new", "my-skill", "--kind", "script", cwd=fresh)
    assert created.returncode == 0, created.stderr
    assert "skilldeck skills eval .skilldeck/skills/my-skill" in created.stdout
    assert "once you trust this folder: `skilldeck trust`" in created.stdout
    assert max(len(line) for line in created.stdout.splitlines()) <= 80

    template = run("skills", "eval", "my-skill", "--min-rate", "0.8", cwd=fresh)
    assert "neither a file" not in template.stderr and "Traceback" not in template.stderr
    assert template.returncode == 1  # the template's placeholder requests fail, honestly
    assert (
        template.stderr.strip()
        .splitlines()[-1]
        .startswith("error: 1 skill(s) under --min-rate 80%: my-skill")
    )
    assert "evaluated because you named it" in template.stdout
    lines = template.stdout.splitlines()
    command = [line for line in lines if line.startswith("  skilldeck trust /")]
    assert command and max(len(line) for line in lines if line not in command) <= 80

    folder = fresh / ".skilldeck" / "skills" / "my-skill"
    (folder / "SKILL.md").write_text(RELEASE_NOTES, encoding="utf-8")
    (folder / "evals" / "trigger_evals.json").write_text(json.dumps(RELEASE_EVALS))
    args = ("skills", "eval", "my-skill", "--min-rate", "0.8", "--threshold", "0.1")
    written = run(*args, "--json", cwd=fresh)
    assert written.returncode == 0, written.stdout + written.stderr
    data = json.loads(written.stdout)
    assert data["summary"]["passed"] == 3
    assert data["untrusted_workspace_skills"] == [str(folder)]

    # evaluating it trusted nothing: agents here still do not see it
    listed = run("skills", "list", "--json", cwd=fresh)
    assert "my-skill" not in {row["name"] for row in json.loads(listed.stdout)}


def test_evaluating_a_skill_of_an_untrusted_folder_runs_none_of_it(fresh: Path) -> None:
    folder = fresh / ".skilldeck" / "skills" / "my-skill"
    (folder / "evals").mkdir(parents=True)
    marker = fresh / "ran"
    (folder / "SKILL.md").write_text(
        RELEASE_NOTES.replace("# my-skill\n", f"# my-skill\n\n!`touch {marker}`\n"),
        encoding="utf-8",
    )
    (folder / "evals" / "trigger_evals.json").write_text(json.dumps(RELEASE_EVALS[:1]))
    calls = [
        tool_call("c1", "Skill", skill="my-skill"),
        tool_call("c2", "Bash", command=f"touch {marker}"),
    ]
    script = write_script(
        fresh.parent / "model.jsonl", [{"for": "release notes", "tool_calls": calls}]
    )
    args = ("skills", "eval", "my-skill", "--model", f"scripted:{script}", "--runs", "1", "--json")
    done = run(*args, cwd=fresh)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["cases"][0]["picks"] == ["my-skill"]
    assert not marker.exists()  # neither its dynamic context nor the model's Bash call ran


def test_an_unknown_name_says_what_to_give(fresh: Path) -> None:
    done = run("skills", "eval", "no-such-skill", cwd=fresh)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "error: 'no-such-skill' is neither a file, a folder nor a skill in the catalog (the "
        "--root folders and, unless --no-defaults, the default roots); give a skill's folder "
        "(`skilldeck skills eval ./my-skill`) or see `skilldeck skills list`."
    )


def test_a_skill_md_path_names_its_skill(fresh: Path) -> None:
    """``skills eval .../my-skill/SKILL.md`` evaluates the skill; it used to be read as
    an eval file ("not valid JSON")."""
    assert run("skills", "new", "my-skill", cwd=fresh).returncode == 0
    folder = fresh / ".skilldeck" / "skills" / "my-skill"
    (folder / "SKILL.md").write_text(RELEASE_NOTES, encoding="utf-8")
    (folder / "evals" / "trigger_evals.json").write_text(json.dumps(RELEASE_EVALS))
    done = run(
        "skills", "eval", str(folder / "SKILL.md"), "--threshold", "0.1", "--json", cwd=fresh
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["passed"] == 3


def test_a_name_without_evals_takes_them_from_a_suite_given_beside_it(fresh: Path) -> None:
    """``skills eval NAME suite.json``: the suite holds NAME's evals (the documented
    form); only a name that neither ships evals nor has any in a suite is an error."""
    assert run("skills", "new", "my-skill", cwd=fresh).returncode == 0
    folder = fresh / ".skilldeck" / "skills" / "my-skill"
    (folder / "SKILL.md").write_text(RELEASE_NOTES, encoding="utf-8")
    (folder / "evals" / "trigger_evals.json").unlink()
    suite = fresh / "suite.json"
    suite.write_text(json.dumps([{**case, "skill": "my-skill"} for case in RELEASE_EVALS]))
    args = ("skills", "eval", "my-skill", str(suite), "--threshold", "0.1", "--json")
    done = run(*args, cwd=fresh)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["passed"] == 3
    alone = run("skills", "eval", "my-skill", cwd=fresh)
    assert alone.returncode == 1 and "ships no trigger evals" in alone.stderr


def test_coexist_takes_a_new_skill_whose_name_is_disabled(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    shutil.copytree(BUNDLED / "summarize", work / "ns2" / "summarize")
    assert run("skills", "disable", "summarize", cwd=work).returncode == 0
    text = run("skills", "eval", "--coexist", "ns2/summarize", cwd=work)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Adding summarize: ")
    assert "summarize is disabled in config: evaluated as if enabled" in text.stdout
    data = json.loads(
        run("skills", "eval", "--coexist", "ns2/summarize", "--json", cwd=work).stdout
    )
    assert data["new_skill"] == "summarize" and data["evaluated_as_if_enabled"] == ["summarize"]
    config = (tmp_path / "home" / ".skilldeck" / "config.toml").read_text(encoding="utf-8")
    assert '"summarize"' in config  # the config is not changed


# ---- --coexist ranks as an agent would ----------------------------------------------------

#: shares csv-profile's vocabulary; with embeddings fused in (the default), it is
#: the better match for one of csv-profile's own requests (QA's repro)
DATA_PROFILER = (
    "---\nname: data-profiler\ndescription: Give the min, max, average and median of each "
    "numeric column of a spreadsheet or table.\n---\n\n# data-profiler\n\nColumn statistics.\n"
)
REPRO = "give me min, max, mean and median of every numeric column in measurements.csv"


def top_skill(query: str, *roots: str, cwd: Path, flags: tuple[str, ...] = ()) -> str:
    extra = [arg for root in roots for arg in ("--root", root)]
    done = run("skills", "match", query, "--top", "1", "--json", *extra, *flags, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)[0]["name"])


def test_coexist_loses_what_skills_match_says_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLDECK_EMBEDDINGS")  # the default: embeddings fused in
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    (work / "ns" / "data-profiler").mkdir(parents=True)
    (work / "ns" / "data-profiler" / "SKILL.md").write_text(DATA_PROFILER, encoding="utf-8")
    evals = json.loads((BUNDLED / "csv-profile" / "evals" / "trigger_evals.json").read_text())
    queries = [e["query"] for e in evals if e["should_trigger"]]
    expected = [
        q
        for q in queries
        if top_skill(q, cwd=work) == "csv-profile"
        and top_skill(q, "ns/data-profiler", cwd=work) != "csv-profile"
    ]
    assert REPRO in expected, "precondition: with data-profiler installed, match ranks it first"
    args = ("skills", "eval", "--coexist", "ns/data-profiler", "--threshold", "0", "--json")
    data = json.loads(run(*args, cwd=work).stdout)
    lost = [r["query"] for r in data["lost"] if r["skill"] == "csv-profile"]
    assert lost == expected
    assert all(r["taken_by"] == "data-profiler" for r in data["lost"] if r["query"] == REPRO)

    # --lexical ranks by words only, as `skills match --lexical` does: csv-profile keeps it
    assert top_skill(REPRO, "ns/data-profiler", cwd=work, flags=("--lexical",)) == "csv-profile"
    lexical = json.loads(run(*args, "--lexical", cwd=work).stdout)
    assert REPRO not in [r["query"] for r in lexical["lost"]]
