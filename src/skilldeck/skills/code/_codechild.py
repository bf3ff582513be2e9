"""The child side of the code-skill protocol (see ``skills/code/codehost.py``).

Started by the parent as ``python -I -B -c <bootstrap> <package dir>``, usually
inside the sandbox. It reads the ``run`` message, re-points fd 1 at stderr (so the
skill's ``print()`` and anything it spawns cannot write on the protocol channel),
imports the skill from source only (``skills/code/_srcimport.py``: no ``.pyc`` is ever
read), and calls ``execute`` with a :class:`SkillContext` whose ``tools`` and ``llm``
are requests to the parent. Whatever the skill does, it does in this process — which
is the point: the parent's memory, rights and open files are out of its reach.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from skilldeck.skills.code._srcimport import import_snapshot, snapshot_code
from skilldeck.skills.code.codeapi import (
    CodeSkill,
    SkillContext,
    SkillResult,
    module_name_for,
    skill_class,
)
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.model.spec import SkillMetadata

__all__ = ["main"]


@dataclass
class _Outcome:
    content: str
    is_error: bool


class _Parent:
    """Requests to the parent, answered by id; a reader thread resolves them."""

    def __init__(self, out: IO[bytes], inp: IO[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self.out, self.inp, self.loop = out, inp, loop
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False, default=str) + "\n"
        with self.lock:
            self.out.write(line.encode("utf-8"))
            self.out.flush()

    def start_reader(self) -> None:
        threading.Thread(target=self._read, name="protocol-reader", daemon=True).start()

    def _read(self) -> None:
        for line in self.inp:
            try:
                msg = json.loads(line)
                self.loop.call_soon_threadsafe(self._resolve, msg)
            except (ValueError, RuntimeError):
                continue
        self.loop.call_soon_threadsafe(self._closed)

    def _resolve(self, msg: Any) -> None:
        ident = msg.get("id") if isinstance(msg, dict) else None
        fut = self.pending.pop(ident, None) if isinstance(ident, int) else None
        if fut is not None and not fut.done():
            fut.set_result(msg)

    def _closed(self) -> None:
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError("the parent closed the protocol channel"))

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        ident = next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self.pending[ident] = fut
        self.send({**message, "id": ident})
        return await fut


class _Tools:
    def __init__(self, parent: _Parent) -> None:
        self.parent = parent

    async def call(self, name: str, input: dict[str, Any]) -> _Outcome:
        reply = await self.parent.request({"type": "tool_call", "name": name, "input": input})
        return _Outcome(str(reply.get("content", "")), bool(reply.get("is_error", True)))


class _LLM:
    def __init__(self, parent: _Parent) -> None:
        self.parent = parent

    async def complete(self, prompt: str, system: str | None = None) -> str:
        reply = await self.parent.request({"type": "llm_call", "prompt": prompt, "system": system})
        if "error" in reply:
            raise RuntimeError(f"ctx.llm failed: {reply['error']}")
        return str(reply.get("text", ""))


def _load(spec: dict[str, Any]) -> CodeSkill:
    folder = Path(spec["folder"])
    snapshot = snapshot_code(folder)
    module = import_snapshot(snapshot, module_name_for(spec["name"], snapshot.digest))
    skill = Skill(
        metadata=SkillMetadata.model_validate(spec["metadata"]),
        folder=folder,
        skill_md=Path(spec["skill_md"]),
        source=SkillSource.ROOT,
        kind=SkillKind.CODE,
    )
    return skill_class(module, folder / "skill.py")(skill)


async def _run(request: dict[str, Any], parent: _Parent) -> dict[str, Any]:
    c = request["context"]
    instance = _load(request["skill"])
    ctx = SkillContext(
        tools=_Tools(parent),
        llm=_LLM(parent) if c.get("llm") else None,
        session=str(c.get("session", "none")),
        user_message=str(c.get("user_message", "")),
        config=dict(c.get("config") or {}),
        args=request.get("args"),
        skill_dir=Path(c["skill_dir"]),
        workspace=Path(c["workspace"]) if c.get("workspace") else None,
        state=dict(c.get("state") or {}),
    )
    name = request["skill"]["name"]
    try:
        result = await instance.execute(ctx)
    except Exception as e:
        traceback.print_exc()
        return {"type": "error", "error": f"Code skill {name!r} raised {type(e).__name__}: {e}"}
    if not isinstance(result, SkillResult):
        kind = type(result).__name__
        return {
            "type": "error",
            "error": f"Code skill {name!r} returned {kind}, not a SkillResult.",
        }
    try:
        state = json.loads(json.dumps(ctx.state))
    except (TypeError, ValueError):
        state = None
    return {"type": "result", "result": result.to_dict(), "state": state}


def main() -> int:
    """Entry point: one ``run`` request in, one final message out; 0 unless broken."""
    sys.dont_write_bytecode = True
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the skill's stdout (and its children's) goes to stderr
    sys.stdout = sys.stderr
    protocol_in = sys.stdin.buffer
    first = protocol_in.readline()
    loop = asyncio.new_event_loop()
    parent = _Parent(protocol_out, protocol_in, loop)
    try:
        request = json.loads(first)
        if request.get("type") != "run":
            raise ValueError(f"expected a run message, got {request.get('type')!r}")
        parent.start_reader()
        final = loop.run_until_complete(_run(request, parent))
    except Exception as e:
        traceback.print_exc()
        final = {"type": "error", "error": f"{type(e).__name__}: {e}"}
    parent.send(final)
    protocol_out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
