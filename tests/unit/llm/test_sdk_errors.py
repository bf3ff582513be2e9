"""SDK exceptions → skilldeck errors: what is retried, what names the key to check."""

from __future__ import annotations

from typing import Any

from skilldeck.errors import ModelConfigError, ModelConnectionError, ModelError
from skilldeck.llm.sdk_errors import Endpoint, SDKErrors, classify_sdk_error


class _Base(Exception):
    pass


class _Status(_Base):
    def __init__(self, status: int, body: Any = None, headers: dict[str, str] | None = None):
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.body = body
        self.response = type("R", (), {"headers": headers or {}})()


class _Connection(_Base):
    pass


class _Timeout(_Connection):
    pass


SDK = SDKErrors(status=_Status, connection=_Connection, timeout=_Timeout, base=_Base)
REMOTE = Endpoint(spec="openai:gpt", base_url="https://api.example.com/v1", key_env="OPENAI_KEY")
LOCAL = Endpoint(spec="ollama:qwen", base_url="http://127.0.0.1:11434/v1")


def test_refused_credentials_name_the_key_variable() -> None:
    failure = classify_sdk_error(
        _Status(401, {"error": {"message": "bad key"}}), sdk=SDK, endpoint=REMOTE
    )
    assert failure is not None and not failure.retryable
    assert isinstance(failure.error, ModelConfigError)
    assert "bad key" in str(failure.error) and "Check OPENAI_KEY." in str(failure.error)


def test_rate_limit_is_retried_after_the_servers_wait() -> None:
    exc = _Status(429, {"error": "slow down"}, {"retry-after-ms": "1500"})
    failure = classify_sdk_error(exc, sdk=SDK, endpoint=REMOTE)
    assert failure is not None and failure.retryable
    assert failure.retry_after == 1.5
    assert isinstance(failure.error, ModelConnectionError)


def test_refused_local_connection_is_not_retried() -> None:
    failure = classify_sdk_error(_Connection("refused"), sdk=SDK, endpoint=LOCAL)
    assert failure is not None and not failure.retryable
    assert "nothing answers there" in str(failure.error)
    remote = classify_sdk_error(_Connection("refused"), sdk=SDK, endpoint=REMOTE)
    assert remote is not None and remote.retryable


def test_other_sdk_errors_and_foreign_exceptions() -> None:
    failure = classify_sdk_error(_Base("odd"), sdk=SDK, endpoint=REMOTE)
    assert failure is not None and type(failure.error) is ModelError
    assert classify_sdk_error(ValueError("not the SDK's"), sdk=SDK, endpoint=REMOTE) is None
