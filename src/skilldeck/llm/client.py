"""``ModelLLMClient``: the small ``LLMClient`` handed to code skills, over any ``Model``.

Code skills only need "prompt in, text out"; giving them this instead of the model
keeps tool calling, history and streaming out of their reach, and lets the agent
count what they spend (``usage``) with the rest of the run.
"""

from __future__ import annotations

from skilldeck.llm.messages import (
    AssistantMessage,
    LLMClient,
    Message,
    Model,
    SystemMessage,
    Usage,
    UserMessage,
)

__all__ = ["ModelLLMClient"]


class ModelLLMClient(LLMClient):
    """One-shot completions through ``model``; no tools are offered."""

    def __init__(self, model: Model) -> None:
        self.model = model
        #: tokens spent by every ``complete`` call so far
        self.usage = Usage()
        #: how many completions were requested
        self.calls = 0

    async def complete(self, prompt: str, system: str | None = None) -> str:
        messages: list[Message] = []
        if system:
            messages.append(SystemMessage(content=system))
        messages.append(UserMessage(content=prompt))
        turn: AssistantMessage = await self.model.respond(messages, [])
        self.calls += 1
        if turn.usage is not None:
            self.usage = self.usage + turn.usage
        return turn.text
