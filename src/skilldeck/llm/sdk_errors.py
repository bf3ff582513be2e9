"""SDK exceptions → skilldeck's ``ModelError`` tree, with one-line messages that name
what to set or check.

The OpenAI and Anthropic SDKs are generated from the same template, so their
exception classes line up (``APIStatusError``, ``APIConnectionError``,
``APITimeoutError``); :func:`classify_sdk_error` maps either family to a
:class:`~skilldeck.llm.retry.Failure`: the error, whether a retry can help, how long
the server asked us to wait. A refused connection to this machine
(:func:`is_local_url`) is never retried: nothing listens there.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from skilldeck.errors import ModelConfigError, ModelConnectionError, ModelError
from skilldeck.llm.retry import Failure

__all__ = ["Endpoint", "SDKErrors", "classify_sdk_error", "is_local_url"]


@dataclass(frozen=True)
class Endpoint:
    """Who we were talking to, for messages: ``provider:model``, URL, key variable."""

    spec: str
    base_url: str
    key_env: str | None = None


@dataclass(frozen=True)
class SDKErrors:
    """The exception classes of one SDK (both SDKs have the same three)."""

    status: type[Exception]
    connection: type[Exception]
    timeout: type[Exception]
    base: type[Exception]


def _server_message(exc: Exception) -> str:
    """The human part of an error body: ``{"error": {"message": ...}}`` or similar."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return str(getattr(exc, "message", "") or exc)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            continue
    return None


def classify_sdk_error(exc: Exception, *, sdk: SDKErrors, endpoint: Endpoint) -> Failure | None:
    """Map an SDK exception to a :class:`Failure`; None for anything not the SDK's."""
    where = f"{endpoint.spec} at {endpoint.base_url}"
    local = is_local_url(endpoint.base_url)
    if local and isinstance(exc, sdk.connection) and not isinstance(exc, sdk.timeout):
        # nothing listens on this machine's port: no retry can change that
        return Failure(
            error=ModelConnectionError(
                f"Cannot connect to the model server at {endpoint.base_url}: nothing "
                "answers there. Start the server, or fix the URL (--base-url or the "
                "provider's *_BASE_URL variable)."
            )
        )
    if isinstance(exc, sdk.timeout | sdk.connection):
        kind = "timed out" if isinstance(exc, sdk.timeout) else "could not connect"
        error = ModelConnectionError(
            f"Cannot reach the model server at {endpoint.base_url} ({kind}). "
            "Check that it is running and the URL is right (--base-url or the provider's "
            "*_BASE_URL variable)."
        )
        return Failure(
            error=error,
            retryable=True,
            exhausted=lambda n: ModelConnectionError(
                f"Cannot reach the model server at {endpoint.base_url} ({kind}, {n} attempts). "
                "Check that it is running and the URL is right (--base-url or the provider's "
                "*_BASE_URL variable)."
            ),
        )
    if isinstance(exc, sdk.status):
        return _classify_status(exc, endpoint=endpoint, where=where)
    if isinstance(exc, sdk.base):
        return Failure(error=ModelError(f"{where}: {_server_message(exc)}"))
    return None


def is_local_url(url: str) -> bool:
    """Whether ``url`` names this machine (``localhost``, a loopback address): a refused
    connection there means no server is running, which no retry will change."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _classify_status(exc: Exception, *, endpoint: Endpoint, where: str) -> Failure:
    status = int(getattr(exc, "status_code", 0))
    detail = _server_message(exc)
    if status in (401, 403):
        hint = f"Check {endpoint.key_env}." if endpoint.key_env else "Check the API key."
        return Failure(
            error=ModelConfigError(
                f"{where} refused the credentials (HTTP {status}: {detail}). {hint}"
            )
        )
    if status == 404:
        return Failure(
            error=ModelConfigError(
                f"{where} answered 404 ({detail}). Check the model name and the base URL."
            )
        )
    if status == 429 or status >= 500 or status in (408, 409):
        label = "rate limited" if status == 429 else f"server error {status}"
        return Failure(
            error=ModelConnectionError(f"{where}: {label} ({detail})."),
            retryable=True,
            retry_after=_retry_after(exc),
            exhausted=lambda n: ModelConnectionError(
                f"{where}: {label} ({detail}); gave up after {n} attempts. "
                "Try again later or raise models.max_retries."
            ),
        )
    return Failure(error=ModelError(f"{where} rejected the request (HTTP {status}: {detail})."))
