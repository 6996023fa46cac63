"""The model providers (Anthropic, OpenAI-compatible) behind one streaming contract, with
the retries and the registry of which provider serves a model."""
