"""The retry policy on its own: backoff growth, jitter bounds, Retry-After, exhaustion."""

from __future__ import annotations

import pytest
from llm_fakes import FakeSleep

from skilldeck.errors import ModelConnectionError, ModelError
from skilldeck.llm.retry import Failure, RetryPolicy, call_with_retries

pytestmark = pytest.mark.anyio


class Flaky(Exception):
    pass


def classify(exc: Exception) -> Failure | None:
    if isinstance(exc, Flaky):
        return Failure(
            error=ModelConnectionError("flaky"),
            retryable=True,
            exhausted=lambda n: ModelConnectionError(f"flaky after {n} attempts"),
        )
    if isinstance(exc, ValueError):
        return Failure(error=ModelError("bad request"))
    return None


def test_delays_double_up_to_the_cap_within_jitter() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_delay=5.0, jitter=0.25)
    for attempt, base in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        for _ in range(20):
            assert base * 0.75 <= policy.delay(attempt) <= base * 1.25
    exact = RetryPolicy(initial_delay=1.0, jitter=0.0)
    assert [exact.delay(n) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]


def test_retry_after_wins_unless_unreasonable() -> None:
    policy = RetryPolicy(jitter=0.0, initial_delay=1.0)
    assert policy.delay(1, retry_after=7.0) == 7.0
    assert policy.delay(1, retry_after=3600.0) == 1.0


async def test_succeeds_after_transient_failures() -> None:
    sleep = FakeSleep()
    calls: list[int] = []

    async def attempt() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise Flaky
        return "ok"

    result = await call_with_retries(
        attempt, policy=RetryPolicy(max_retries=3, sleep=sleep), classify=classify
    )
    assert result == "ok"
    assert len(calls) == 3
    assert len(sleep.delays) == 2


async def test_exhaustion_raises_the_exhausted_error_chained() -> None:
    sleep = FakeSleep()

    async def attempt() -> str:
        raise Flaky

    with pytest.raises(ModelConnectionError, match="flaky after 3 attempts") as info:
        await call_with_retries(
            attempt, policy=RetryPolicy(max_retries=2, sleep=sleep), classify=classify
        )
    assert isinstance(info.value.__cause__, Flaky)
    assert len(sleep.delays) == 2


async def test_final_failures_and_foreign_errors_are_not_retried() -> None:
    sleep = FakeSleep()

    async def bad() -> str:
        raise ValueError("x")

    async def bug() -> str:
        raise KeyError("ours")

    policy = RetryPolicy(max_retries=5, sleep=sleep)
    with pytest.raises(ModelError, match="bad request"):
        await call_with_retries(bad, policy=policy, classify=classify)
    with pytest.raises(KeyError):
        await call_with_retries(bug, policy=policy, classify=classify)
    assert sleep.delays == []


async def test_zero_retries_fails_at_once() -> None:
    async def attempt() -> str:
        raise Flaky

    with pytest.raises(ModelConnectionError, match="after 1 attempts"):
        await call_with_retries(
            attempt, policy=RetryPolicy(max_retries=0, sleep=FakeSleep()), classify=classify
        )
