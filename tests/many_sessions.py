"""Many agent sessions in one process over one shared registry (issue 16, item 9).

A web server, a chat bot or a worker pool hosts many sessions in one process, all
built with ``build_agent`` over the same :class:`SkillRegistry`. This module builds
such a house — ``run_house(n)`` sessions, each with its own skill set, permission
mode, allow/deny rules, sub-agent and todo list, driven concurrently in one anyio
task group — and records what every session's model was shown and what happened,
so the tests (``tests/integration/test_many_sessions.py`` with a dozen sessions,
``tests/stress/test_stress_many_sessions.py`` with 50 or 200) can assert that no
session sees another's tools, grants, gating, todos or events.

Every tool-call id, todo and task carries the session's tag (``agent007``), so any
foreign tag found in a session's messages, events or state is a leak. Half of the
sessions start only once an early session has loaded a skill with pre-approved
tools and a sub-agent without ``Bash`` has listed its skills: the moments at which
per-session state would leak into a session that starts later. Every agent is built
at once, as a server builds one when a client connects and runs it when the client's
message arrives; other sessions work in between.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.events import Event, SubagentEndEvent, ToolResultEvent
from skilldeck.agent.permissions import ApprovalRequest
from skilldeck.agent.recorder import RunResult
from skilldeck.agent.store import SessionStore
from skilldeck.config import Settings, load_settings
from skilldeck.llm.messages import UserMessage
from skilldeck.llm.scripted import ScriptedModel, ScriptedRequest
from skilldeck.skills.registry import SkillRegistry

#: the shared skills: name -> (frontmatter lines, the tools ``requires-tools`` names)
SKILLS: dict[str, tuple[str, frozenset[str]]] = {
    "echo-grant": ("allowed-tools: Bash(echo:*)\nrequires-tools: [Bash]\n", frozenset({"Bash"})),
    "needs-bash": ("requires-tools: [Bash]\n", frozenset({"Bash"})),
    "needs-web": ("requires-tools: [WebFetch]\n", frozenset({"WebFetch"})),
    "needs-write": ("requires-tools: [Write]\n", frozenset({"Write"})),
    "reader": ("allowed-tools: Read Grep Skill TodoWrite\n", frozenset()),
    "writer": ("allowed-tools: Read Write Skill TodoWrite\n", frozenset()),
    "shell": ("allowed-tools: Bash Read Skill TodoWrite\n", frozenset()),
    "never-here": ("requires-bins: [skilldeck-no-such-program-x9]\n", frozenset()),
    "plain": ("", frozenset()),
}
#: gated by the machine (a missing program), never by an agent's tools
MACHINE_UNAVAILABLE = frozenset({"never-here"})


def call(cid: str, name: str, **input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": input}


def todo(tag: str, what: str) -> dict[str, Any]:
    return call(
        f"{tag}-todo-{what}",
        "TodoWrite",
        todos=[{"content": f"{tag} {what}", "status": "in_progress", "activeForm": f"{tag}"}],
    )


# ---- the profiles ----------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """One kind of session: how it is built, its script and what it should see."""

    name: str
    mode: str
    script: Callable[[str], list[dict[str, Any]]]
    skills: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    #: the call ids (after the tag and a dash) a human is asked about, in order
    asked: tuple[str, ...] = ()
    #: call ids (after the tag) whose result must be an error / must succeed
    fails: tuple[str, ...] = ()
    succeeds: tuple[str, ...] = ()
    #: the child a Task call spawns, if any: its prompt is ``child of <tag>``
    child: bool = False


def _grant(tag: str) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [todo(tag, "grant"), call(f"{tag}-b0", "Bash", command=f"echo {tag}-0")]},
        {"tool_calls": [call(f"{tag}-s", "Skill", skill="echo-grant")]},
        {"tool_calls": [call(f"{tag}-b1", "Bash", command=f"echo {tag}-1")]},
        {"text": f"{tag} done"},
    ]


def _ungranted(tag: str) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [todo(tag, "ask"), call(f"{tag}-b0", "Bash", command=f"echo {tag}-0")]},
        {"text": f"{tag} done"},
    ]


def _no_bash(tag: str) -> list[dict[str, Any]]:
    return [
        {
            "tool_calls": [
                todo(tag, "edit"),
                call(f"{tag}-w", "Write", file_path=f"{tag}.txt", content=tag),
            ]
        },
        {"tool_calls": [call(f"{tag}-s0", "Skill", skill="needs-bash")]},
        {"tool_calls": [call(f"{tag}-s1", "Skill", skill="needs-write")]},
        {"text": f"{tag} done"},
    ]


def _plan(tag: str) -> list[dict[str, Any]]:
    return [
        {
            "tool_calls": [
                todo(tag, "plan"),
                call(f"{tag}-r", "Read", file_path="notes.txt"),
                call(f"{tag}-w", "Write", file_path=f"{tag}.txt", content=tag),
            ]
        },
        {"text": f"{tag} done"},
    ]


def _spawner(
    skills: list[str], child_skill: str, *, background: bool = False
) -> Callable[[str], list[dict[str, Any]]]:
    """A Task call; a background child (its own thread and event loop) is awaited
    with TaskOutput before the parent goes on."""

    def script(tag: str) -> list[dict[str, Any]]:
        task = call(
            f"{tag}-task",
            "Task",
            description=f"help {tag}",
            prompt=f"child of {tag}",
            skills=skills,
            run_in_background=background,
        )
        child = f"child of {tag}"
        wait = [{"tool_calls": [call(f"{tag}-out", "TaskOutput", task_id="task_1")]}]
        return [
            {"tool_calls": [todo(tag, "parent"), task]},
            *(wait if background else []),
            {"for": child, "tool_calls": [todo(tag, "child")]},
            {"for": child, "tool_calls": [call(f"{tag}-cs", "Skill", skill=child_skill)]},
            {"for": child, "text": f"{tag} child done"},
            {"tool_calls": [call(f"{tag}-b", "Bash", command=f"echo {tag}")]},
            {"text": f"{tag} done"},
        ]

    return script


def _composed(extra: dict[str, Any]) -> Callable[[str], list[dict[str, Any]]]:
    def script(tag: str) -> list[dict[str, Any]]:
        name = extra["name"]
        args = {
            k: (v.format(tag=tag) if isinstance(v, str) else v) for k, v in extra["input"].items()
        }
        return [
            {"tool_calls": [todo(tag, "composed"), call(f"{tag}-x", name, **args)]},
            {"tool_calls": [call(f"{tag}-s", "Skill", skill=extra["skill"])]},
            {"tool_calls": [call(f"{tag}-f", "WebFetch", url="https://example.com")]},
            {"text": f"{tag} done"},
        ]

    return script


def _allow_rules(tag: str) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [todo(tag, "rules"), call(f"{tag}-b", "Bash", command=f"echo {tag}")]},
        {"text": f"{tag} done"},
    ]


PROFILES: tuple[Profile, ...] = (
    Profile("grant", "default", _grant, asked=("b0",), fails=("b0",), succeeds=("s", "b1")),
    Profile(
        "spawn-reader",
        "bypassPermissions",
        _spawner(["reader"], "needs-bash"),  # the child holds Skill but not Bash
        child=True,
        fails=("cs",),
        succeeds=("task", "b"),
    ),
    Profile(
        "no-bash", "acceptEdits", _no_bash, deny=("Bash",), fails=("s0",), succeeds=("w", "s1")
    ),
    Profile("plan", "plan", _plan, fails=("w",), succeeds=("r",)),
    Profile(
        "composed-shell",
        "bypassPermissions",
        _composed({"name": "Bash", "input": {"command": "echo {tag}"}, "skill": "needs-bash"}),
        skills=("shell",),
        fails=("f",),
        succeeds=("x", "s"),
    ),
    Profile("ungranted", "default", _ungranted, asked=("b0",), fails=("b0",)),
    Profile(
        "composed-writer",
        "acceptEdits",
        _composed(
            {
                "name": "Write",
                "input": {"file_path": "{tag}.txt", "content": "{tag}"},
                "skill": "needs-write",
            }
        ),
        skills=("writer",),
        fails=("f",),
        succeeds=("x", "s"),
    ),
    Profile(
        "allow-rules",
        "default",
        _allow_rules,
        allow=("Bash(echo:*)",),
        deny=("WebFetch", "Write"),
        succeeds=("b",),
    ),
    Profile(
        "spawn-background",
        "bypassPermissions",
        _spawner(["reader"], "needs-bash", background=True),  # a child in another thread
        child=True,
        fails=("cs",),
        succeeds=("task", "out", "b"),
    ),
    Profile(
        "spawn-general",
        "bypassPermissions",
        _spawner([], "needs-bash"),  # the child inherits Bash and gets its own Skill tool
        child=True,
        succeeds=("task", "cs", "b"),
    ),
)


# ---- the house ---------------------------------------------------------------------------


@dataclass
class Session:
    """One session of the house and what it saw."""

    index: int
    tag: str
    profile: Profile
    model: ScriptedModel
    events: list[Event] = field(default_factory=list)
    approvals: list[ApprovalRequest] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    result: RunResult | None = None
    error: BaseException | None = None

    @property
    def task(self) -> str:
        return f"task {self.tag}"

    def approve(self, request: ApprovalRequest) -> bool:
        """A human who is asked, notes it, and says no."""
        self.approvals.append(request)
        return False

    def requests(self, *, child: bool) -> list[ScriptedRequest]:
        """What the model was shown, for the session itself or for its child."""
        return [r for r in self.model.requests if (_task(r) != self.task) == child]


def _task(request: ScriptedRequest) -> str:
    users = [m for m in request.messages if isinstance(m, UserMessage) and m.meta is None]
    return users[0].content if users else ""


@dataclass
class House:
    """The sessions of one run, the shared registry and the settings they ran with."""

    settings: Settings
    registry: SkillRegistry
    sessions: list[Session]
    root: Path
    #: set by the early sessions' events; the late sessions start once both are true
    granted: bool = False
    child_gated: bool = False
    #: early sessions still running (when none is, the late ones start anyway)
    early_left: int = 0

    def store(self) -> SessionStore:
        return SessionStore.open(self.settings)


def build_house(tmp: Path, count: int) -> House:
    """Skills, settings, one registry and ``count`` sessions (profiles in turn)."""
    skills = tmp / "skills"
    for name, (front, _) in SKILLS.items():
        folder = skills / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {name} helps with shared tests\n{front}---\n"
            f"Use {name} well.\n",
            encoding="utf-8",
        )
    settings = load_settings(workspace=tmp, home=tmp / "home", skills={"hints": {"enabled": False}})
    registry = SkillRegistry.discover(settings, roots=[skills], no_defaults=True)
    sessions = []
    for index in range(count):
        tag = f"agent{index:03d}"
        profile = PROFILES[index % len(PROFILES)]
        model = ScriptedModel.from_lines(profile.script(tag), name=f"scripted:{tag}")
        sessions.append(Session(index, tag, profile, model))
        work = tmp / tag
        work.mkdir()
        (work / "notes.txt").write_text(f"notes of {tag}\n", encoding="utf-8")
    return House(settings, registry, sessions, tmp, early_left=count // 2)


def run_house(tmp: Path, count: int) -> House:
    """Build the house and run every session concurrently in one task group."""
    house = build_house(tmp, count)
    shared = house.store()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for session in house.sessions:
                tg.start_soon(_run_one, house, session, shared)

    try:
        anyio.run(main)
    finally:
        shared.close()
    return house


async def _run_one(house: House, session: Session, shared: SessionStore) -> None:
    """One session, built at once (a client connects); the late half runs its task
    only once a grant exists and a Bash-less child has listed its skills."""
    profile = session.profile

    def on_event(event: Event) -> None:
        session.events.append(event)
        if isinstance(event, ToolResultEvent) and event.name == "Skill" and not event.is_error:
            house.granted = house.granted or profile.name == "grant"
        if isinstance(event, SubagentEndEvent) and profile.name == "spawn-reader":
            house.child_gated = True

    late = session.index >= len(house.sessions) // 2
    try:
        with build_agent(
            house.settings,
            model=session.model,
            registry=house.registry,
            cwd=house.root / session.tag,
            skills=list(profile.skills),
            permission_mode=profile.mode,
            allow=list(profile.allow),
            deny=list(profile.deny),
            approver=session.approve,
            on_event=on_event,
            session_store=shared if session.index % 2 == 0 else None,
            json_events=True,
            hints=False,
        ) as agent:
            session.tools = agent.tools.names()
            while late and house.early_left and not (house.granted and house.child_gated):
                await anyio.sleep(0.005)  # a client whose message comes later
            session.result = await agent.run(session.task)
    except BaseException as e:  # collected, so one failure does not hide the others
        session.error = e
    finally:
        house.early_left -= not late


def house_fixture(count: int) -> Iterator[tuple[House, SessionStore]]:
    """Run the house once and open its store, under the guards tests/conftest.py gives
    each test (run here by a module-scoped fixture, before those exist): an isolated
    home, workspaces trusted, no ``SKILLDECK_*`` from outside."""
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.startswith("SKILLDECK_"):
                mp.delenv(key)
        mp.setenv("SKILLDECK_TRUST_WORKSPACE", "1")
        tmp = Path(tempfile.mkdtemp(prefix="skilldeck-house-"))
        mp.setenv("HOME", str(tmp))
        try:
            house = run_house(tmp, count)
            store = house.store()
            try:
                yield house, store
            finally:
                store.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
