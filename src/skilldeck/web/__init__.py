"""``skilldeck web``: the agent in a browser, speaking AG-UI 1.0.

A Starlette app (``create_app``) over the session service: ``POST /agui`` streams a
run as AG-UI events (``agui``: the mapping from skilldeck's events; ``interrupts``: a pause as
interrupts, resume entries as replies), a no-build chat
page under ``/`` (``static/``: vendored marked and DOMPurify, no CDN), small JSON
endpoints for the page (sessions, skills, health), and a guard in front of all of it
(``security``: loopback or a token, Host and Origin checks, CSP, size limits). The
``skilldeck web`` command (``command``) serves it with uvicorn.

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.web.agui import AguiMapper
    from skilldeck.web.app import create_app
    from skilldeck.web.interrupts import interrupts_for, replies_from_resume
    from skilldeck.web.security import Guard, GuardOptions, new_token

_HOME: dict[str, str] = {
    "AguiMapper": "agui",
    "Guard": "security",
    "GuardOptions": "security",
    "create_app": "app",
    "interrupts_for": "interrupts",
    "new_token": "security",
    "replies_from_resume": "interrupts",
}

__all__ = [
    "AguiMapper",
    "Guard",
    "GuardOptions",
    "create_app",
    "interrupts_for",
    "new_token",
    "replies_from_resume",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
