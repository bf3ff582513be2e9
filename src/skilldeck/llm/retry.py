"""The one retry policy for every model adapter: exponential backoff with jitter.

The SDKs are built with ``max_retries=0`` so that this module is the only place that
decides what is retried (HTTP 429, 5xx, timeouts, refused connections), how long to
wait, and what the user reads when the retries run out. Adapters supply a
``classify`` function that turns their SDK's exceptions into a :class:`Failure`.

A retry is never silent: before each wait the policy's ``on_retry`` (given by whoever
made the model: the agent builder turns it into a ``ModelRetryEvent``, the CLI into a
stderr line) receives a :class:`RetryNotice` saying which attempt failed, why, and how
long the wait is. ``llm/`` never imports ``agent/``, so the notice is plain data.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio

from skilldeck.errors import ModelError

__all__ = ["Failure", "RetryNotice", "RetryPolicy", "call_with_retries"]

T = TypeVar("T")

#: a server's Retry-After above this many seconds is not worth waiting for in a CLI run
MAX_RETRY_AFTER = 60.0


@dataclass(frozen=True)
class Failure:
    """What an adapter made of one failed attempt.

    ``error`` is raised when the attempt is final: not retryable, or retries exhausted
    (``exhausted`` then replaces it when given, so the message can say "after N tries").
    """

    error: ModelError
    retryable: bool = False
    retry_after: float | None = None
    exhausted: Callable[[int], ModelError] | None = None


@dataclass(frozen=True)
class RetryNotice:
    """One retry about to happen: attempt ``attempt`` of ``attempts`` failed with
    ``reason``; the next starts after ``delay`` seconds."""

    model: str
    attempt: int
    attempts: int
    delay: float
    reason: str


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` extra attempts after the first; delays double up to ``max_delay``.

    ``sleep`` is injectable so tests run retries without waiting; ``jitter`` is the
    fraction of each delay that is randomised (0.25 → the delay varies by ±25%),
    which keeps many clients that failed together from retrying together.
    """

    max_retries: int = 3
    initial_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25
    sleep: Callable[[float], Awaitable[None]] = field(default=anyio.sleep, compare=False)
    #: told of every retry before its wait (never raises into the call: see notify)
    on_retry: Callable[[RetryNotice], None] | None = field(default=None, compare=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None and 0 <= retry_after <= MAX_RETRY_AFTER:
            return retry_after
        base = min(self.initial_delay * (2.0 ** (attempt - 1)), self.max_delay)
        spread = base * self.jitter
        return max(0.0, base + random.uniform(-spread, spread))


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    classify: Callable[[Exception], Failure | None],
    model: str = "the model",
) -> T:
    """Run ``attempt`` until it succeeds, a failure is final, or retries run out.

    ``classify`` returns None for exceptions that are not the SDK's (our own bugs),
    which propagate untouched.
    """
    retries = 0
    while True:
        try:
            return await attempt()
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if not failure.retryable:
                raise failure.error from exc
            if retries >= policy.max_retries:
                final = failure.exhausted(retries + 1) if failure.exhausted else failure.error
                raise final from exc
            retries += 1
            delay = policy.delay(retries, failure.retry_after)
            attempts = policy.max_retries + 1
            _notify(policy, RetryNotice(model, retries, attempts, delay, str(failure.error)))
            await policy.sleep(delay)


def _notify(policy: RetryPolicy, notice: RetryNotice) -> None:
    """A listener that fails must not turn a retry into a crash of the model call."""
    if policy.on_retry is None:
        return
    with contextlib.suppress(Exception):  # a renderer's bug is not the model's failure
        policy.on_retry(notice)
