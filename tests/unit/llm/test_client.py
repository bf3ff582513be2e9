"""ModelLLMClient: the prompt-in, text-out interface code skills get."""

from __future__ import annotations

import pytest

from skilldeck.llm.client import ModelLLMClient
from skilldeck.llm.messages import LLMClient, SystemMessage, Usage, UserMessage
from skilldeck.llm.scripted import ScriptedModel

pytestmark = pytest.mark.anyio


async def test_complete_sends_system_and_prompt_without_tools() -> None:
    model = ScriptedModel.from_lines(
        [
            {
                "for": "Summarise",
                "text": "A summary.",
                "usage": {"input_tokens": 5, "output_tokens": 2},
            },
            {"text": "Other."},
        ]
    )
    client = ModelLLMClient(model)
    assert isinstance(client, LLMClient)
    assert await client.complete("Summarise this text", system="Be brief.") == "A summary."
    assert await client.complete("Anything else") == "Other."

    first = model.requests[0]
    assert first.messages == [
        SystemMessage(content="Be brief."),
        UserMessage(content="Summarise this text"),
    ]
    assert first.tools == []
    assert model.requests[1].messages == [UserMessage(content="Anything else")]
    assert client.calls == 2
    assert client.usage.input_tokens > 5
    assert client.usage.output_tokens >= 2
    assert client.usage != Usage()
