"""``create_app``: the Starlette application of ``skilldeck web``, mountable in any ASGI app.

Routes (all behind :class:`~skilldeck.web.security.Guard`):

========================================  ==============================================
``GET /``                                  the chat page (static files under ``/static``)
``GET /login?token=…``                     sets the token cookie, redirects to ``/``
``POST /agui``                             AG-UI 1.0: a ``RunAgentInput`` in, SSE out
``GET /api/health``                        model, permission mode, cwd, version
``GET /api/sessions``                      the sessions, newest first (``?limit=``)
``GET /api/sessions/{id}``                 one session: pending calls, messages, todos
``GET /api/sessions/{id}/events``          its history then live events, as AG-UI SSE
                                           (``?follow=1``: and every later run;
                                           ``&since=now``: only the later runs)
``POST /api/sessions/{id}/cancel``         stop its run
``GET /api/skills``                        the skills (``?q=`` ranks them by the matcher)
``GET /api/skills/match?q=…``              the matcher's best skills for a request
``GET /api/skills/{name}``                 one skill with its problems
========================================  ==============================================

The session service is either given (``create_app(service=...)``: the caller opened
it and keeps it) or built from ``service_options`` and opened for the app's lifetime
(the Starlette lifespan), so it runs on uvicorn's event loop. An app mounted inside
another one (``Mount("/chat", create_app(...))``) gets no lifespan of its own: pass it
an open service.
"""

from __future__ import annotations

import asyncio.constants
import contextlib
import json
from collections.abc import AsyncIterator, Iterable, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

import anyio.lowlevel
from ag_ui.core import BaseEvent, RunAgentInput
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from skilldeck import __version__
from skilldeck.errors import SessionNotFoundError, SkilldeckError, SkillNotFoundError
from skilldeck.service import SessionService
from skilldeck.web.catalog import match_skills, show_skill, skill_rows
from skilldeck.web.runs import ThreadAliases, agui_events, attach_events
from skilldeck.web.security import DEFAULT_MAX_BODY, Guard, GuardOptions

__all__ = ["STATIC_DIR", "create_app", "encode_event"]

STATIC_DIR = Path(str(files("skilldeck.web") / "static"))
#: SSE lines end in "\n": the official AG-UI client cannot parse "\r\n"
SSE_SEP = "\n"
#: a comment line every this many seconds keeps proxies from closing an idle stream
PING_SECONDS = 15
#: an event stream yields to the loop after this many events, so that a client that
#: dropped the connection is noticed before asyncio logs "socket.send() raised
#: exception." (it does from the 6th write to a lost connection, e.g. in a replayed
#: history); not after every event, which a long replay would pay for
#: (tests/integration/test_web_disconnect.py)
YIELD_EVERY = asyncio.constants.LOG_THRESHOLD_FOR_CONNLOST_WRITES - 1


def encode_event(event: BaseEvent) -> str:
    """One event's ``data:`` payload (camelCase, optional fields left out)."""
    return event.model_dump_json(by_alias=True)


def create_app(
    service: SessionService | None = None,
    *,
    token: str | None = None,
    allowed_hosts: Iterable[str] = (),
    max_body: int = DEFAULT_MAX_BODY,
    service_options: Mapping[str, Any] | None = None,
    secure_cookie: bool = False,
) -> Starlette:
    """The web app. ``service``: an open :class:`SessionService` the caller manages;
    without one, a service is built from ``service_options`` (``SessionService``'s
    keyword arguments) and opened while the app runs. ``token``: required on every
    request when set. ``allowed_hosts``: host names besides the loopback ones that
    requests may address (the bound address, a proxy's name)."""
    state = _AppState(service, dict(service_options or {}))
    routes = [
        Route("/", _page, methods=["GET"]),
        Route("/agui", state.agui, methods=["POST"]),
        Route("/api/health", state.health, methods=["GET"]),
        Route("/api/sessions", state.sessions, methods=["GET"]),
        Route("/api/sessions/{sid}", state.session, methods=["GET"]),
        Route("/api/sessions/{sid}/events", state.events, methods=["GET"]),
        Route("/api/sessions/{sid}/cancel", state.cancel, methods=["POST"]),
        Route("/api/skills", state.skills, methods=["GET"]),
        Route("/api/skills/match", state.match, methods=["GET"]),
        Route("/api/skills/{name}", state.skill, methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    options = GuardOptions.make(
        token=token, allowed_hosts=allowed_hosts, max_body=max_body, secure_cookie=secure_cookie
    )
    app = Starlette(
        routes=routes, lifespan=state.lifespan, middleware=[Middleware(Guard, options=options)]
    )
    app.state.skilldeck = state
    return app


async def _page(request: Request) -> Response:
    return FileResponse(STATIC_DIR / "index.html", headers={"cache-control": "no-store"})


class _AppState:
    """The app's one session service and the thread aliases of foreign AG-UI clients."""

    def __init__(self, service: SessionService | None, options: dict[str, Any]) -> None:
        self._service = service
        self._options = options
        self.aliases = ThreadAliases()

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        if self._service is not None:
            yield
            return
        async with SessionService(**self._options) as service:
            self._service = service
            try:
                yield
            finally:
                self._service = None

    @property
    def service(self) -> SessionService:
        if self._service is None:
            raise SkilldeckError("The session service is not running (the app was not started).")
        return self._service

    # ---- AG-UI ------------------------------------------------------------------------

    async def agui(self, request: Request) -> Response:
        try:
            run_input = RunAgentInput.model_validate(_json_body(await request.body()))
        except ValidationError as e:
            return _error(422, f"Not a RunAgentInput: {_fields_at_fault(e)}")
        except ValueError as e:
            return _error(422, f"Not a RunAgentInput: {_first_line(e)}")
        return _sse(agui_events(self.service, run_input, self.aliases))

    async def events(self, request: Request) -> Response:
        sid = request.path_params["sid"]
        try:
            self.service.show(sid)
        except SkilldeckError as e:
            return _skilldeck_error(e)
        follow = request.query_params.get("follow") in ("1", "true")
        history = request.query_params.get("since") != "now"
        return _sse(attach_events(self.service, sid, follow=follow, history=history))

    # ---- JSON ---------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        service = self.service
        return JSONResponse(
            {
                "status": "ok",
                "version": __version__,
                "protocol": "AG-UI 1.0",
                "model": _model_name(service),
                "permissionMode": service.permission_mode or "default",
                "cwd": str(service.cwd),
            }
        )

    async def sessions(self, request: Request) -> Response:
        limit = _int(request.query_params.get("limit"), 50, 1, 500)
        rows = [s.to_dict() for s in self.service.list(limit=limit)]
        return JSONResponse({"sessions": rows})

    async def session(self, request: Request) -> Response:
        try:
            detail = self.service.show(request.path_params["sid"])
        except SkilldeckError as e:
            return _skilldeck_error(e)
        return JSONResponse(detail.to_dict())

    async def cancel(self, request: Request) -> Response:
        try:
            cancelled = await self.service.cancel(request.path_params["sid"])
        except SkilldeckError as e:
            return _skilldeck_error(e)
        return JSONResponse({"cancelled": cancelled})

    async def skills(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        registry = self.service.registry
        rows = match_skills(registry, query) if query else skill_rows(registry)
        return JSONResponse({"skills": rows})

    async def match(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        if not query:
            return _error(400, "Say what you need: /api/skills/match?q=…")
        top = _int(request.query_params.get("top"), 10, 1, 100)
        return JSONResponse({"skills": match_skills(self.service.registry, query, top)})

    async def skill(self, request: Request) -> Response:
        try:
            return JSONResponse(show_skill(self.service.registry, request.path_params["name"]))
        except SkilldeckError as e:
            return _skilldeck_error(e)


def _sse(events: AsyncIterator[BaseEvent]) -> EventSourceResponse:
    async def payloads() -> AsyncIterator[dict[str, str]]:
        sent = 0
        async for event in events:
            yield {"data": encode_event(event)}
            sent += 1
            if sent % YIELD_EVERY == 0:  # a client that left is noticed here
                await anyio.lowlevel.checkpoint()

    return EventSourceResponse(
        payloads(),
        sep=SSE_SEP,
        ping=PING_SECONDS,
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


def _model_name(service: SessionService) -> str:
    model = service.model
    if isinstance(model, str):
        return model
    if model is not None:
        return str(getattr(model, "name", "custom"))
    return service.settings.model or service.settings.models.default or "not set"


def _skilldeck_error(error: SkilldeckError) -> Response:
    status = 404 if isinstance(error, (SessionNotFoundError, SkillNotFoundError)) else 409
    return _error(status, str(error))


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


def _fields_at_fault(error: ValidationError) -> str:
    """Which fields are wrong and how (``threadId: Field required; …``), not pydantic's
    count of errors: the client needs to know what to send."""
    parts = [
        f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in error.errors()[:6]
    ]
    more = len(error.errors()) - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _json_body(raw: bytes) -> Any:
    """The request's JSON; ValueError for what must be a 422, not a 500 or a session
    that runs and cannot be shown: nesting past the parser's depth, and ``\\ud800``
    escapes, which decode to text that no reply, store or stream can encode."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate (\\ud800-\\udfff), not text") from None
    return data


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _int(value: str | None, default: int, low: int, high: int) -> int:
    try:
        return max(low, min(high, int(value))) if value else default
    except ValueError:
        return default
