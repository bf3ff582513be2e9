"""Use skilldeck's skills and tools from other agent stacks.

* :mod:`.skill_tools` — the skill catalog as four plain tools;
* :mod:`.openai_tools` / :mod:`.anthropic_tools` — function-calling export and dispatch;
* :mod:`.pydanticai` — adapter for Pydantic AI (extra ``skilldeck[pydantic-ai]``).
"""
