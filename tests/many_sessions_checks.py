"""What "no session sees another's state" means, checked on a finished house.

Each function returns a list of problems (empty: isolated), one line each naming the
session, so a failing test prints every leak at once. See ``many_sessions.py``.
"""

from __future__ import annotations

import re
from typing import Any

from many_sessions import MACHINE_UNAVAILABLE, SKILLS, House, Session
from skilldeck.agent.events import DoneEvent, Event, ToolCallEvent, ToolResultEvent
from skilldeck.agent.permissions import SESSION_RULES_KEY
from skilldeck.agent.store import SessionStore
from skilldeck.llm.messages import SystemMessage
from skilldeck.llm.scripted import ScriptedRequest

TAG_RE = re.compile(r"agent\d{3}")
NAME_RE = re.compile(r"<name>([^<]*)</name>")
BLOCK_RE = re.compile(r"<available_skills>.*?</available_skills>", re.S)
#: what the tools offered must (not) hold, by profile: (parent, child)
EXACT_TOOLS: dict[str, set[str]] = {
    "composed-shell": {"Bash", "Read", "Skill", "TodoWrite"},
    "composed-writer": {"Read", "Write", "Skill", "TodoWrite"},
    "spawn-reader/child": {"Read", "Grep", "Skill", "TodoWrite"},
    "spawn-background/child": {"Read", "Grep", "Skill", "TodoWrite"},
}
LACKS_TOOLS: dict[str, set[str]] = {
    "no-bash": {"Bash"},
    "allow-rules": {"WebFetch", "Write"},
    "spawn-general/child": {"Task", "TaskOutput", "Agent"},
}


def expected_level1(tool_names: set[str]) -> set[str]:
    """The skills an agent holding ``tool_names`` may be offered at level 1."""
    return {
        name
        for name, (_, needs) in SKILLS.items()
        if needs <= tool_names and name not in MACHINE_UNAVAILABLE
    }


def run_problems(house: House) -> list[str]:
    """Every session completed, and each scripted call failed or succeeded as planned."""
    out = []
    for s in house.sessions:
        if s.error is not None or s.result is None:
            out.append(f"{s.tag} ({s.profile.name}): raised {s.error!r}")
            continue
        if s.result.status != "completed":
            out.append(f"{s.tag}: status {s.result.status} ({s.result.reason})")
        by_id = {e.id: e for e in s.events if isinstance(e, ToolResultEvent)}
        for short in (*s.profile.fails, *s.profile.succeeds):
            event = by_id.get(f"{s.tag}-{short}")
            want_error = short in s.profile.fails
            if event is None:
                out.append(f"{s.tag} ({s.profile.name}): no result for {short}")
            elif event.is_error != want_error:
                out.append(
                    f"{s.tag} ({s.profile.name}): {short} is_error={event.is_error}: "
                    f"{event.content[:200]!r}"
                )
    return out


def tool_problems(house: House) -> list[str]:
    """Each model call offered exactly its own session's (or child's) tools — but
    ``TaskOutput``, which the loop offers only while a background task exists
    (``Agent.offered_specs``): a call may lack it, and nothing else."""
    out = []
    for s in house.sessions:
        parent = [set(r.tool_names) for r in s.requests(child=False)]
        built = set(s.tools)
        if not parent or any(t not in (built, built - {"TaskOutput"}) for t in parent):
            out.append(f"{s.tag}: offered {sorted(map(sorted, parent))}, built {s.tools}")
        children = [set(r.tool_names) for r in s.requests(child=True)]
        if s.profile.child and not children:
            out.append(f"{s.tag}: its child never called the model")
        for who, sets in ((s.profile.name, parent), (f"{s.profile.name}/child", children)):
            for names in sets:
                exact, lacks = EXACT_TOOLS.get(who), LACKS_TOOLS.get(who, set())
                if (exact is not None and names != exact) or names & lacks:
                    out.append(f"{s.tag} {who}: offered {sorted(names)}")
                if who.endswith("/child") and not names <= set(s.tools):
                    out.append(f"{s.tag} child holds more than its parent: {sorted(names)}")
    return out


def grant_problems(house: House, store: SessionStore) -> list[str]:
    """Humans were asked only about their own session's calls, and only where no
    grant of that same session covered the call; no session holds another's grant."""
    out = []
    for s in house.sessions:
        if s.result is None:
            continue
        asked = [r.call.id for r in s.approvals]
        if asked != [f"{s.tag}-{short}" for short in s.profile.asked]:
            out.append(f"{s.tag} ({s.profile.name}): asked about {asked}")
        if any(r.session_id != s.result.session_id for r in s.approvals):
            out.append(f"{s.tag}: an approval request named another session")
        rules = store.get(s.result.session_id).state.get(SESSION_RULES_KEY) or {}
        allowed = list(rules.get("allow", []))
        if s.profile.name != "grant" and "Bash(echo:*)" in allowed:
            out.append(f"{s.tag} ({s.profile.name}): holds a grant it never loaded: {allowed}")
    return out


def _names(block: str | None) -> set[str] | None:
    return None if block is None else set(NAME_RE.findall(block))


def _level1(request: ScriptedRequest) -> tuple[set[str] | None, set[str] | None]:
    """The skill names of the system prompt's block and of the Skill tool's (which
    must have none: the catalog is sent once, in the system prompt)."""
    system = next((m for m in request.messages if isinstance(m, SystemMessage)), None)
    found = BLOCK_RE.search(system.content) if system is not None else None
    prompt = _names(found.group(0) if found else None)
    spec = next((t for t in request.tools if t.name == "Skill"), None)
    tool_block = BLOCK_RE.search(spec.description) if spec is not None else None
    return prompt, _names(tool_block.group(0) if tool_block else None)


def gating_problems(house: House) -> list[str]:
    """Each model call's level-1 block lists exactly the skills its own tools allow."""
    out = []
    for s in house.sessions:
        for child in (False, True):
            for n, r in enumerate(s.requests(child=child)):
                tools = set(r.tool_names)
                want = expected_level1(tools) if "Skill" in tools else None
                prompt, tool = _level1(r)
                who = f"{s.tag} ({s.profile.name}{'/child' if child else ''}) call {n}"
                if prompt != want:
                    out.append(f"{who}: system prompt lists {_show(prompt)}, want {_show(want)}")
                if tool is not None:  # the catalog is sent once: in the system prompt
                    out.append(f"{who}: Skill tool repeats the catalog: {_show(tool)}")
    return out


def _show(names: set[str] | None) -> str:
    return "no block" if names is None else str(sorted(names))


def _children(store: SessionStore, session_id: str) -> list[str]:
    return [r.id for r in store.list(limit=100_000) if r.parent_id == session_id]


def _todo_texts(s: Session, *, child: bool) -> list[str]:
    """The todo contents the session's (or its child's) last TodoWrite set."""
    lines = [ln for ln in s.model.lines if (ln.for_ is not None) == child]
    writes = [c for ln in lines for c in ln.tool_calls if c.name == "TodoWrite"]
    return [t["content"] for t in writes[-1].input["todos"]] if writes else []


def todo_problems(house: House, store: SessionStore) -> list[str]:
    """Each session's (and each child's) todo list is exactly what it wrote."""
    out = []
    for s in house.sessions:
        if s.result is None:
            continue
        own = [t["content"] for t in store.todos(s.result.session_id)]
        if own != _todo_texts(s, child=False):
            out.append(f"{s.tag} ({s.profile.name}): todos {own}")
        kids = _children(store, s.result.session_id)
        if len(kids) != int(s.profile.child):
            out.append(f"{s.tag}: {len(kids)} child sessions")
        for kid in kids:
            theirs = [t["content"] for t in store.todos(kid)]
            if theirs != _todo_texts(s, child=True):
                out.append(f"{s.tag} child: todos {theirs}")
    return out


def _foreign(tag: str, text: str) -> set[str]:
    return {t for t in TAG_RE.findall(text) if t != tag}


def _event_leaks(s: Session, events: list[Event], ids: set[str], where: str) -> list[str]:
    out = []
    for e in events:
        if isinstance(e, ToolCallEvent | ToolResultEvent) and not e.id.startswith(f"{s.tag}-"):
            out.append(f"{s.tag} {where}: foreign call id {e.id}")
        if isinstance(e, DoneEvent) and e.session_id not in ids:
            out.append(f"{s.tag} {where}: done event of session {e.session_id}")
        foreign = _foreign(s.tag, e.model_dump_json())
        if foreign:
            out.append(f"{s.tag} {where}: {e.type} event mentions {sorted(foreign)}")
    return out


def event_problems(house: House, store: SessionStore) -> list[str]:
    """Events (live, returned, stored) and every message a model saw are the
    session's own: its call ids, its session ids, never another session's tag."""
    out = []
    for s in house.sessions:
        if s.result is None:
            continue
        kids = _children(store, s.result.session_id)
        ids = {s.result.session_id, *kids}
        out += _event_leaks(s, s.events, ids, "live")
        out += _event_leaks(s, s.result.events, ids, "returned")
        for sid in ids:
            out += _event_leaks(s, store.events(sid), ids, f"stored {sid[:8]}")
        for r in s.model.requests:
            text = "".join(_dump(m) for m in r.messages)
            if _foreign(s.tag, text):
                out.append(f"{s.tag}: its model saw {sorted(_foreign(s.tag, text))}")
    return out


def _dump(message: Any) -> str:
    return str(message.model_dump_json())
