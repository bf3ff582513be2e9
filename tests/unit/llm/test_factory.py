"""make_model: provider specs, credentials, base URLs, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_fakes import settings_for

from skilldeck.errors import ModelConfigError
from skilldeck.llm.anthropic_adapter import AnthropicModel
from skilldeck.llm.factory import PROVIDERS, make_model, model_aliases, parse_model_spec
from skilldeck.llm.messages import Model
from skilldeck.llm.openai_adapter import OpenAIModel
from skilldeck.llm.scripted import ScriptedModel

ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OLLAMA_HOST",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV:
        monkeypatch.delenv(var, raising=False)


def test_parse_specs() -> None:
    assert parse_model_spec("openai:gpt-4.1-mini") == ("openai", "gpt-4.1-mini")
    assert parse_model_spec(" Ollama:qwen2.5:7b ") == ("ollama", "qwen2.5:7b")
    assert parse_model_spec("scripted:dir/a.jsonl") == ("scripted", "dir/a.jsonl")
    assert parse_model_spec("claude-opus-4-6") == ("anthropic", "claude-opus-4-6")
    assert parse_model_spec("gpt-4.1") == ("openai", "gpt-4.1")
    provider, name = parse_model_spec("sonnet")
    assert provider == "anthropic"
    assert name.startswith("claude-sonnet-")
    assert set(model_aliases()) == {"sonnet", "opus", "haiku"}


def test_unknown_provider_lists_the_valid_ones() -> None:
    with pytest.raises(ModelConfigError) as info:
        parse_model_spec("gemini:flash")
    for provider in PROVIDERS:
        assert provider in str(info.value)


@pytest.mark.parametrize("spec", ["llama3", "openai:", "ollama:  "])
def test_incomplete_specs_are_config_errors(spec: str) -> None:
    with pytest.raises(ModelConfigError):
        parse_model_spec(spec)


def test_openai_needs_its_key_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError) as info:
        make_model("openai:gpt-4.1-mini", settings=settings_for(tmp_path))
    message = str(info.value)
    assert "OPENAI_API_KEY" in message
    assert "\n" not in message


def test_anthropic_needs_its_key_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError) as info:
        make_model("anthropic:claude-sonnet-4-6", settings=settings_for(tmp_path))
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert "\n" not in str(info.value)


def test_anthropic_accepts_an_auth_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok")
    model = make_model("anthropic:claude-sonnet-4-6", settings=settings_for(tmp_path))
    assert isinstance(model, AnthropicModel)
    assert model.endpoint.base_url == "https://api.anthropic.com"


def test_openai_base_url_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    settings = settings_for(tmp_path)
    default = make_model("openai:gpt-4.1", settings=settings)
    assert isinstance(default, OpenAIModel)
    assert default.endpoint.base_url == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env:1/v1")
    assert _url("openai:gpt-4.1", settings) == "http://env:1/v1"
    settings.models.base_url = "http://config:2/v1"
    assert _url("openai:gpt-4.1", settings) == "http://config:2/v1"
    assert _url("openai:gpt-4.1", settings, "http://flag:3/v1") == "http://flag:3/v1"


def _url(spec: str, settings: object, base_url: str | None = None) -> str:
    model = make_model(spec, settings=settings, base_url=base_url)  # type: ignore[arg-type]
    assert isinstance(model, OpenAIModel | AnthropicModel)
    return model.endpoint.base_url


def test_openai_compat_needs_a_url_and_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tmp_path)
    with pytest.raises(ModelConfigError) as info:
        make_model("openai-compat:local", settings=settings)
    assert "--base-url" in str(info.value)
    assert "OPENAI_BASE_URL" in str(info.value)
    model = make_model(
        "openai-compat:local", settings=settings, base_url="http://127.0.0.1:8000/v1"
    )
    assert isinstance(model, OpenAIModel)
    assert model.name == "openai-compat:local"
    assert model.model == "local"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9000/v1")
    assert _url("openai-compat:local", settings) == "http://127.0.0.1:9000/v1"


def test_ollama_defaults_and_ollama_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_for(tmp_path)
    assert _url("ollama:qwen2.5", settings) == "http://localhost:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11434")
    assert _url("ollama:qwen2.5", settings) == "http://10.0.0.5:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "https://gpu.example/")
    assert _url("ollama:qwen2.5", settings) == "https://gpu.example/v1"
    assert _url("ollama:qwen2.5", settings, "http://x:1/v1") == "http://x:1/v1"


def test_retry_policy_comes_from_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_for(tmp_path)
    settings.models.max_retries = 7
    model = make_model("ollama:qwen2.5", settings=settings)
    assert isinstance(model, OpenAIModel)
    assert model.retry.max_retries == 7


def test_scripted_paths_resolve_from_cwd_then_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "turns.jsonl").write_text('{"text": "hi"}\n', encoding="utf-8")
    settings = settings_for(workspace)
    monkeypatch.chdir(tmp_path)
    model = make_model("scripted:turns.jsonl", settings=settings)
    assert isinstance(model, ScriptedModel)
    assert isinstance(model, Model)
    assert model.path == workspace / "turns.jsonl"
    assert model.name == "scripted:turns.jsonl"
    (tmp_path / "turns.jsonl").write_text('{"text": "cwd"}\n', encoding="utf-8")
    cwd_model = make_model("scripted:turns.jsonl", settings=settings)
    assert isinstance(cwd_model, ScriptedModel)
    assert cwd_model.lines[0].text == "cwd"
    with pytest.raises(ModelConfigError, match="not found"):
        make_model("scripted:missing.jsonl", settings=settings)
