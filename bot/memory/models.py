"""Which embedding model recall uses, from `PARLEY_EMBEDDINGS_MODEL`: `local` (the default),
multilingual-e5-small inside Parley, with no key and no download; `off`, recall by words
alone; any other name, that model at an OpenAI-compatible `/embeddings` endpoint
(`PARLEY_EMBEDDINGS_BASE_URL`, `_API_KEY`)."""

from __future__ import annotations

import importlib

from bot.config import values
from bot.config.settings import Settings
from bot.memory.embeddings import Embedder
from bot.memory.local import LocalModel


def embedder_of(settings: Settings) -> Embedder | None:
    """The configured model, or None for recall by words alone."""
    if settings.embeddings_model == "off":
        return None
    if settings.embeddings_model == "local":
        return LocalModel(timeout=settings.embeddings_timeout)
    url = settings.embeddings_base_url  # OpenAI's key (its first) for OpenAI's endpoint alone
    key = settings.key_for(settings.embeddings_api_key, values.at_openai(url))
    endpoint = importlib.import_module("bot.memory.endpoint")  # the SDK, only when named
    model: Embedder = endpoint.EndpointModel(
        settings.embeddings_model,
        settings.embeddings_base_url,
        key.get_secret_value() if key is not None else "none",
        settings.embeddings_timeout,
    )
    return model
