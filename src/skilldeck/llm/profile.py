"""What differs per model besides its wire format: options, timeout, context window,
and the profile of what it is shown.

* :func:`model_options` merges ``[models.options."<key>"]`` tables, least specific
  first (``*``, the provider, the bare model name, the full ``provider:model``), field
  by field, so ``[models.options.ollama] temperature = 0`` and
  ``[models.options."ollama:qwen2.5"] seed = 7`` combine.
* :func:`sampling_params` is what reaches the request: only the values that are set.
* :func:`request_timeout`: servers on this machine (``ollama:``, ``localhost``,
  ``127.0.0.1``) get ``models.local_request_timeout`` (600 s) unless one is set —
  a CPU-bound server takes minutes over a long first prompt.
* :func:`discover_context_window` asks the server how many tokens it takes (Ollama
  ``/api/show``, llama.cpp ``/props`` ``n_ctx``, vLLM ``/v1/models``
  ``max_model_len``): a short timeout, one answer cached per server and model, and
  never an error — an unknown window is ``None``.
* :func:`choose_profile`: ``compact`` (short tool descriptions, fewer instructions, a
  smaller ranked skills block) for local servers whose window is small, else
  ``default``; a configured ``profile`` wins.
* :class:`ToolView` is a ``Model`` that shows its inner model shorter tools (the
  agent builder gives it ``tools/compact.py``'s rewrite).
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from skilldeck.config import Settings
from skilldeck.llm.messages import AssistantMessage, Message, Model, StreamEvent, ToolSpec
from skilldeck.llm.sdk_errors import is_local_url
from skilldeck.settings.model import ModelOptions

__all__ = [
    "COMPACT_WINDOW",
    "DISCOVERY_TIMEOUT",
    "SAMPLING_KEYS",
    "Profile",
    "ToolView",
    "choose_profile",
    "discover_context_window",
    "is_local_model",
    "model_options",
    "request_timeout",
    "resolve_profile",
    "sampling_params",
]

#: a local server whose context window is at most this many tokens gets the compact
#: profile by default (llama.cpp's and Ollama's defaults are 4,096 to 8,192)
COMPACT_WINDOW = 32_768
#: seconds a context-window question may take (a local server answers in milliseconds)
DISCOVERY_TIMEOUT = 2.0
#: what Ollama gives a model when its Modelfile sets no ``num_ctx``
OLLAMA_DEFAULT_CTX = 4096
SAMPLING_KEYS = ("temperature", "seed", "top_p")

_CACHE: dict[tuple[str, str], int | None] = {}
_CACHE_LOCK = threading.Lock()


def model_options(settings: Settings, spec: str) -> ModelOptions:
    """The options for ``spec`` (``provider:model``), merged field by field."""
    provider, _, name = spec.partition(":")
    table = settings.models.options
    merged: dict[str, Any] = {}
    for key in ("*", provider, name, spec):
        entry = table.get(key)
        if entry is not None:
            merged.update(entry.model_dump(exclude_none=True))
    return ModelOptions(**merged)


def sampling_params(options: ModelOptions) -> dict[str, Any]:
    """``temperature``/``seed``/``top_p`` as request keys, only those that are set."""
    values = options.model_dump(include=set(SAMPLING_KEYS), exclude_none=True)
    return {key: values[key] for key in SAMPLING_KEYS if key in values}


def is_local_model(provider: str, base_url: str | None) -> bool:
    """``ollama:`` or a server on this machine: slow first tokens, small windows."""
    return provider == "ollama" or (bool(base_url) and is_local_url(base_url or ""))


def request_timeout(settings: Settings, options: ModelOptions, *, local: bool) -> float:
    """Seconds per read: the model's own, else the local or the general default."""
    if options.request_timeout is not None:
        return options.request_timeout
    models = settings.models
    return (
        max(models.local_request_timeout, models.request_timeout)
        if local
        else (models.request_timeout)
    )


def choose_profile(options: ModelOptions, *, provider: str, local: bool, window: int | None) -> str:
    """``compact`` or ``default``. A configured profile wins; ``auto`` means compact for
    ``ollama:`` and for local or ``openai-compat:`` servers with a small window."""
    if options.profile in ("default", "compact"):
        return options.profile
    if provider not in ("ollama", "openai-compat") and not local:
        return "default"
    if window is None:
        return "compact" if provider == "ollama" else "default"
    return "compact" if window <= COMPACT_WINDOW else "default"


@dataclass(frozen=True)
class Profile:
    """What a model is shown: ``compact`` or ``default``, and its context window in
    tokens when known (configured or discovered)."""

    name: str
    window: int | None = None

    @property
    def compact(self) -> bool:
        return self.name == "compact"


def resolve_profile(settings: Settings, model: Model) -> Profile:
    """The profile of ``model`` (made by the factory, or any ``Model``): its options,
    the window the config gives or the server reports (asked only of ``ollama:``,
    ``openai-compat:`` and local servers), then :func:`choose_profile`."""
    spec = model.name
    provider, _, name = spec.partition(":")
    options = model_options(settings, spec)
    endpoint = getattr(model, "endpoint", None)
    base_url = getattr(endpoint, "base_url", None) if endpoint is not None else None
    local = is_local_model(provider, base_url)
    window = options.context_window or settings.models.context_windows.get(spec)
    if window is None and base_url and (provider in ("ollama", "openai-compat") or local):
        window = discover_context_window(provider, name, base_url)
    return Profile(choose_profile(options, provider=provider, local=local, window=window), window)


# ---- context windows -------------------------------------------------------------


def discover_context_window(
    provider: str,
    model: str,
    base_url: str,
    *,
    timeout: float = DISCOVERY_TIMEOUT,
    transport: httpx2.BaseTransport | None = None,
) -> int | None:
    """The server's context window for ``model`` in tokens, or None when it does not
    say (or does not answer within ``timeout``). Cached per base URL and model."""
    key = (base_url.rstrip("/"), model)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    window: int | None = None
    try:
        with httpx2.Client(timeout=timeout, transport=transport) as client:
            window = _ask(client, provider, model, key[0])
    except (httpx2.HTTPError, ValueError, OSError):
        window = None
    with _CACHE_LOCK:
        _CACHE[key] = window
    return window


def forget_context_windows() -> None:
    """Drop the cache (tests; a server restarted with another ``-c``)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _ask(client: httpx2.Client, provider: str, model: str, base: str) -> int | None:
    root = base.removesuffix("/v1")
    if provider == "ollama":
        return _ollama_window(client, root, model)
    return _llama_cpp_window(client, root) or _vllm_window(client, base, model)


def _json(response: httpx2.Response) -> Any:
    if response.status_code != 200:
        return None
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _ollama_window(client: httpx2.Client, root: str, model: str) -> int | None:
    """``num_ctx`` of the Modelfile when set (what Ollama runs with), else its default:
    the trained ``*.context_length`` is not what a default Ollama server allocates."""
    data = _json(client.post(f"{root}/api/show", json={"model": model}))
    if not isinstance(data, dict):
        return None
    for line in str(data.get("parameters") or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx" and parts[1].isdigit():
            return int(parts[1])
    info = data.get("model_info")
    trained = None
    if isinstance(info, dict):
        trained = next(
            (_positive(v) for k, v in info.items() if k.endswith(".context_length")), None
        )
    return min(trained, OLLAMA_DEFAULT_CTX) if trained else OLLAMA_DEFAULT_CTX


def _llama_cpp_window(client: httpx2.Client, root: str) -> int | None:
    data = _json(client.get(f"{root}/props"))
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    inner = settings.get("n_ctx") if isinstance(settings, dict) else None
    return _positive(inner) or _positive(data.get("n_ctx"))


def _vllm_window(client: httpx2.Client, base: str, model: str) -> int | None:
    data = _json(client.get(f"{base}/models"))
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    windows = {
        e.get("id"): _positive(e.get("max_model_len")) for e in entries if isinstance(e, dict)
    }
    return windows.get(model) or (next(iter(windows.values())) if len(windows) == 1 else None)


# ---- what the model is shown ------------------------------------------------------


class ToolView:
    """A ``Model`` that shows ``inner`` each tool as ``show`` rewrites it (the compact
    profile: ``tools/compact.py``). Everything else — the name, ``aclose``, the
    endpoint — is the inner model's."""

    def __init__(self, inner: Model, show: Callable[[ToolSpec], ToolSpec]) -> None:
        self.inner = inner
        self.name = inner.name
        self.show = show

    def shown(self, tools: list[ToolSpec]) -> list[ToolSpec]:
        return [self.show(tool) for tool in tools]

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return await self.inner.respond(messages, self.shown(tools))

    def stream(self, messages: list[Message], tools: list[ToolSpec]) -> AsyncIterator[StreamEvent]:
        return self.inner.stream(messages, self.shown(tools))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
