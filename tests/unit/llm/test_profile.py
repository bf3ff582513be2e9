"""llm/profile.py: options merged per model, the context window a server reports
(Ollama, llama.cpp, vLLM; cached; never fatal), the profile chosen, the tool view."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from llm_fakes import settings_for

from skilldeck.llm.messages import AssistantMessage, Message, ToolSpec
from skilldeck.llm.profile import (
    ToolView,
    choose_profile,
    discover_context_window,
    forget_context_windows,
    model_options,
    resolve_profile,
    sampling_params,
)
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.settings.model import ModelOptions


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    forget_context_windows()
    yield
    forget_context_windows()


class Server:
    """A MockTransport answering ``routes`` (``"GET /props"`` → JSON or a status)."""

    def __init__(self, routes: dict[str, Any]) -> None:
        self.routes = routes
        self.seen: list[str] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        key = f"{request.method} {request.url.path}"
        self.seen.append(key)
        answer = self.routes.get(key, 404)
        if isinstance(answer, int):
            return httpx2.Response(answer, text="no")
        if isinstance(answer, Exception):
            raise answer
        return httpx2.Response(200, content=json.dumps(answer).encode())

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handler)


def test_options_merge_from_least_to_most_specific(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    settings.models.options = {
        "*": ModelOptions(temperature=1.0, stream=False),
        "ollama": ModelOptions(seed=1, profile="compact"),
        "qwen2.5": ModelOptions(seed=2),
        "ollama:qwen2.5": ModelOptions(top_p=0.5),
    }
    merged = model_options(settings, "ollama:qwen2.5")
    assert (merged.temperature, merged.seed, merged.top_p) == (1.0, 2, 0.5)
    assert merged.stream is False and merged.profile == "compact"
    assert sampling_params(merged) == {"temperature": 1.0, "seed": 2, "top_p": 0.5}
    assert sampling_params(model_options(settings, "openai:gpt-4.1")) == {"temperature": 1.0}
    assert sampling_params(ModelOptions()) == {}


def test_llama_cpp_props_give_n_ctx() -> None:
    server = Server({"GET /props": {"default_generation_settings": {"n_ctx": 4096}}})
    url = "http://127.0.0.1:8080/v1"
    assert discover_context_window("openai-compat", "m", url, transport=server.transport()) == 4096
    # cached per base URL and model: the server is asked once
    assert discover_context_window("openai-compat", "m", url, transport=server.transport()) == 4096
    assert server.seen == ["GET /props"]


def test_vllm_models_give_max_model_len() -> None:
    server = Server(
        {
            "GET /v1/models": {
                "data": [
                    {"id": "Qwen/Qwen2.5-7B", "max_model_len": 32768},
                    {"id": "other", "max_model_len": 8192},
                ]
            }
        }
    )
    window = discover_context_window(
        "openai-compat", "Qwen/Qwen2.5-7B", "http://gpu:8000/v1", transport=server.transport()
    )
    assert window == 32768
    assert server.seen == ["GET /props", "GET /v1/models"]


def test_ollama_show_gives_num_ctx_or_its_default() -> None:
    with_num_ctx = Server(
        {
            "POST /api/show": {
                "parameters": 'num_ctx                        16384\nstop "<|im_end|>"',
                "model_info": {"qwen2.context_length": 32768},
            }
        }
    )
    url = "http://localhost:11434/v1"
    assert discover_context_window("ollama", "a", url, transport=with_num_ctx.transport()) == 16384
    trained_only = Server({"POST /api/show": {"model_info": {"qwen2.context_length": 32768}}})
    # Ollama runs a model with its default context unless the Modelfile sets num_ctx
    assert discover_context_window("ollama", "b", url, transport=trained_only.transport()) == 4096


@pytest.mark.parametrize(
    "answer",
    [500, {"no": "window"}, ["not", "an", "object"], httpx2.ConnectError("refused")],
    ids=["500", "no-field", "list", "refused"],
)
def test_a_server_that_does_not_say_is_none_never_an_error(answer: Any) -> None:
    server = Server({"GET /props": answer, "GET /v1/models": answer})
    window = discover_context_window(
        "openai-compat", "m", "http://127.0.0.1:1/v1", transport=server.transport()
    )
    assert window is None


def test_non_json_body_is_none() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, text="<html>hello</html>")

    window = discover_context_window(
        "openai-compat", "m", "http://127.0.0.1:2/v1", transport=httpx2.MockTransport(handler)
    )
    assert window is None


@pytest.mark.parametrize(
    ("options", "provider", "local", "window", "expected"),
    [
        (ModelOptions(), "openai", False, None, "default"),
        (ModelOptions(), "anthropic", False, 200_000, "default"),
        (ModelOptions(), "ollama", True, None, "compact"),
        (ModelOptions(), "openai-compat", True, 4096, "compact"),
        (ModelOptions(), "openai-compat", True, 131_072, "default"),
        (ModelOptions(), "openai-compat", True, None, "default"),
        (ModelOptions(profile="compact"), "openai", False, None, "compact"),
        (ModelOptions(profile="default"), "ollama", True, 2048, "default"),
    ],
)
def test_profile_choice(
    options: ModelOptions, provider: str, local: bool, window: int | None, expected: str
) -> None:
    assert choose_profile(options, provider=provider, local=local, window=window) == expected


def test_resolve_profile_uses_configured_window_without_asking(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    settings.models.options = {"scripted": ModelOptions(profile="compact", context_window=8192)}
    script = tmp_path / "s.jsonl"
    script.write_text('{"text": "done"}\n')
    profile = resolve_profile(settings, ScriptedModel(script, name=f"scripted:{script}"))
    assert profile.compact and profile.window == 8192
    assert not resolve_profile(settings_for(tmp_path), ScriptedModel(script)).compact


class Recorder:
    name = "fake:recorder"

    def __init__(self) -> None:
        self.tools: list[ToolSpec] = []

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        self.tools = tools
        return AssistantMessage(text="ok")

    def stream(self, messages: list[Message], tools: list[ToolSpec]) -> Any:
        raise NotImplementedError

    marker = "inner attribute"


@pytest.mark.anyio
async def test_tool_view_shows_the_rewritten_tools_and_forwards_the_rest() -> None:
    inner = Recorder()
    view = ToolView(inner, lambda t: t.model_copy(update={"description": "short"}))
    spec = ToolSpec(name="Read", description="a very long description", input_schema={})
    await view.respond([], [spec])
    assert [t.description for t in inner.tools] == ["short"]
    assert spec.description == "a very long description"  # the agent's own spec is untouched
    assert view.name == "fake:recorder" and view.marker == "inner attribute"
