"""One call of the model in a turn: whole, or streamed as text deltas.

The call's retries (``llm/retry.py``) become stored events of the run, shown before
the text they led to; text deltas are streamed live and never stored (the whole
text is, with the reply). A stream that ends without a complete turn is a
``ModelError`` (the run ends ``error``, resumable).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator

from skilldeck.agent.events import Event, ModelCallEvent, TextDeltaEvent
from skilldeck.agent.recorder import Recorder, RunState, retries_to
from skilldeck.errors import ModelError
from skilldeck.llm.messages import Message, Model, TextDelta, ToolSpec, TurnComplete

__all__ = ["call_model"]


async def call_model(
    model: Model,
    request: list[Message],
    specs: list[ToolSpec],
    *,
    run: RunState,
    recorder: Recorder,
    stream: bool,
) -> AsyncGenerator[Event, None]:
    """Start the run's next turn and ask ``model``, yielding the events meanwhile;
    the reply is left in ``run.reply``."""
    run.turn += 1
    recorder.emit(run, ModelCallEvent(turn=run.turn, model=model.name))
    for event in run.drain():
        yield event
    sink = functools.partial(recorder.emit, run)  # the call's retries, stored
    if not stream:
        with retries_to(sink):
            run.reply = await model.respond(request, specs)
        return
    run.reply = None
    chunks = aiter(model.stream(request, specs))
    try:
        while True:
            with retries_to(sink):
                chunk = await anext(chunks, None)
            for event in run.drain():  # a retry shows before the text it led to
                yield event
            if chunk is None:
                break
            if isinstance(chunk, TextDelta) and chunk.text:
                delta = TextDeltaEvent(text=chunk.text)
                if recorder.on_event is not None:
                    recorder.on_event(delta)
                yield delta  # live text only: deltas are not stored
            elif isinstance(chunk, TurnComplete):
                run.reply = chunk.message
    finally:  # a stream closed early closes the model's (its connection) too
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()
    if run.reply is None:
        raise ModelError(f"{model.name}: the stream ended without a complete turn.")
