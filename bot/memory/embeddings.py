"""Embedding models: texts as unit vectors, so that recall finds memories by meaning.

Two kinds (`bot.memory.models` picks one from the settings): the model inside Parley, in a
process of its own (`bot.memory.local`), and a model behind an OpenAI-compatible
`/embeddings` endpoint (`bot.memory.endpoint`). A model's `name` is stored with each vector it
made, so vectors of different models are never compared.

Embedding never runs on the event loop: the local model answers from its process, an
endpoint over HTTP. Either one failing or slower than `PARLEY_EMBEDDINGS_TIMEOUT` raises
`EmbeddingFailed`, and recall goes on by words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

if TYPE_CHECKING:  # numpy is imported when first needed (`bot.memory.vector_math`)
    import numpy as np
    from numpy.typing import NDArray

Vectors: TypeAlias = "NDArray[np.float32]"  # one unit-length row per text


class EmbeddingFailed(Exception):
    """No vectors this time (the model's process died, the endpoint failed or was slow);
    the text says why, for the log."""


class Embedder(Protocol):
    name: str  # stored with each vector it made

    async def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        """`texts` as vectors: as questions (`query`) or as memories to be found."""
        ...

    async def aclose(self) -> None: ...
