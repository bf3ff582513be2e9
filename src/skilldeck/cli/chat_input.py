"""What ``skilldeck chat`` reads from the user, and what Ctrl-C does while a turn runs.

Readers: prompt_toolkit on a terminal (history, multi-line input, Ctrl-C clears the
line or, at an empty prompt, leaves), plain lines from stdin otherwise (scripted and
tested in a subprocess). :func:`sigint_cancels` turns Ctrl-C during a turn into the
cancellation of that turn only.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from skilldeck.agent.store import private_file, valid_text

if TYPE_CHECKING:
    from anyio import CancelScope

__all__ = ["LineReader", "PromptReader", "StdinReader", "sigint_cancels"]


class LineReader(Protocol):
    async def read(self, prompt: str) -> str | None:
        """One (possibly multi-line) input; None at end of input."""
        ...


class StdinReader:
    """Lines from a non-terminal stdin; a trailing backslash joins the next line."""

    async def read(self, prompt: str) -> str | None:
        import anyio.to_thread

        parts: list[str] = []
        while True:
            line = valid_text(await anyio.to_thread.run_sync(sys.stdin.readline))
            if not line:
                return "\n".join(parts) if parts else None
            line = line.rstrip("\n")
            if line.endswith("\\"):
                parts.append(line[:-1])
                continue
            parts.append(line)
            return "\n".join(parts)


class PromptReader:
    """prompt_toolkit on a terminal: history file, Esc+Enter or ``\\`` for new lines."""

    def __init__(self, history_file: Path) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings

        history_file.parent.mkdir(parents=True, exist_ok=True)
        private_file(history_file)  # what was typed: 0600 whatever the umask
        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("c-c")
        def _interrupt(event: Any) -> None:
            """Ctrl-C clears a line being typed; at an empty prompt it leaves the chat."""
            buffer = event.current_buffer
            if buffer.text:
                buffer.reset()
            else:
                event.app.exit(exception=EOFError())

        @bindings.add("enter")
        def _submit(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.text.endswith("\\"):
                buffer.text = buffer.text[:-1] + "\n"
                buffer.cursor_position = len(buffer.text)
            else:
                buffer.validate_and_handle()

        self.session: Any = PromptSession(
            history=FileHistory(str(history_file)), key_bindings=bindings, multiline=True
        )

    async def read(self, prompt: str) -> str | None:
        try:
            text: str = await self.session.prompt_async(prompt)
        except EOFError:
            return None
        except KeyboardInterrupt:
            return ""
        return text


@contextlib.contextmanager
def sigint_cancels(scope: CancelScope) -> Iterator[None]:
    """While a turn runs, SIGINT (Ctrl-C) cancels ``scope`` instead of raising
    KeyboardInterrupt out of the event loop (which ended the whole chat with exit 130).
    The handler only schedules the cancel on the loop: a signal handler must not run
    loop code itself. The previous handler is back as soon as the turn ends."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are only delivered to the main thread
        return
    loop = asyncio.get_running_loop()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(scope.cancel)

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
