"""The bundled script skill (csv-profile) and code skill (repo-stats), run for real."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings
from skilldeck.skills.code import audit_skill
from skilldeck.skills.execution import ScriptRunner
from skilldeck.skills.format import load_skill
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import ToolContext
from skilldeck.tools.skill_tool import SkillTool

pytestmark = pytest.mark.anyio
BUNDLED = Path(__file__).resolve().parents[4] / "src" / "skilldeck" / "bundled" / "skills"


def bundled(name: str) -> Skill:
    skill, diagnostics = load_skill(BUNDLED / name, source=SkillSource.BUNDLED, root=BUNDLED)
    assert skill is not None, diagnostics
    assert not [d for d in diagnostics if d.is_error], diagnostics
    return skill


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Settings(workspace=ws, sandbox={"mode": "off"})


async def profile(settings: Settings, args: Any) -> Any:
    result = await ScriptRunner(settings).run(bundled("csv-profile"), args)
    assert result.ok, result.error
    return result.value


def columns(value: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in value["profile"]}


def test_csv_profile_is_a_valid_script_skill() -> None:
    skill = bundled("csv-profile")
    assert skill.kind is SkillKind.SCRIPT and skill.metadata.arguments == ["path"]


async def test_csv_profile_types_missing_and_stats(settings: Settings) -> None:
    (settings.workspace / "sales.csv").write_text(
        "id,city,amount,day,paid,note\n"
        "1,Oslo,10.5,2024-01-01,true,\n"
        "2,Lima,20,2024-01-02,false,NA\n"
        "3,Oslo,,2024-01-03,yes,late\n"
        "4,Oslo,30,2024-01-04,no,x\n",
        encoding="utf-8",
    )
    value = await profile(settings, {"path": "sales.csv", "top": 2})
    assert (value["rows"], value["columns"], value["format"]) == (4, 6, "csv")
    cols = columns(value)
    assert cols["id"]["type"] == "integer" and cols["id"]["median"] == 2.5
    amount = cols["amount"]
    assert amount["type"] == "float" and amount["missing"] == 1 and amount["missing_pct"] == 25.0
    assert (amount["min"], amount["max"], amount["sum"]) == (10.5, 30.0, 60.5)
    assert cols["city"]["top"][0] == ["Oslo", 3] and cols["city"]["distinct"] == 2
    assert cols["day"]["type"] == "date" and cols["day"]["min"] == "2024-01-01"
    assert cols["paid"]["type"] == "boolean"
    assert cols["note"]["missing"] == 2 and cols["note"]["type"] == "string"


async def test_csv_profile_positional_argument_and_delimiters(settings: Settings) -> None:
    (settings.workspace / "semi.csv").write_text("a;b\n1;x\n2;y\n", encoding="utf-8")
    value = await profile(settings, "semi.csv")  # as `skills run csv-profile semi.csv` sends it
    assert set(columns(value)) == {"a", "b"}
    (settings.workspace / "t.tsv").write_text("a\tb\n1\t2\n", encoding="utf-8")
    assert columns(await profile(settings, {"path": "t.tsv"}))["b"]["type"] == "integer"


async def test_csv_profile_json_and_jsonl(settings: Settings) -> None:
    records = [{"n": 1, "tags": ["a"]}, {"n": 2.5, "extra": True}, {"n": None}]
    (settings.workspace / "d.json").write_text(json.dumps({"items": records}), encoding="utf-8")
    cols = columns(await profile(settings, {"path": "d.json"}))
    assert cols["n"]["type"] == "float" and cols["n"]["missing"] == 1
    assert cols["tags"]["type"] == "array" and cols["tags"]["missing"] == 2
    assert cols["extra"]["missing"] == 2  # absent from the first and last record
    lines = "\n".join(json.dumps(r) for r in records)
    (settings.workspace / "d.jsonl").write_text(lines + "\n", encoding="utf-8")
    assert (await profile(settings, {"path": "d.jsonl"}))["rows"] == 3


async def test_csv_profile_max_rows_and_mixed_types(settings: Settings) -> None:
    rows = "\n".join(f"{i},{'x' if i == 3 else i}" for i in range(10))
    (settings.workspace / "m.csv").write_text("i,v\n" + rows + "\n", encoding="utf-8")
    value = await profile(settings, {"path": "m.csv", "max_rows": 5})
    assert value["rows"] == 5 and value["truncated"] is True
    v = columns(value)["v"]
    assert v["type"] == "string" and v["mixed_types"] == {"integer": 4, "string": 1}


async def test_csv_profile_missing_file_is_an_error(settings: Settings) -> None:
    result = await ScriptRunner(settings).run(bundled("csv-profile"), {"path": "nope.csv"})
    assert not result.ok and result.exit_code == 2 and "no such file" in (result.error or "")


def test_repo_stats_is_a_code_skill_that_passes_the_audit() -> None:
    skill = bundled("repo-stats")
    assert skill.kind is SkillKind.CODE
    assert audit_skill(skill.folder) == []


class FakeLLM:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def complete(self, prompt: str, system: str | None = None) -> str:
        self.prompts.append(prompt)
        return "A small Python project."


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "Ada",
            "GIT_AUTHOR_EMAIL": "ada@example.com",
            "GIT_COMMITTER_NAME": "Ada",
            "GIT_COMMITTER_EMAIL": "ada@example.com",
            "HOME": str(repo),
            "PATH": "/usr/bin:/bin",
        },
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_repo_stats_through_the_skill_tool(settings: Settings) -> None:
    repo = settings.workspace / "proj"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("import os\n# TODO: tidy\nprint(1)\n", encoding="utf-8")
    (repo / "src" / "util.js").write_text("export const x = 1;\n", encoding="utf-8")
    (repo / "README.md").write_text("# Proj\n\nFIXME later\n\n", encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first commit")
    registry = SkillRegistry(settings)
    registry.register(bundled("repo-stats"))
    llm = FakeLLM()
    ctx = ToolContext(
        session_id="s", workspace=settings.workspace, settings=settings, services={"llm": llm}
    )
    result = await SkillTool(registry).call(
        {"skill": "repo-stats", "args": {"path": "proj", "summarize": True}}, ctx
    )
    assert not result.is_error, result.content
    stats = result.data["result"]["metadata"]
    assert stats["files"] == 3 and stats["lines"] == 8
    langs = {row["language"]: row for row in stats["languages"]}
    assert langs["Python"] == {"language": "Python", "lines": 3, "files": 1}
    assert langs["Markdown"]["lines"] == 4
    assert stats["largest"][0] == {"path": "README.md", "lines": 4}
    assert stats["markers"]["total"] == 2
    assert stats["git"]["repository"] is True and stats["git"]["commits"] == 1
    assert any("first commit" in c for c in stats["git"]["recent"])
    assert result.content.startswith("Ran code skill repo-stats\nA small Python project.")
    assert "| Python | 1 | 3 |" in result.content
    assert "3 text files, 8 lines." in llm.prompts[0]


async def test_repo_stats_outside_git_and_empty_folder(settings: Settings) -> None:
    (settings.workspace / "plain").mkdir()
    (settings.workspace / "plain" / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    (settings.workspace / "empty").mkdir()
    registry = SkillRegistry(settings)
    registry.register(bundled("repo-stats"))
    ctx = ToolContext(session_id="s", workspace=settings.workspace, settings=settings)
    tool = SkillTool(registry)
    plain = await tool.call({"skill": "repo-stats", "args": {"path": "plain"}}, ctx)
    assert plain.data["result"]["metadata"]["git"] == {"repository": False}
    empty = await tool.call({"skill": "repo-stats", "args": "empty"}, ctx)
    assert "No text files found under empty." in empty.content
    missing = await tool.call({"skill": "repo-stats", "args": {"path": "nowhere"}}, ctx)
    assert missing.is_error and "could not read nowhere" in missing.content
