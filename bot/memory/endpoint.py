"""A model behind an OpenAI-compatible `/embeddings` endpoint (`PARLEY_EMBEDDINGS_MODEL` naming
it, `_BASE_URL`, `_API_KEY`): OpenAI's, or a local server's (Ollama, llama.cpp, vLLM). Tried
once per request within `PARLEY_EMBEDDINGS_TIMEOUT`; imported only where one is configured
(the SDK takes half a second to import)."""

from __future__ import annotations

from collections.abc import Sequence

import openai

from bot import tls
from bot.memory.embeddings import EmbeddingFailed, Vectors
from bot.memory.vector_math import unit


class EndpointModel:
    """A model behind an OpenAI-compatible `/embeddings` endpoint."""

    def __init__(self, model: str, base_url: str | None, api_key: str, timeout: float) -> None:
        self.name = model
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,  # a turn waits at most one timeout, then recall goes by words
            http_client=openai.DefaultAsyncHttpxClient(verify=tls.shared_context()),
        )

    async def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        try:
            answer = await self._client.embeddings.create(model=self.name, input=list(texts))
        except openai.OpenAIError as exc:
            raise EmbeddingFailed(f"the embeddings endpoint: {type(exc).__name__}") from None
        rows = sorted(answer.data, key=lambda item: item.index)
        if len(rows) != len(texts):
            raise EmbeddingFailed(f"the embeddings endpoint gave {len(rows)} of {len(texts)}")
        return unit([row.embedding for row in rows])

    async def aclose(self) -> None:
        await self._client.close()
