"""Model adapters behind one provider-neutral message model: ``provider:model`` names
(:mod:`.factory`), the ``Model`` protocol (:mod:`.messages`), OpenAI(-compatible),
Anthropic and scripted adapters, reply checks and the one retry policy. Never imports
``agent/`` or an interface."""
