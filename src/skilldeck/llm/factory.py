"""``provider:model`` → a ready ``Model``: the one place for credentials, URLs and retries.

Adapters only translate wire formats; everything a user configures — which
environment variable holds the key, which URL a server lives at, how often to retry —
is decided here, so the messages about it are the same everywhere.

===================  ========================================  =============================
spec                 server                                    key
===================  ========================================  =============================
openai:<model>       ``base_url`` › models.base_url ›           ``OPENAI_API_KEY`` (required)
                     ``OPENAI_BASE_URL`` › api.openai.com
anthropic:<model>    ``base_url`` › ``ANTHROPIC_BASE_URL`` ›    ``ANTHROPIC_API_KEY`` or
                     api.anthropic.com                          ``ANTHROPIC_AUTH_TOKEN``
ollama:<model>       ``base_url`` › ``OLLAMA_HOST`` ›           none
                     http://localhost:11434/v1
openai-compat:<m>    ``base_url`` › models.base_url ›           ``OPENAI_API_KEY`` if set
                     ``OPENAI_BASE_URL`` (required)
scripted:<path>      none: plays a JSONL file                   none
===================  ========================================  =============================

Per model (``[models.options."provider:model"]``, see :mod:`.profile`): sampling
(``temperature``, ``seed``, ``top_p``, sent only when set), the read timeout (600 s
for servers on this machine unless set), and streaming — on by default, so even a
non-streamed ``respond`` waits only for the first chunk, never for a whole reply.
Every retry is told to ``on_retry`` before its wait.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args
from urllib.parse import urlsplit

from skilldeck.config import Settings
from skilldeck.errors import ModelConfigError
from skilldeck.llm.messages import Model
from skilldeck.llm.profile import (
    is_local_model,
    model_options,
    request_timeout,
    sampling_params,
)
from skilldeck.llm.retry import RetryNotice, RetryPolicy
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.llm.sdk_errors import Endpoint

if TYPE_CHECKING:  # the SDKs cost ~2 s of imports: loaded only for their providers
    import anthropic
    import httpx2
    import openai

    from skilldeck.llm.anthropic_adapter import AnthropicModel
    from skilldeck.llm.openai_adapter import OpenAIModel

__all__ = ["PROVIDERS", "make_model", "model_aliases", "parse_model_spec"]

PROVIDERS = ("openai", "anthropic", "ollama", "openai-compat", "scripted")

#: Claude Code's model shorthands (AGENT.md / SKILL.md ``model:``) → newest model of that
#: family the installed ``anthropic`` SDK knows (fallbacks if it lists none)
ALIASES_FALLBACK = {
    "sonnet": "claude-sonnet-4-6",
    "opus": "claude-opus-4-6",
    "haiku": "claude-haiku-4-5",
}

OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
OLLAMA_URL = "http://localhost:11434/v1"
#: what the SDK is given when a server needs no key (it refuses to start with none)
DUMMY_KEY = "not-needed"


def parse_model_spec(spec: str) -> tuple[str, str]:
    """``"openai:gpt-4.1"`` → ``("openai", "gpt-4.1")``; aliases and bare names resolved."""
    key = spec.strip().lower()
    spec = model_aliases()[key] if key in ALIASES_FALLBACK else spec.strip()
    provider, sep, name = spec.partition(":")
    if not sep:
        inferred = _infer_provider(spec)
        if inferred is None:
            raise ModelConfigError(
                f"Model {spec!r} has no provider. Write provider:model with one of "
                f"{', '.join(PROVIDERS)} (e.g. openai:gpt-4.1-mini, ollama:qwen2.5)."
            )
        return inferred, spec
    provider = provider.strip().lower()
    if provider not in PROVIDERS:
        raise ModelConfigError(
            f"Unknown model provider {provider!r} in {spec!r}. Valid providers: "
            f"{', '.join(PROVIDERS)}."
        )
    if not name.strip():
        raise ModelConfigError(f"Model spec {spec!r} names no model after '{provider}:'.")
    return provider, name.strip()


@functools.cache
def model_aliases() -> dict[str, str]:
    """``sonnet``/``opus``/``haiku`` → ``anthropic:<newest non-deprecated model>``.

    The SDK lists its known models newest first; taking the first undated,
    non-deprecated one per family keeps the aliases current as the SDK is upgraded.
    """
    from anthropic.types import ModelParam

    known = [m for m in get_args(get_args(ModelParam)[0]) if isinstance(m, str)]
    try:  # a private table of the SDK: do without it if it moves
        from anthropic.resources.messages.messages import DEPRECATED_MODELS
    except ImportError:  # pragma: no cover - depends on the SDK version
        DEPRECATED_MODELS = {}
    aliases: dict[str, str] = {}
    for family, fallback in ALIASES_FALLBACK.items():
        newest = next(
            (
                m
                for m in known
                if m.startswith(f"claude-{family}-")
                and m not in DEPRECATED_MODELS
                and not re.search(r"-\d{8}$", m)
            ),
            fallback,
        )
        aliases[family] = f"anthropic:{newest}"
    return aliases


def _infer_provider(name: str) -> str | None:
    """Bare model names that can only mean one provider."""
    if name.startswith("claude-"):
        return "anthropic"
    if name.startswith(("gpt-", "o1", "o3", "o4", "chatgpt-")):
        return "openai"
    return None


@dataclass(frozen=True)
class _Options:
    settings: Settings
    base_url: str | None
    http_client: httpx2.AsyncClient | None
    retry: RetryPolicy

    def client_options(self, url: str, spec: str) -> dict[str, Any]:
        """What every SDK client is built with: retries off (``retry.py`` is the only
        retry loop), the model's timeout, and the injected HTTP client (tests).
        Read when a client is made, so it follows later changes to the settings."""
        local = is_local_model(spec.partition(":")[0], url)
        options = model_options(self.settings, spec)
        return {
            "base_url": url,
            "max_retries": 0,
            "timeout": request_timeout(self.settings, options, local=local),
            "http_client": self.http_client,
        }

    def adapter_options(self, spec: str) -> dict[str, Any]:
        """Streaming (on unless the model's options turn it off) and sampling."""
        options = model_options(self.settings, spec)
        return {
            "streaming": True if options.stream is None else options.stream,
            "sampling": sampling_params(options),
        }


def make_model(
    spec: str,
    *,
    settings: Settings,
    base_url: str | None = None,
    http_client: httpx2.AsyncClient | None = None,
    retry: RetryPolicy | None = None,
    on_retry: Callable[[RetryNotice], None] | None = None,
) -> Model:
    """Build the model ``spec`` names.

    ``base_url`` is what ``--base-url`` gives; ``http_client`` lets tests put a
    ``httpx2.MockTransport`` under the real SDK; ``retry`` overrides the policy built
    from ``settings.models.max_retries``; ``on_retry`` hears of every retry.
    """
    if spec.strip().lower() in ALIASES_FALLBACK:
        # resolving an alias reads the anthropic SDK's model list: check the key first
        _anthropic_credentials(spec.strip().lower())
    provider, name = parse_model_spec(spec)
    opts = _Options(
        settings=settings,
        base_url=base_url,
        http_client=http_client,
        retry=_policy(settings, retry, on_retry),
    )
    if provider == "scripted":
        return ScriptedModel(_script_path(name, settings), name=f"scripted:{name}")
    if provider == "anthropic":
        return _anthropic(name, opts)
    return _openai_family(provider, name, opts)


def _policy(
    settings: Settings, given: RetryPolicy | None, on_retry: Callable[[RetryNotice], None] | None
) -> RetryPolicy:
    policy = given or RetryPolicy(max_retries=settings.models.max_retries)
    return replace(policy, on_retry=on_retry) if on_retry is not None else policy


def _script_path(name: str, settings: Settings) -> Path:
    """Relative to the current directory, else to the workspace."""
    path = Path(name).expanduser()
    if path.is_absolute() or path.exists():
        return path
    in_workspace = settings.workspace / path
    return in_workspace if in_workspace.exists() else path


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _openai_family(provider: str, name: str, opts: _Options) -> OpenAIModel:
    """Credentials and URL are checked before the SDK is imported (it takes seconds):
    a missing key is reported at once."""
    configured = opts.base_url or opts.settings.models.base_url
    if provider == "ollama":
        url = opts.base_url or _ollama_url()
        key, key_env = DUMMY_KEY, None
    elif provider == "openai-compat":
        url = configured or _env("OPENAI_BASE_URL") or ""
        if not url:
            raise ModelConfigError(
                f"openai-compat:{name} needs the server's URL: pass --base-url "
                "http://HOST:PORT/v1 or set OPENAI_BASE_URL."
            )
        key, key_env = _env("OPENAI_API_KEY") or DUMMY_KEY, None
    else:
        url = configured or _env("OPENAI_BASE_URL") or OPENAI_URL
        key = _env("OPENAI_API_KEY") or ""
        key_env = "OPENAI_API_KEY"
        if not key:
            raise ModelConfigError(
                f"OPENAI_API_KEY is not set: export OPENAI_API_KEY=... to use openai:{name} "
                "(or use ollama:<model> for a local server)."
            )
    endpoint = Endpoint(
        spec=f"{provider}:{name}", base_url=_checked_url(url, f"{provider}:{name}"), key_env=key_env
    )
    import openai  # lazy: the SDK, only for its providers

    from skilldeck.llm.openai_adapter import OpenAIModel  # lazy: imports the openai SDK

    def make_client() -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(api_key=key, **opts.client_options(url, endpoint.spec))

    return OpenAIModel(
        name=f"{provider}:{name}",
        model=name,
        endpoint=endpoint,
        make_client=make_client,
        retry=opts.retry,
        max_tokens=opts.settings.models.max_output_tokens,
        max_tokens_param="max_completion_tokens" if provider == "openai" else "max_tokens",
        **opts.adapter_options(endpoint.spec),
    )


def _checked_url(url: str, spec: str) -> str:
    """``url`` when an HTTP client can use it; else the error saying what is wrong
    with it (``http://[::1``, a port past 65535, a host that is not a name), where
    the SDK would end in a traceback at the first request."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
        host = parts.hostname or ""
        host.encode("idna")
    except (ValueError, UnicodeError) as e:
        raise ModelConfigError(
            f"{spec}: the server URL {url!r} is not valid ({e}); give one such as "
            "http://127.0.0.1:8000/v1 (--base-url, or the provider's variable)."
        ) from e
    if parts.scheme not in ("http", "https") or not host:
        raise ModelConfigError(
            f"{spec}: the server URL {url!r} needs http:// or https:// and a host, such as "
            "http://127.0.0.1:8000/v1 (--base-url, or the provider's variable)."
        )
    return url


def _ollama_url() -> str:
    """``OLLAMA_HOST`` (``host:port`` or a URL) + ``/v1``, else the default port."""
    host = _env("OLLAMA_HOST")
    if not host:
        return OLLAMA_URL
    if "://" not in host:
        host = f"http://{host}"
    return host.rstrip("/") + "/v1"


def _anthropic_credentials(name: str) -> tuple[str | None, str | None]:
    """``(api_key, auth_token)``, one of them set, or the error naming the variable."""
    api_key = _env("ANTHROPIC_API_KEY")
    auth_token = None if api_key else _env("ANTHROPIC_AUTH_TOKEN")
    if not api_key and not auth_token:
        raise ModelConfigError(
            f"ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=... to use anthropic:{name}."
        )
    return api_key, auth_token


def _anthropic(name: str, opts: _Options) -> AnthropicModel:
    """As :func:`_openai_family`: the key is checked before the SDK is imported."""
    api_key, auth_token = _anthropic_credentials(name)
    url = opts.base_url or _env("ANTHROPIC_BASE_URL") or ANTHROPIC_URL
    endpoint = Endpoint(
        spec=f"anthropic:{name}",
        base_url=_checked_url(url, f"anthropic:{name}"),
        key_env="ANTHROPIC_API_KEY",
    )
    import anthropic  # lazy: the SDK, only for its provider

    from skilldeck.llm.anthropic_adapter import (  # lazy: imports the anthropic SDK
        DEFAULT_MAX_TOKENS,
        AnthropicModel,
    )

    def make_client() -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=api_key, auth_token=auth_token, **opts.client_options(url, endpoint.spec)
        )

    return AnthropicModel(
        name=f"anthropic:{name}",
        model=name,
        endpoint=endpoint,
        make_client=make_client,
        retry=opts.retry,
        max_tokens=opts.settings.models.max_output_tokens or DEFAULT_MAX_TOKENS,
        **opts.adapter_options(endpoint.spec),
    )
