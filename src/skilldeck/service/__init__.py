"""The session service: many agent sessions in one process, for the interfaces that
serve them (``skilldeck web``, a chat bot, remote workers).

It sits above ``agent/`` and below the interfaces: it runs sessions concurrently,
streams each one's numbered events to any number of subscribers, routes approvals and
answers to paused turns, cancels and resumes runs — including sessions another
process paused. See ``docs/service.md`` for what it guarantees.

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.service.eventlog import EventLog, SessionEvent
    from skilldeck.service.replies import Answer, Decision
    from skilldeck.service.service import SessionService
    from skilldeck.service.views import PendingCall, SessionDetail, SessionSummary

_HOME: dict[str, str] = {
    "Answer": "replies",
    "Decision": "replies",
    "EventLog": "eventlog",
    "PendingCall": "views",
    "SessionDetail": "views",
    "SessionEvent": "eventlog",
    "SessionService": "service",
    "SessionSummary": "views",
}

__all__ = [
    "Answer",
    "Decision",
    "EventLog",
    "PendingCall",
    "SessionDetail",
    "SessionEvent",
    "SessionService",
    "SessionSummary",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
