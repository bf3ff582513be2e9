"""The script runner contract: JSON in/out, errors, timeouts, caps, environment, sandbox."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings
from skilldeck.errors import SandboxError, SkillExecutionError
from skilldeck.sandbox import ProbeResult, Sandbox, probe_sandbox
from skilldeck.skills.execution.runner import (
    ARGV_LIMIT,
    ScriptRunner,
    entrypoint_of,
    interpreter_argv,
    normalize_args,
    scrub_env,
)
from skilldeck.skills.model.skill import Skill, SkillKind
from skilldeck.skills.model.spec import SkillMetadata

pytestmark = pytest.mark.anyio
SANDBOX = probe_sandbox()
needs_bwrap = pytest.mark.skipif(
    not SANDBOX.available, reason=f"bubblewrap sandbox not usable here: {SANDBOX.reason}"
)

ECHO = """
import json, os, sys
argv = json.loads(sys.argv[1])
stdin = json.loads(sys.stdin.read())
env = {k: os.environ.get(k) for k in
       ("SKILL_DIR", "SKILL_NAME", "SESSION_ID", "WORKSPACE", "SKILL_SCRATCH")}
print(json.dumps({"argv": argv, "stdin": stdin, "cwd": os.getcwd(), "env": env}))
"""


def make_skill(
    root: Path,
    code: str,
    *,
    name: str = "demo",
    entry: str = "scripts/run.py",
    timeout: float | None = None,
    **meta: Any,
) -> Skill:
    folder = root / name
    script = folder / entry
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nbody\n")
    metadata = SkillMetadata(name=name, description="d", entrypoint=entry, timeout=timeout, **meta)
    return Skill(
        metadata=metadata, folder=folder, skill_md=folder / "SKILL.md", kind=SkillKind.SCRIPT
    )


def make_settings(tmp_path: Path, *, mode: str = "off", **skills: Any) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return Settings(workspace=ws, sandbox={"mode": mode}, skills=skills)


def runner(tmp_path: Path, *, mode: str = "off", **skills: Any) -> ScriptRunner:
    return ScriptRunner(make_settings(tmp_path, mode=mode, **skills), session_id="s-1")


async def test_json_arrives_in_argv_and_stdin_and_output_is_parsed(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, ECHO)
    result = await runner(tmp_path).run(skill, {"n": 1, "text": "héllo"})
    assert result.ok, result.error
    assert result.value["argv"] == result.value["stdin"] == {"n": 1, "text": "héllo"}
    assert result.value["cwd"] == str(skill.folder)
    env = result.value["env"]
    assert env["SKILL_DIR"] == str(skill.folder.resolve())
    assert env["SKILL_NAME"] == "demo" and env["SESSION_ID"] == "s-1"
    assert env["WORKSPACE"] == str((tmp_path / "ws").resolve())
    assert env["SKILL_SCRATCH"] and not Path(env["SKILL_SCRATCH"]).exists()  # removed after
    assert result.exit_code == 0 and not result.timed_out
    assert json.loads(result.render()) == result.value


async def test_non_json_stdout_is_an_error(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "print('hello, not json')\n")
    result = await runner(tmp_path).run(skill, {})
    assert not result.ok
    assert "did not print valid JSON" in (result.error or "")
    assert "hello, not json" in (result.error or "") and result.exit_code == 0


async def test_empty_stdout_is_an_error(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "import sys; sys.stderr.write('nothing to say')\n")
    result = await runner(tmp_path).run(skill)
    assert not result.ok and "printed nothing" in (result.error or "")
    assert "nothing to say" in (result.error or "")


async def test_non_zero_exit_reports_code_and_stderr_tail(tmp_path: Path) -> None:
    code = """
    import sys
    print('{"partial": true}')
    sys.stderr.write("x" * 5000 + "\\nTHE REAL PROBLEM\\n")
    sys.exit(3)
    """
    result = await runner(tmp_path).run(make_skill(tmp_path, code), {})
    assert not result.ok and result.exit_code == 3
    assert "exit code 3" in (result.error or "")
    assert "THE REAL PROBLEM" in (result.error or "")
    assert len(result.error or "") < 2600  # only the tail of stderr


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def _wait_dead(pids: list[int], limit: float = 5.0) -> list[int]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        living = [p for p in pids if _alive(p)]
        if not living:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to inspect processes")
async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "ws" / "pids.txt"
    code = f"""
    import subprocess, sys, time
    # a child that itself starts a grandchild; all of them would outlive a naive kill
    child = subprocess.Popen(["sh", "-c", "sleep 300 & echo $! >> {pids}; sleep 300"])
    with open({str(pids)!r}, "a") as fh:
        fh.write(f"{{child.pid}}\\n")
    time.sleep(300)
    """
    skill = make_skill(tmp_path, code, timeout=1.5)
    started = time.monotonic()
    result = await runner(tmp_path).run(skill, {})
    assert time.monotonic() - started < 10
    assert result.timed_out and not result.ok
    assert "timed out after 1.5s" in (result.error or "")
    assert "process group" in (result.error or "")
    recorded = [int(x) for x in pids.read_text().split()]
    assert len(recorded) == 2
    assert _wait_dead(recorded) == []


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to inspect processes")
async def test_background_leftover_does_not_hold_the_run(tmp_path: Path) -> None:
    pid_file = tmp_path / "ws" / "bg.txt"
    code = f"""
    import json, subprocess
    bg = subprocess.Popen(["sleep", "300"])  # inherits stdout: would keep the pipe open
    open({str(pid_file)!r}, "w").write(str(bg.pid))
    print(json.dumps({{"done": True}}))
    """
    started = time.monotonic()
    result = await runner(tmp_path, script_timeout=60).run(make_skill(tmp_path, code), {})
    assert result.ok and result.value == {"done": True}
    assert time.monotonic() - started < 10
    assert _wait_dead([int(pid_file.read_text())]) == []


async def test_huge_output_is_capped_without_deadlock(tmp_path: Path) -> None:
    code = """
    import sys
    chunk = "y" * 65536
    for _ in range(64):  # 4 MiB on each stream, interleaved
        sys.stdout.write(chunk)
        sys.stderr.write(chunk)
    """
    r = runner(tmp_path, output_cap=256 * 1024, script_timeout=60)
    result = await r.run(make_skill(tmp_path, code), {})
    assert result.truncated and not result.timed_out
    assert len(result.stdout) == 256 * 1024 and len(result.stderr) == 256 * 1024
    assert "more than 262144 bytes" in (result.error or "")


async def test_huge_stderr_with_valid_json_still_succeeds(tmp_path: Path) -> None:
    code = """
    import sys, json
    sys.stderr.write("log line\\n" * 400000)
    print(json.dumps([1, 2, 3]))
    """
    result = await runner(tmp_path, output_cap=64 * 1024).run(make_skill(tmp_path, code), {})
    assert result.ok and result.value == [1, 2, 3] and result.truncated


async def test_large_arguments_go_on_stdin_only(tmp_path: Path) -> None:
    code = """
    import json, sys
    print(json.dumps({"argv1": sys.argv[1], "size": len(json.load(sys.stdin)["blob"])}))
    """
    blob = "z" * (ARGV_LIMIT + 10)
    result = await runner(tmp_path).run(make_skill(tmp_path, code), {"blob": blob})
    assert result.ok, result.error
    assert result.value == {"argv1": "-", "size": len(blob)}


async def test_script_that_ignores_a_large_stdin_does_not_hang(tmp_path: Path) -> None:
    code = "print('{}')\n"
    result = await runner(tmp_path).run(make_skill(tmp_path, code), {"blob": "q" * 2_000_000})
    assert result.ok and result.value == {}


async def test_secrets_are_scrubbed_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = [
        "MY_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "GCP_CREDENTIALS",
    ]
    for name in secrets:
        monkeypatch.setenv(name, "hunter2")
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    code = """
    import json, os
    print(json.dumps(sorted(k for k in os.environ if k in
        {"MY_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY",
         "GCP_CREDENTIALS", "PLAIN_SETTING"})))
    """
    skill = make_skill(tmp_path, code)
    result = await runner(tmp_path).run(skill, {})
    assert result.value == ["PLAIN_SETTING"]
    allowed = runner(tmp_path, settings={"demo": {"env": ["GITHUB_TOKEN"]}})
    result = await allowed.run(skill, {})
    assert result.value == ["GITHUB_TOKEN", "PLAIN_SETTING"]


def test_scrub_env_is_case_insensitive() -> None:
    env = {"my_token": "a", "Path": "b", "ApiKey": "c", "session_secret": "d"}
    assert scrub_env(env) == {"Path": "b"}
    assert scrub_env(env, allow={"ApiKey"}) == {"Path": "b", "ApiKey": "c"}


async def test_shell_script_runs_with_bash(tmp_path: Path) -> None:
    code = 'read -r input\nprintf \'{"via": "bash", "input": %s}\\n\' "$input"\n'
    skill = make_skill(tmp_path, code, entry="scripts/run.sh")
    result = await runner(tmp_path).run(skill, {"k": 2})
    assert result.ok, result.error
    assert result.value == {"via": "bash", "input": {"k": 2}}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_javascript_runs_with_node(tmp_path: Path) -> None:
    code = "const a = JSON.parse(process.argv[2]); console.log(JSON.stringify({twice: a.n * 2}));\n"
    skill = make_skill(tmp_path, code, entry="scripts/run.js")
    result = await runner(tmp_path).run(skill, {"n": 21})
    assert result.ok and result.value == {"twice": 42}


def test_missing_node_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "x.js"
    script.write_text("console.log(1)\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(SkillExecutionError, match="needs `node`"):
        interpreter_argv(script)


def test_interpreter_from_shebang_and_python_by_extension(tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.write_text("#!/usr/bin/env -S python3 -u\nprint(1)\n")
    argv = interpreter_argv(tool)
    assert Path(argv[0]).name == "env" and argv[1:] == ["python3", "-u", str(tool)]
    py = tmp_path / "x.py"
    py.write_text("#!/usr/bin/python2\n")
    assert interpreter_argv(py) == [sys.executable, str(py)]  # the running Python wins


def test_unknown_interpreter_is_an_error(tmp_path: Path) -> None:
    plain = tmp_path / "data.bin"
    plain.write_text("no shebang")
    with pytest.raises(SkillExecutionError, match="shebang"):
        interpreter_argv(plain)
    odd = tmp_path / "odd"
    odd.write_text("#!/no/such/interpreter-xyz\n")
    with pytest.raises(SkillExecutionError, match="not installed"):
        interpreter_argv(odd)


async def test_shebang_script_without_extension_runs(tmp_path: Path) -> None:
    code = "#!/usr/bin/env python3\nimport json, sys\nprint(json.dumps(json.loads(sys.argv[1])))\n"
    skill = make_skill(tmp_path, code, entry="scripts/tool")
    result = await runner(tmp_path).run(skill, [1, "two"])
    assert result.ok and result.value == [1, "two"]


async def test_entrypoint_must_stay_inside_the_skill(tmp_path: Path) -> None:
    (tmp_path / "evil.py").write_text("print('{}')")
    skill = make_skill(tmp_path, "print('{}')")
    escaping = Skill(
        metadata=SkillMetadata(name="demo", description="d", entrypoint="../evil.py"),
        folder=skill.folder,
        skill_md=skill.skill_md,
    )
    with pytest.raises(SkillExecutionError, match="not inside its folder"):
        await runner(tmp_path).run(escaping, {})
    missing = Skill(
        metadata=SkillMetadata(name="demo", description="d", entrypoint="scripts/none.py"),
        folder=skill.folder,
        skill_md=skill.skill_md,
    )
    with pytest.raises(SkillExecutionError, match="does not exist"):
        await runner(tmp_path).run(missing, {})
    prompt_only = Skill(
        metadata=SkillMetadata(name="demo", description="d"),
        folder=skill.folder,
        skill_md=skill.skill_md,
    )
    with pytest.raises(SkillExecutionError, match="declares no `entrypoint`"):
        await runner(tmp_path).run(prompt_only, {})


async def test_entrypoint_in_metadata_map_for_strict_skills(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, ECHO)
    strict = Skill(
        metadata=SkillMetadata(
            name="demo", description="d", metadata={"entrypoint": "scripts/run.py"}
        ),
        folder=skill.folder,
        skill_md=skill.skill_md,
    )
    assert entrypoint_of(strict) == "scripts/run.py"
    result = await runner(tmp_path).run(strict, {"a": 1})
    assert result.ok and result.value["argv"] == {"a": 1}


def test_timeout_comes_from_skill_then_settings(tmp_path: Path) -> None:
    r = runner(tmp_path, script_timeout=12)
    assert r.timeout_for(make_skill(tmp_path, "", timeout=3)) == 3
    assert r.timeout_for(make_skill(tmp_path, "", name="other")) == 12


def test_normalize_args() -> None:
    assert normalize_args(None) == {}
    assert normalize_args({"a": 1}) == {"a": 1}
    assert normalize_args('{"a": 1}') == {"a": 1}
    assert normalize_args("[1, 2]") == [1, 2]
    assert normalize_args("data.csv 'two words'", declared=["path", "label"]) == {
        "arguments": "data.csv 'two words'",
        "args": ["data.csv", "two words"],
        "path": "data.csv",
        "label": "two words",
    }
    assert normalize_args("{not json") == {"arguments": "{not json", "args": ["{not", "json"]}


def test_run_sync(tmp_path: Path) -> None:
    result = runner(tmp_path).run_sync(make_skill(tmp_path, ECHO), {"sync": True})
    assert result.ok and result.value["stdin"] == {"sync": True}


async def test_auto_sandbox_fallback_warns_once(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, mode="auto")
    sandbox = Sandbox(settings, probe=lambda: ProbeResult(False, "no bwrap here"))
    r = ScriptRunner(settings, sandbox=sandbox)
    skill = make_skill(tmp_path, ECHO)
    first, second = await r.run(skill, {}), await r.run(skill, {})
    assert first.ok and not first.sandboxed
    assert len(first.warnings) == 1 and "no bwrap here" in first.warnings[0]
    assert second.warnings == []


async def test_required_sandbox_without_bwrap_refuses(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, mode="required")
    sandbox = Sandbox(settings, probe=lambda: ProbeResult(False, "no bwrap here"))
    with pytest.raises(SandboxError):
        await ScriptRunner(settings, sandbox=sandbox).run(make_skill(tmp_path, ECHO), {})


@needs_bwrap
async def test_sandboxed_script_writes_only_workspace_and_scratch(tmp_path: Path) -> None:
    # one target outside /tmp (the sandbox's /tmp is private, so writes there vanish)
    outside = Path(sys.prefix) / f"skilldeck-sandbox-probe-{os.getpid()}.txt"
    under_tmp = tmp_path / "outside.txt"
    code = f"""
    import json, os, pathlib
    report = {{}}
    for label, path in (("workspace", os.environ["WORKSPACE"] + "/out.txt"),
                        ("scratch", os.environ["SKILL_SCRATCH"] + "/t.txt"),
                        ("outside", {str(outside)!r}),
                        ("skill_dir", "written-here.txt")):
        try:
            pathlib.Path(path).write_text("x")
            report[label] = "written"
        except OSError as e:
            report[label] = "refused"
    pathlib.Path({str(under_tmp)!r}).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path({str(under_tmp)!r}).write_text("private tmp")
    print(json.dumps(report))
    """
    skill = make_skill(tmp_path, code)
    try:
        result = await runner(tmp_path, mode="required").run(skill, {})
        assert result.ok, result.error
        assert result.sandboxed
        assert result.value == {
            "workspace": "written",
            "scratch": "written",
            "outside": "refused",
            "skill_dir": "refused",
        }
        assert not outside.exists()
        assert not under_tmp.exists()  # it went to the sandbox's own /tmp
        assert (tmp_path / "ws" / "out.txt").exists()
    finally:
        outside.unlink(missing_ok=True)


@needs_bwrap
async def test_sandboxed_timeout_still_kills_everything(tmp_path: Path) -> None:
    code = """
    import subprocess, time
    subprocess.Popen(["sh", "-c", "sleep 300 & sleep 300"])
    time.sleep(300)
    """
    started = time.monotonic()
    result = await runner(tmp_path, mode="required").run(make_skill(tmp_path, code, timeout=1), {})
    assert result.timed_out and time.monotonic() - started < 10


def test_environment_passes_explicit_values(tmp_path: Path) -> None:
    r = runner(tmp_path, settings={"demo": {"env": {"REGION": "eu"}}})
    skill = make_skill(tmp_path, ECHO)
    env = r.environment(skill, session_id="s", workspace=tmp_path, scratch=tmp_path)
    assert env["REGION"] == "eu" and env["SKILL_NAME"] == "demo"
    assert os.environ.get("PATH") == env.get("PATH")
