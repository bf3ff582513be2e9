"""Rule holes a prompt-injected model or a skill author used (issue 15, class 8):
a skill's ``allowed-tools`` pattern granting ``Task``, ``Skill(...)`` deny rules
bypassed by another spelling of the name, ``WebFetch(domain:…)`` rules bypassed by
another spelling of the host, and skill names that are paths.

Every attack goes through what the model or the author really controls: tool calls
from a scripted model through the agent's gate, or files on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.events import SubagentStartEvent, ToolResultEvent
from skilldeck.agent.permissions import PermissionPolicy, Verdict
from skilldeck.config import Settings, load_settings
from skilldeck.errors import PackageError, PolicyError, SkillExecutionError, SkillValidationError
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.skills.execution import ScriptRunner, scratch_prefix
from skilldeck.skills.format import load_skill
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import call_name, is_safe_name
from skilldeck.skills.packaging import install, pack
from skilldeck.skills.packaging.lockfile import LockEntry, LockFile, lock_path, skills_root, verify
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.rules import ToolRule
from skilldeck.tools.base import ToolContext
from skilldeck.tools.skill_tool import SkillTool

pytestmark = pytest.mark.anyio


def write_skill(root: Path, folder: str, frontmatter: str, body: str = "Do it.") -> Path:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(f"---\n{frontmatter}---\n{body}\n", encoding="utf-8")
    return path


def call(cid: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": tool_input}


def results(events: list[Any]) -> dict[str, ToolResultEvent]:
    return {e.id: e for e in events if isinstance(e, ToolResultEvent) and not e.is_sub_agent}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def settings_for(work: Path, home: Path) -> Settings:
    return load_settings(workspace=work, home=home)


# ---- allowed-tools patterns never grant spawning tools ------------------------------

SPAWN_PATTERNS = ["*", "T*", "Ta?k", "*k", "*Output", "*(general-purpose)", "T*(*)", "Agent"]


@pytest.mark.parametrize("pattern", SPAWN_PATTERNS)
async def test_no_allowed_tools_pattern_lets_a_skill_set_spawn(
    pattern: str, tmp_path: Path, work: Path, skilldeck_home: Path
) -> None:
    roots = tmp_path / "skills"
    write_skill(
        roots, "spawner", f"name: spawner\ndescription: spawns\nallowed-tools: Read, {pattern}\n"
    )
    model = ScriptedModel.from_lines(
        [
            {
                "tool_calls": [
                    call("t", "Task", description="go", prompt="touch x"),
                    call("a", "Agent", description="go", prompt="touch x"),
                    call("o", "TaskOutput", task_id="task_1"),
                ]
            },
            {"text": "done"},
        ]
    )
    with build_agent(
        settings_for(work, skilldeck_home),
        model=model,
        cwd=work,
        roots=[roots],
        no_defaults=True,
        skills=["spawner"],
        permission_mode="bypassPermissions",
        hints=False,
    ) as agent:
        names = set(agent.tools.names())
        assert not names & {"Task", "Agent", "TaskOutput"}, names
        assert "Read" in names
        assert agent.composed is not None
        assert any(w.code == "SD310" for w in agent.composed.warnings)
        result = await agent.run("spawn something")
    assert not any(isinstance(e, SubagentStartEvent) for e in result.events)
    for cid in ("t", "a", "o"):
        outcome = results(result.events)[cid]
        assert outcome.is_error and "not allowed" in outcome.content, outcome.content


def test_a_bracket_pattern_is_refused_not_widened(tmp_path: Path, skilldeck_home: Path) -> None:
    roots = tmp_path / "skills"
    write_skill(roots, "bracket", "name: bracket\ndescription: b\nallowed-tools: Read [T]ask\n")
    settings = load_settings(workspace=tmp_path, home=skilldeck_home)
    registry = SkillRegistry.discover(settings, roots=[roots], no_defaults=True, use_cache=False)
    from skilldeck.skills.policy.policy import compose

    with pytest.raises(PolicyError, match="SD309"):
        compose(["bracket"], registry)


@pytest.mark.parametrize("pattern", SPAWN_PATTERNS)
def test_a_loaded_skills_pre_approval_never_covers_spawning(pattern: str, tmp_path: Path) -> None:
    """The Skill tool's pre-approval path (a loaded skill's allowed-tools become the
    session's allow rules): a pattern never approves Task/Agent/TaskOutput, even in
    string form as the session stores it, while deny/ask patterns still cover them."""
    policy = PermissionPolicy.from_lists(mode="default", ask=["Task", "Agent", "TaskOutput"])
    policy.preapprove_skill([pattern], [])
    stored = PermissionPolicy.from_lists(mode="default", allow=[str(r) for r in policy.allow])
    for tool in ("Task", "Agent", "TaskOutput"):
        tool_input = {"description": "d", "prompt": "p", "subagent_type": "general-purpose"}
        assert policy.evaluate(tool, tool_input, workspace=tmp_path).verdict is Verdict.ASK
        decision = stored.evaluate(tool, tool_input, workspace=tmp_path)
        assert decision.rule is None, decision  # not approved by the skill's rule
    deny = PermissionPolicy.from_lists(mode="bypassPermissions", deny=["T*", "A*"])
    assert deny.evaluate("Task", {}, workspace=tmp_path).verdict is Verdict.DENY
    assert deny.evaluate("Agent", {}, workspace=tmp_path).verdict is Verdict.DENY
    assert ToolRule.parse("*").matches("Task", {}, workspace=tmp_path, deny=True)


# ---- Skill(...) rules match the name the Skill tool loads ----------------------------

SPELLINGS = [
    "/deploy-prod",
    " deploy-prod",
    "deploy-prod ",
    "//deploy-prod",
    "/ deploy-prod",
    "\tdeploy-prod\n",
    " / /deploy-prod",
]


async def test_skill_deny_rule_holds_for_every_spelling_the_tool_accepts(
    tmp_path: Path, work: Path, skilldeck_home: Path
) -> None:
    roots = tmp_path / "skills"
    write_skill(roots, "deploy-prod", "name: deploy-prod\ndescription: deploys\n", "SECRET-STEPS")
    write_skill(roots, "notes", "name: notes\ndescription: notes\n", "NOTES-BODY")
    others = ["DEPLOY-prod", "Deploy-Prod", "plugin:deploy-prod", "plugin::deploy-prod"]
    calls = [call(f"s{i}", "Skill", skill=s) for i, s in enumerate([*SPELLINGS, *others])]
    calls.append(call("ok", "Skill", skill="/notes"))
    model = ScriptedModel.from_lines([{"tool_calls": calls}, {"text": "done"}])
    with build_agent(
        settings_for(work, skilldeck_home),
        model=model,
        cwd=work,
        roots=[roots],
        no_defaults=True,
        deny=["Skill(deploy-*)"],
        permission_mode="bypassPermissions",
        hints=False,
    ) as agent:
        result = await agent.run("deploy")
    by_id = results(result.events)
    for i in range(len(SPELLINGS) + len(others)):
        outcome = by_id[f"s{i}"]
        assert outcome.is_error and "SECRET-STEPS" not in outcome.content, outcome.content
        assert "denied" in outcome.content.lower()
    assert "NOTES-BODY" in by_id["ok"].content  # the rule denies only what it names


def test_the_tool_and_the_rule_resolve_a_name_the_same_way(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    roots = tmp_path / "skills"
    write_skill(roots, "deploy-prod", "name: deploy-prod\ndescription: deploys\n")
    settings = load_settings(workspace=tmp_path, home=skilldeck_home)
    registry = SkillRegistry.discover(settings, roots=[roots], no_defaults=True, use_cache=False)
    tool = SkillTool(registry)
    deny = ToolRule.parse("Skill(deploy-*)")
    for raw in [*SPELLINGS, "deploy-prod", " \u3000/deploy-prod\u2003"]:
        assert tool.lookup(raw).name == "deploy-prod" == call_name(raw)
        assert deny.matches("Skill", {"skill": raw}, workspace=tmp_path, deny=True)


# ---- WebFetch(domain:…) rules read the host as a resolver does -----------------------

LOOPBACK_SPELLINGS = [
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.1/admin",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://127.0.0.1./",
    "http://127.0.0.1:8080/x",
]


async def test_webfetch_deny_holds_for_every_spelling_of_an_address(
    work: Path, skilldeck_home: Path
) -> None:
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(200, text="INTERNAL-ADMIN")

    calls = [call(f"w{i}", "WebFetch", url=u, prompt="p") for i, u in enumerate(LOOPBACK_SPELLINGS)]
    model = ScriptedModel.from_lines([{"tool_calls": calls}, {"text": "done"}])
    with build_agent(
        settings_for(work, skilldeck_home),
        model=model,
        cwd=work,
        deny=["WebFetch(domain:127.0.0.1)"],
        permission_mode="bypassPermissions",
        services={"http_transport": httpx2.MockTransport(handler)},
        hints=False,
    ) as agent:
        result = await agent.run("fetch")
    by_id = results(result.events)
    for i, url in enumerate(LOOPBACK_SPELLINGS):
        assert by_id[f"w{i}"].is_error, url
        assert "INTERNAL-ADMIN" not in by_id[f"w{i}"].content
    assert seen == []


@pytest.mark.parametrize(
    "url",
    [
        "http://EVIL.com./",
        "http://evil.com\\@example.com/",
        "http://example.com@evil.com/",
        "http://example.com.evil.com/",
        "http://evil.com/?x=example.com",
        "http://%65vil.com/",
        "http://ｅｖｉｌ.com/",
    ],
)
async def test_webfetch_allow_for_one_domain_approves_no_other_host(
    url: str, work: Path, tmp_path: Path
) -> None:
    policy = PermissionPolicy.from_lists(mode="default", allow=["WebFetch(domain:example.com)"])
    decision = policy.evaluate("WebFetch", {"url": url, "prompt": "p"}, workspace=tmp_path)
    assert decision.verdict is Verdict.ASK, decision
    deny = PermissionPolicy.from_lists(mode="bypassPermissions", deny=["WebFetch(domain:evil.com)"])
    if "evil.com" in url.lower().split("?")[0] or "%65" in url or "ｅ" in url:
        verdict = deny.evaluate("WebFetch", {"url": url, "prompt": "p"}, workspace=tmp_path)
        assert verdict.verdict is Verdict.DENY, url


async def test_webfetch_fetches_the_host_that_was_checked(tmp_path: Path) -> None:
    from skilldeck.tools.web import WebFetchTool

    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.url.host)
        return httpx2.Response(200, text="page", headers={"content-type": "text/plain"})

    ctx = ToolContext(session_id="t", workspace=tmp_path, settings=Settings(workspace=tmp_path))
    ctx.services["http_transport"] = httpx2.MockTransport(handler)
    tool = WebFetchTool()
    ok = await tool.call({"url": "https://Example.COM./a", "prompt": "p"}, ctx)
    assert not ok.is_error and seen == ["example.com"]
    for bad in ("http://evil.com\\@example.com/", "https://a.com@b.com/", "https://%62.com/"):
        refused = await tool.call({"url": bad, "prompt": "p"}, ctx)
        assert refused.is_error, bad
    assert seen == ["example.com"]


# ---- skill names are never paths ----------------------------------------------------

UNSAFE_NAMES = [
    "../../evil",
    "a/b",
    "..",
    ".hidden",
    "x\\\\y",
    "a\\0b",
    "deploy\\u200bprod",
    "\\u2025\\uff0fevil",  # ‥／ : NFKC makes it ../
    "bell\\x07",
]


@pytest.mark.parametrize("raw", UNSAFE_NAMES)
def test_an_unsafe_name_makes_the_skill_invalid_with_sd108(raw: str, tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "x", f'name: "{raw}"\ndescription: d\n')
    skill, diagnostics = load_skill(folder / "SKILL.md")
    assert skill is None
    sd108 = [d for d in diagnostics if d.code == "SD108"]
    assert sd108 and sd108[0].is_error and sd108[0].line == 2
    assert sd108[0].path == folder / "SKILL.md"
    strict, _ = load_skill(folder / "SKILL.md", strict=True)
    assert strict is None


def test_discovery_never_registers_an_unsafe_name(tmp_path: Path, skilldeck_home: Path) -> None:
    roots = tmp_path / "skills"
    write_skill(roots, "evil", 'name: "../../evil"\ndescription: d\nentrypoint: run.sh\n')
    write_skill(roots, "good", "name: good\ndescription: d\n")
    settings = load_settings(workspace=tmp_path, home=skilldeck_home)
    registry = SkillRegistry.discover(settings, roots=[roots], no_defaults=True, use_cache=False)
    assert registry.names() == ["good"]
    assert any("SD108" in str(d) for d in registry.diagnostics + registry.invalid)


async def test_a_runner_never_makes_a_path_from_an_unsafe_name(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    folder = write_skill(tmp_path / "s", "evil", "name: evil\ndescription: d\nentrypoint: r.sh\n")
    (folder / "r.sh").write_text("#!/bin/sh\necho '{}'\n", encoding="utf-8")
    skill, _ = load_skill(folder)
    assert skill is not None
    forged = Skill(
        skill.metadata.model_copy(update={"name": "../../evil"}),
        skill.folder,
        skill.folder / "SKILL.md",
        kind=skill.kind,
    )
    settings = load_settings(workspace=tmp_path, home=skilldeck_home)
    with pytest.raises(SkillExecutionError, match="cannot be used"):
        await ScriptRunner(settings).run(forged, {})
    for name in ("../../evil", "a/b", "\x00", "..", "x" * 500):
        prefix = scratch_prefix(name)
        assert "/" not in prefix and "\x00" not in prefix and ".." not in prefix


def test_an_unsafe_name_is_never_packed_installed_or_verified_elsewhere(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    settings = load_settings(workspace=work, home=skilldeck_home)
    folder = write_skill(tmp_path / "src", "evil", 'name: "../../evil"\ndescription: d\n')
    with pytest.raises(SkillValidationError, match="SD108"):
        pack(folder, output=tmp_path / "out.skill")
    with pytest.raises(SkillValidationError, match="SD108"):
        install(folder, settings=settings)
    assert not (work / ".skilldeck" / "evil").exists() and not (work / "evil").exists()
    # a hand-edited lock file cannot aim verify (or uninstall) outside the skills root
    target = tmp_path / "outside"
    target.mkdir()
    (target / "f").write_text("x", encoding="utf-8")
    lock = LockFile(lock_path(settings, "workspace"))
    lock.skills["../../../outside"] = LockEntry("../../../outside", None, "s", "t", "d", {})
    lock.write()
    skills_root(settings, "workspace").mkdir(parents=True, exist_ok=True)
    problems = verify(settings, scope="workspace")
    assert [p.kind for p in problems] == ["unsafe"] and problems[0].path is None
    from skilldeck.skills.packaging import uninstall

    with pytest.raises(PackageError, match="cannot be used"):
        uninstall("../../../outside", settings=settings)
    assert (target / "f").exists()


def test_safe_names_stay_usable() -> None:
    for name in ("pdf", "deploy-prod", "Metasploit Framework", "über-tool", "a_b", "stitch::x"):
        assert is_safe_name(name), name
