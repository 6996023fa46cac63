"""Memory by meaning and the days' digests, checked: the embedding model
(`PARLEY_EMBEDDINGS_MODEL`) embeds one text, as recall will, so a model that cannot start
here (the one inside Parley) or an endpoint that refuses its key is found before recall
quietly goes by words alone; and the model that writes the digests is named.
"""

from __future__ import annotations

import time

from bot.config.settings import ConfigError, Settings
from bot.llm.served import Served
from bot.memory.digest import digest_model
from bot.memory.embeddings import EmbeddingFailed
from bot.memory.models import embedder_of
from worker.doctor.report import Finding, failed, ok

CHECK = "memory"
STUCK = "check that the embeddings endpoint answers from here (PARLEY_EMBEDDINGS_BASE_URL)"
PROBE = "The dog's name is Rex"


async def check_memory(settings: Settings) -> list[Finding]:
    try:
        digests = digest_model(settings, Served.of(settings))
    except ConfigError as exc:
        return [failed(CHECK, str(exc), "name a model this deployment serves, or off")]
    written = f"days' digests by {digests}" if digests else "no days' digests (off)"
    embedder = embedder_of(settings)
    if embedder is None:
        return [ok(CHECK, f"recall by words alone (PARLEY_EMBEDDINGS_MODEL=off); {written}")]
    started = time.perf_counter()
    try:
        [vector] = await embedder.embed([PROBE], query=False)
    except EmbeddingFailed as exc:
        fix = (
            "the model inside Parley could not run here: see `parley worker`'s log, or set "
            "PARLEY_EMBEDDINGS_MODEL=off"
            if settings.embeddings_model == "local"
            else "check PARLEY_EMBEDDINGS_MODEL, PARLEY_EMBEDDINGS_BASE_URL and its key"
        )
        return [failed(CHECK, f"{embedder.name}: {exc}", fix)]
    finally:
        await embedder.aclose()
    took = time.perf_counter() - started
    found = f"{embedder.name} embedded a text in {took:.2f} s ({len(vector)} dimensions); "
    return [ok(CHECK, found + written)]
