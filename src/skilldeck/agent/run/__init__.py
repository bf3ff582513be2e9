"""The steps of one run that the loop (``agent/loop.py``) drives: opening its session
(new, continued, or loaded to resume; the user's message with its skill hint) and
calling the model (whole or streamed, its retries recorded).

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.agent.run.model_call import call_model
    from skilldeck.agent.run.open_session import (
        HINT_META,
        continue_session,
        load_session,
        start_session,
        user_turn,
    )

_HOME: dict[str, str] = {
    "call_model": "model_call",
    "HINT_META": "open_session",
    "continue_session": "open_session",
    "load_session": "open_session",
    "start_session": "open_session",
    "user_turn": "open_session",
}

__all__ = [
    "HINT_META",
    "call_model",
    "continue_session",
    "load_session",
    "start_session",
    "user_turn",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
