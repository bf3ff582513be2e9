"""The session service under load: 40 sessions at once (150 with
``SKILLDECK_STRESS_BUDGET=full``) in one service, each pausing for a permission, being
approved, and finishing, with two subscribers each — one from the start, one attaching
after the pause. No session may see another's events; every subscriber sees every
stored event of its session, once, in order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
import stress_helpers as H

from skilldeck.agent.events import TextDeltaEvent
from skilldeck.service import SessionEvent, SessionService

SESSIONS = H.scale(40, 150)
pytestmark = pytest.mark.anyio


def call(cid: str, name: str, **input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": input}


def script(path: Path) -> Path:
    lines = []
    for n in range(SESSIONS):
        tag = f"s{n:04d}"
        lines += [
            {
                "for": tag,
                "text": f"{tag} writes",
                "tool_calls": [call(f"{tag}-w", "Write", file_path=f"{tag}.txt", content=tag)],
            },
            {"for": tag, "text": f"{tag} finished"},
        ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


async def test_many_sessions_pause_resume_and_stay_isolated(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    model = script(tmp_path / "many.jsonl")
    seen: dict[str, list[SessionEvent]] = {}
    late: dict[str, list[SessionEvent]] = {}
    sids: dict[str, str] = {}
    async with SessionService(model=f"scripted:{model}", cwd=work) as service:

        async def one(n: int) -> None:
            tag = f"s{n:04d}"
            sid = sids[tag] = await service.start(f"task {tag}")
            first = [i async for i in service.subscribe(sid)]
            assert await service.approve(sid, f"{tag}-w", "allow")
            rest = [i async for i in service.subscribe(sid, after=first[-1].seq)]
            seen[tag] = first + rest
            late[tag] = [i async for i in service.subscribe(sid)]

        async with anyio.create_task_group() as tg:
            for n in range(SESSIONS):
                tg.start_soon(one, n)
        problems = []
        for tag, sid in sids.items():
            stored = [e.type for e in service.store.events(sid)]
            got = [i.event.type for i in seen[tag] if not isinstance(i.event, TextDeltaEvent)]
            seqs = [i.seq for i in seen[tag]]
            if got != stored or seqs != sorted(set(seqs)):
                problems.append(f"{tag}: saw {got}, stored {stored}")
            later = [i.event.type for i in late[tag] if not isinstance(i.event, TextDeltaEvent)]
            if later != stored:  # (the latest run's deltas stay for it: not compared)
                problems.append(f"{tag}: a late subscriber saw {later}")
            text = " ".join(i.event.model_dump_json() for i in seen[tag])
            foreign = [t for t in sids if t != tag and t in text]
            if foreign or service.store.get(sid).status != "completed":
                problems.append(f"{tag}: foreign {foreign[:3]}, {service.store.get(sid).status}")
            if (work / f"{tag}.txt").read_text() != tag:
                problems.append(f"{tag}: file not written")
    H.add(service_sessions=SESSIONS, service_leaks=len(problems))
    assert not problems, "\n".join(problems[:20])
