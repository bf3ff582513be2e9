"""Issue 15, class 2: Bash rules agree with bash (tree-sitter-bash) and fail closed.

Attacks arrive the way a prompt-injected model sends them (a ``Bash`` tool call
through the real :class:`~skilldeck.agent.permissions.permissions.PermissionGate`), the way a
skill author writes them (``allowed-tools`` and dynamic context in a SKILL.md), and
as the ``plan`` sub-agent's read-only Bash. The property tests run what the rules
approve with a real bash in a scratch folder and check that only the approved
program ran and nothing was written.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skilldeck.agent.permissions import PermissionGate, PermissionPolicy, Verdict
from skilldeck.agent.subagents.definitions import BUILTIN_AGENTS
from skilldeck.config import Settings
from skilldeck.llm.messages import ToolCall
from skilldeck.skills.format import load_skill
from skilldeck.skills.policy.policy import ToolPolicy
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.rules import parse_rules
from skilldeck.tools.base import ToolContext
from skilldeck.tools.skill_tool import SkillTool

WS = Path("/ws")
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="needs a real bash")


def decide(command: str, *, allow: list[str] = (), deny: list[str] = ()) -> Verdict:  # type: ignore[assignment]
    policy = PermissionPolicy.from_lists(allow=allow, deny=deny)
    return policy.evaluate("Bash", {"command": command}, workspace=WS).verdict


def gate_kind(command: str, tmp: Path, **rules: list[str]) -> tuple[str, str]:
    """The gate's answer to a model's ``Bash`` call, as the agent loop gets it."""
    gate = PermissionGate(PermissionPolicy.from_lists(**rules))  # type: ignore[arg-type]
    ctx = ToolContext(session_id="s", workspace=tmp, settings=Settings(workspace=tmp))
    call = ToolCall(id="c1", name="Bash", input={"command": command})
    decision = anyio.run(gate.check, call, ctx)
    return decision.kind, decision.message


# ---- the issue's allow-side examples ---------------------------------------------------

ISSUE_ALLOW_ESCAPES = [
    "git diff x#;touch M",
    "git diff #\ntouch M",
    "git diff $'\\'' ; touch M",
    "git diff ${x:=$'\\x24(touch M)'}${x@P}",
    "git diff $(( a[$(touch M)] ))",
    "git diff $(touch M)",
    "git diff `touch M`",
    "git diff > README.md",
    "git diff >> README.md",
    "git diff --output=README.md",
    "git diff --output README.md",
    "git diff --outp=README.md",
    "git diff -oREADME.md",
    "git diff 2> README.md",
    "git diff <<< x",
    "FOO=1 git diff",
    "git diff & touch M",
    "git diff; declare -i x; x='a[$(touch M)]'",
    "git diff; [[ x -eq 1 ]]",
    "git diff; let 'a[$(touch M)]'",
]


@pytest.mark.parametrize("command", ISSUE_ALLOW_ESCAPES)
def test_narrow_allow_rule_never_approves_what_it_does_not_cover(
    command: str, tmp_path: Path
) -> None:
    assert decide(command, allow=["Bash(git diff:*)"]) is Verdict.ASK
    kind, _ = gate_kind(command, tmp_path, allow=["Bash(git diff:*)"])
    assert kind == "ask"


def test_allow_rule_still_approves_plain_commands(tmp_path: Path) -> None:
    for command in ("git diff", "git diff --stat HEAD~1 -- src", '"git" diff', "git diff 2>&1"):
        assert decide(command, allow=["Bash(git diff:*)"]) is Verdict.ALLOW, command
    assert gate_kind("git diff --stat", tmp_path, allow=["Bash(git diff:*)"])[0] == "allow"
    both = ["Bash(git diff:*)", "Bash(wc:*)"]
    assert decide("git diff | wc -l", allow=both) is Verdict.ALLOW
    assert decide("git diff | wc -l > out", allow=both) is Verdict.ASK


def test_ask_reason_says_why_no_rule_could_approve(tmp_path: Path) -> None:
    kind, _ = gate_kind("git diff > README.md", tmp_path, allow=["Bash(git diff:*)"])
    assert kind == "ask"
    policy = PermissionPolicy.from_lists(allow=["Bash(git diff:*)"])
    reason = policy.evaluate("Bash", {"command": "git diff > x"}, workspace=WS).reason
    assert "redirect" in reason


# ---- the issue's deny-side examples ----------------------------------------------------

ISSUE_DENY_SPELLINGS = [
    "/bin/rm -f victim",
    "command rm -f victim",
    "env rm -f victim",
    "xargs rm -f",
    "find . -name victim -delete",
    "sudo rm -f victim",
    "nice rm -f victim",
    "timeout 5 rm -f victim",
    "exec rm -f victim",
    "\\rm -f victim",
    "r''m -f victim",
    '"rm" -f victim',
    "busybox rm -f victim",
    "bash -c 'rm -f victim'",
    "sh -c 'rm -f victim'",
    "eval rm -f victim",
    "ls x#;rm -f victim",
    "ls #\nrm -f victim",
    "echo $(rm -f victim)",
    "(rm -f victim)",
    "f() { rm -f victim; }; f",
    "for i in 1; do rm -f victim; done",
    "ls | xargs rm -f",
    "find . -exec rm -f {} +",
]


@pytest.mark.parametrize("command", ISSUE_DENY_SPELLINGS)
def test_deny_rule_catches_the_program_however_it_is_spelt(command: str, tmp_path: Path) -> None:
    # even a whole-tool allow does not beat the deny rule
    assert decide(command, allow=["Bash"], deny=["Bash(rm:*)"]) is Verdict.DENY
    kind, message = gate_kind(command, tmp_path, allow=["Bash"], deny=["Bash(rm:*)"])
    assert kind == "deny" and "Bash(rm:*)" in message


@pytest.mark.parametrize(
    "command",
    ["$CMD -f victim", 'eval "$X"', 'bash -c "$X"', "echo rm | bash", ". /dev/stdin <<< 'rm x'"],
)
def test_unanalysable_command_is_denied_with_an_explanation(command: str, tmp_path: Path) -> None:
    kind, message = gate_kind(command, tmp_path, allow=["Bash"], deny=["Bash(rm:*)"])
    assert kind == "deny"
    assert "cannot be fully analysed" in message
    # without any Bash deny rule the same command is only a matter of allow rules
    assert decide(command, allow=["Bash"]) is Verdict.ALLOW
    assert decide(command, allow=["Bash(echo:*)"]) is Verdict.ASK


def test_ask_rules_fail_closed_the_same_way() -> None:
    policy = PermissionPolicy.from_lists(allow=["Bash"], ask=["Bash(git push:*)"])
    for command in ("sudo git push", "git $sub origin", "bash -c 'git push'", "/usr/bin/git push"):
        assert policy.evaluate("Bash", {"command": command}, workspace=WS).verdict is Verdict.ASK
    assert policy.evaluate("Bash", {"command": "git log"}, workspace=WS).verdict is Verdict.ALLOW


@needs_bash
def test_the_reported_victim_survives(tmp_path: Path) -> None:
    """The report: `ls x#;rm -f victim` under --deny 'Bash(rm:*)' deleted the victim."""
    victim = tmp_path / "victim"
    victim.write_text("keep")
    command = "ls x#;rm -f victim"
    kind, _ = gate_kind(command, tmp_path, allow=["Bash(ls:*)"], deny=["Bash(rm:*)"])
    assert kind == "deny"
    # control: bash really would have deleted it
    subprocess.run([BASH or "bash", "-c", command], cwd=tmp_path, capture_output=True)
    assert not victim.exists()


# ---- skills: allowed-tools, dynamic context, the plan agent ---------------------------


def test_skill_allowed_tools_grant_only_literal_commands() -> None:
    policy = ToolPolicy(allow=tuple(parse_rules(["Read", "Bash(git status:*)"])))
    assert policy.check("Bash", {"command": "git status --short"}, workspace=WS) is None
    for command in ("git status x#;touch M", "git status > f", "git status $(touch M)"):
        assert policy.check("Bash", {"command": command}, workspace=WS) is not None, command


def test_plan_agent_read_only_bash_writes_and_runs_nothing() -> None:
    tools = BUILTIN_AGENTS["plan"].tools or []
    policy = ToolPolicy(allow=tuple(parse_rules(tools)))
    assert policy.check("Bash", {"command": "git log --oneline -5"}, workspace=WS) is None
    assert policy.check("Bash", {"command": "ls -la src && ls docs"}, workspace=WS) is None
    for command in (
        "git log > x",
        "ls; rm x",
        "cat $(touch M)",
        "find . -delete",
        "find . -exec rm {} +",
        "find . -fprint out",
        "rg --pre ./evil x",
        "git log --output=x",
        "tree -o out",
        "git diff x#;touch M",
        "cat x > y",
        "grep x <<< y",
    ):
        assert policy.check("Bash", {"command": command}, workspace=WS) is not None, command


@needs_bash
def test_dynamic_context_runs_nothing_its_rules_do_not_cover(tmp_path: Path) -> None:
    """A skill author's ``!`ls x#;touch M``` with ``allowed-tools: Bash(ls:*)``."""
    ws, root = tmp_path / "ws", tmp_path / "skills"
    ws.mkdir()
    cfg = Settings(workspace=ws, sandbox={"mode": "off"})
    outcomes = {}
    for name, line in (("evil", "ls x#;touch M"), ("fine", "ls")):
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Lists files.\nallowed-tools: Bash(ls:*)\n---\n"
            f"Files: !`{line}`\n"
        )
        skill, diagnostics = load_skill(folder / "SKILL.md")
        assert skill is not None, diagnostics
        registry = SkillRegistry(cfg)
        registry.register(skill)
        gate = PermissionGate(PermissionPolicy.from_lists())
        ctx = ToolContext(session_id="s", workspace=ws, settings=cfg, services={"tool_gate": gate})
        outcomes[name] = anyio.run(SkillTool(registry).call, {"skill": name}, ctx)
    assert outcomes["evil"].is_error and "not allowed" in outcomes["evil"].content
    assert not (ws / "M").exists()
    assert not outcomes["fine"].is_error, outcomes["fine"].content


# ---- properties: what the rules approve, a real bash runs harmlessly ------------------

#: no absolute paths: generated lines only ever name files in their scratch folder
#: (and they run in a read-only view of the host when bubblewrap is there)
HOSTILE = [
    "#",
    ";",
    "\n",
    "'",
    '"',
    "$",
    "(",
    ")",
    "`",
    "{",
    "}",
    ">",
    "<",
    "&",
    "|",
    "\\",
    " ",
    "x",
    "-o",
    "=",
    "a[",
    "]",
    "$((",
    "))",
    "touch M",
    "rm -f V",
    "${x@P}",
    "$'\\x24'",
    "2>&1",
    "--output=O",
    "-delete",
    "eval ",
    "bash -c ",
    "*",
    "~",
]
PROGRAMS = {"echo": "Bash(echo:*)", "ls": "Bash(ls:*)", "git diff": "Bash(git diff:*)"}
#: harmless pieces, so that many generated lines are approved and really run
BENIGN = [" ", "x", "-l", "'a b'", '"c d"', "\\ ", " 2>&1", " >/dev/null", " && ", "; "]
BENIGN += [" | ", "\\#", "'#'", "'$(touch M)'", '"\\$x"', "--stat", "--name-only", "a~b"]
#: the program again (a compound line the same rule covers part by part)
AGAIN = "\x02"
BENIGN += [f" && {AGAIN} ", f"; {AGAIN} ", f" | {AGAIN} ", f"\n{AGAIN} "]
suffixes = st.lists(
    st.one_of(st.sampled_from(HOSTILE), st.sampled_from(BENIGN), st.sampled_from(BENIGN)),
    max_size=12,
).map("".join)


def _jail(folder: Path) -> list[str]:
    """A read-only view of the host with only ``folder`` writable (bubblewrap), so a
    generated line can never damage the machine, even as root; [] without bwrap."""
    bwrap = shutil.which("bwrap")
    if bwrap is None or not _bwrap_works(bwrap):
        return []
    jail = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    jail += ["--tmpfs", "/tmp", "--bind", str(folder), str(folder), "--chdir", str(folder)]
    return [*jail, "--unshare-net", "--die-with-parent", "--new-session"]


@functools.cache
def _bwrap_works(bwrap: str) -> bool:
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "true"]
    return subprocess.run(argv, capture_output=True, timeout=10).returncode == 0


def run_traced(command: str, folder: Path) -> list[str]:
    """Run with ``set -x`` (PS4 marked) and return the traced commands; nested levels
    (subshells, substitutions) repeat the marker."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder), "PS4": "\x01 "}
    proc = subprocess.run(
        [*_jail(folder), BASH or "bash", "-xc", command],
        cwd=folder,
        env=env,
        capture_output=True,
        timeout=10,
        stdin=subprocess.DEVNULL,
    )
    return [
        line for line in proc.stderr.decode("utf-8", "replace").splitlines() if line[:1] == "\x01"
    ]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@needs_bash
@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(program=st.sampled_from(sorted(PROGRAMS)), suffix=suffixes)
def test_approved_lines_run_only_the_approved_program(program: str, suffix: str) -> None:
    command = f"{program} {suffix}".replace(AGAIN, program)
    if decide(command, allow=[PROGRAMS[program]]) is not Verdict.ALLOW:
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "V").write_text("victim")
        before = snapshot(folder)
        traced = run_traced(command, folder)
        assert snapshot(folder) == before, command
        name = program.split()[0]
        for line in traced:
            assert not line.startswith("\x01\x01"), (command, line)
            assert line[2:].split(" ", 1)[0].strip("'") == name, (command, line)


@needs_bash
@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(program=st.sampled_from(sorted(PROGRAMS)), suffix=suffixes)
def test_a_line_that_really_removes_the_victim_is_denied(program: str, suffix: str) -> None:
    command = f"{program} {suffix}".replace(AGAIN, program)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "V").write_text("victim")
        traced = run_traced(command, folder)
        ran_rm = any(" rm " in f" {line[2:]} " or line[2:].startswith("rm") for line in traced)
        if (folder / "V").exists() and not ran_rm:
            return
    assert decide(command, allow=["Bash"], deny=["Bash(rm:*)"]) is Verdict.DENY, command


# ---- "allow always" keeps exactly the command a human saw -----------------------------


@pytest.mark.parametrize(
    ("approved", "other"),
    [("*", "rm -rf x"), ("ls *.py", "ls a.py"), ("rm -rf /tmp/x:*", "rm -rf /tmp/x /home")],
)
def test_allow_always_never_becomes_a_pattern(approved: str, other: str) -> None:
    policy = PermissionPolicy.from_lists()
    rule = policy.allow_always("Bash", {"command": approved})
    # the rule survives being stored as text in the session and parsed again on resume
    resumed = PermissionPolicy.from_lists(allow=[str(rule)])
    assert resumed.evaluate("Bash", {"command": approved}, workspace=WS).verdict is Verdict.ALLOW
    assert resumed.evaluate("Bash", {"command": other}, workspace=WS).verdict is Verdict.ASK
