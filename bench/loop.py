"""Agent-loop benchmark: overhead per turn, and context trimming on a long history.

**Loop overhead.** A scripted model plays N turns, each calling a no-op tool, then a
final answer. Measured in the same run:

* ``baseline``: a bare loop — ``model.respond`` → append → ``tool.call`` → append —
  no events, no store, no context management (the least any loop must do);
* ``agent (memory db)``: ``Agent.run`` with the session store in SQLite ``:memory:``;
* ``agent (disk db)``: ``Agent.run`` with the store on disk (WAL), as the CLI runs.

Overhead per turn = (agent − baseline) / N: what skilldeck adds per turn (events,
one SQLite transaction, token counting, trimming check, gate). Target: < 2 ms.

**Trimming.** A 2,000-message history (1,000 tool turns) over a budget that forces
trimming: ``trim_history`` with cached token counts, against the naive baseline of
re-counting every message with tiktoken before trimming (what a loop without a
per-message cache pays every turn).

Usage: ``python -m bench loop [--turns N] [--repeat N] [--history N]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import anyio
from pydantic import BaseModel

from skilldeck.agent.assembly import AgentParts
from skilldeck.agent.context import History, default_counter, trim_history
from skilldeck.agent.loop import Agent
from skilldeck.agent.recorder import Limits
from skilldeck.agent.store import SessionStore
from skilldeck.config import load_settings
from skilldeck.llm.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry, ToolResult

RESULTS = Path(__file__).resolve().parent / "results" / "loop.json"


class _NoInput(BaseModel):
    n: int = 0


class Noop(Tool):
    name: ClassVar[str] = "Noop"
    description: ClassVar[str] = "Does nothing."
    Input: ClassVar[type[BaseModel]] = _NoInput
    read_only: ClassVar[bool] = True

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult(content="ok")


def _script(turns: int) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {
            "text": f"step {i}",
            "tool_calls": [{"id": f"c{i}", "name": "Noop", "input": {"n": i}}],
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        for i in range(turns)
    ]
    lines.append({"text": "done", "usage": {"input_tokens": 10, "output_tokens": 5}})
    return lines


async def _baseline(turns: int, home: Path) -> float:
    model = ScriptedModel.from_lines(_script(turns))
    tool = Noop()
    specs = [tool.spec()]
    ctx = ToolContext(session_id="b", workspace=home, settings=load_settings(workspace=home))
    messages: list[Message] = [SystemMessage(content="sys"), UserMessage(content="go")]
    started = time.perf_counter()
    while True:
        reply = await model.respond(messages, specs)
        messages.append(reply)
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            result = await tool.call(call.input, ctx)
            messages.append(
                ToolResultMessage(tool_call_id=call.id, name=call.name, content=result.content)
            )
    return time.perf_counter() - started


async def _agent(turns: int, home: Path, db: Path) -> float:
    settings = load_settings(workspace=home)
    store = SessionStore(db)
    agent = Agent(
        AgentParts(
            model=ScriptedModel.from_lines(_script(turns)),
            tools=ToolRegistry([Noop()]),
            settings=settings,
            store=store,
            system_prompt="sys",
            cwd=home,
            limits=Limits(max_turns=turns + 5),
        )
    )
    started = time.perf_counter()
    result = await agent.run("go")
    elapsed = time.perf_counter() - started
    store.close()
    assert result.status == "completed", result.reason
    return elapsed


def _median(fn: Callable[[], float], repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat))


def bench_loop(turns: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        counter = iter(range(10_000))
        base = _median(lambda: anyio.run(_baseline, turns, home), repeat)
        memory = _median(lambda: anyio.run(_agent, turns, home, Path(":memory:")), repeat)
        disk = _median(
            lambda: anyio.run(_agent, turns, home, home / f"s{next(counter)}.db"), repeat
        )
    per_turn = {
        k: v / (turns + 1) * 1000
        for k, v in {"baseline": base, "agent_memory_db": memory, "agent_disk_db": disk}.items()
    }
    return {
        "turns": turns + 1,
        "ms_per_turn": per_turn,
        "overhead_ms_per_turn": {
            "memory_db": per_turn["agent_memory_db"] - per_turn["baseline"],
            "disk_db": per_turn["agent_disk_db"] - per_turn["baseline"],
        },
        "ratio_vs_baseline": {
            "memory_db": memory / base,
            "disk_db": disk / base,
        },
    }


def _history(messages: int) -> History:
    history = History()
    history.extend([SystemMessage(content="system prompt " * 50), UserMessage(content="task")])
    for i in range((messages - 2) // 2):
        history.append(
            AssistantMessage(
                text=f"Reading part {i}.",
                tool_calls=[ToolCall(id=f"c{i}", name="Read", input={"file_path": f"f{i}.py"})],
            )
        )
        history.append(
            ToolResultMessage(
                tool_call_id=f"c{i}", name="Read", content=f"{i}: " + "some source code line\n" * 20
            )
        )
    return history


def bench_trim(messages: int, repeat: int) -> dict[str, Any]:
    default_counter.cache_clear()
    t0 = time.perf_counter()
    default_counter()
    load = time.perf_counter() - t0
    history = _history(messages)
    started = time.perf_counter()
    history.tokens  # noqa: B018 - the exact count of every message, once
    build = time.perf_counter() - started
    budget = history.total // 4

    def cached() -> float:
        t0 = time.perf_counter()
        view = trim_history(history, budget)
        assert view.omitted > 0
        return time.perf_counter() - t0

    def naive() -> float:  # recount every message, then trim
        t0 = time.perf_counter()
        fresh = History(counter=history.counter)
        fresh.extend(history.messages)
        trim_history(fresh, budget)
        return time.perf_counter() - t0

    trim_s = _median(cached, repeat * 4)
    naive_s = _median(naive, repeat)
    view = trim_history(history, budget)
    return {
        "messages": len(history),
        "tokens": history.total,
        "budget": budget,
        "omitted": view.omitted,
        "counter": default_counter().method,
        "encoding_load_ms": load * 1000,
        "count_all_ms": build * 1000,
        "trim_ms": trim_s * 1000,
        "naive_recount_and_trim_ms": naive_s * 1000,
        "speedup_vs_naive": naive_s / trim_s,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench loop")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--history", type=int, default=2000)
    args = parser.parse_args(argv)
    loop = bench_loop(args.turns, args.repeat)
    trim = bench_trim(args.history, args.repeat)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"loop": loop, "trim": trim}, indent=2) + "\n", encoding="utf-8")
    _print(loop, trim)
    return 0


def _print(loop: dict[str, Any], trim: dict[str, Any]) -> None:
    ms, over, ratio = loop["ms_per_turn"], loop["overhead_ms_per_turn"], loop["ratio_vs_baseline"]
    print(f"loop: {loop['turns']} turns, scripted model, no-op tool (median)")
    print(f"  {'variant':24} {'ms/turn':>9} {'overhead':>10} {'× baseline':>11}")
    print(f"  {'baseline (bare loop)':24} {ms['baseline']:9.3f} {'':>10} {1.0:11.2f}")
    print(
        f"  {'agent, :memory: db':24} {ms['agent_memory_db']:9.3f} "
        f"{over['memory_db']:10.3f} {ratio['memory_db']:11.2f}"
    )
    print(
        f"  {'agent, disk db (WAL)':24} {ms['agent_disk_db']:9.3f} "
        f"{over['disk_db']:10.3f} {ratio['disk_db']:11.2f}"
    )
    print(
        f"trim: {trim['messages']} messages, {trim['tokens']} tokens → budget "
        f"{trim['budget']} ({trim['counter']})"
    )
    print(
        f"  load encoding: {trim['encoding_load_ms']:.0f} ms (once per process, only when "
        "a history nears its budget)"
    )
    print(
        f"  count all once: {trim['count_all_ms']:.1f} ms; trim (cached counts): "
        f"{trim['trim_ms']:.3f} ms; naive recount+trim: "
        f"{trim['naive_recount_and_trim_ms']:.1f} ms ({trim['speedup_vs_naive']:.0f}× faster)"
    )
    print(f"results: {RESULTS}")
