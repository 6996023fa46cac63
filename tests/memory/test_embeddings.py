"""The embedding models: the one inside Parley in a process of its own (restarted when it
died, killed when slow, let go when idle), a model behind an OpenAI-compatible endpoint
(the real SDK against the fake), and which one the settings choose."""

from __future__ import annotations

import asyncio
import os
import signal

import numpy as np
import pytest

from bot.config.settings import ConfigError, load_settings
from bot.memory.embeddings import EmbeddingFailed
from bot.memory.endpoint import EndpointModel
from bot.memory.local import NAME, LocalModel
from bot.memory.models import embedder_of
from tests.fakes.llm import OPENAI_KEY, FakeLLM

pytestmark = pytest.mark.e2e  # starts the model's process

NOTES = [
    "Dog: Rex, a beagle adopted in 2019",
    "I drink my coffee black, no sugar",
    "My sister Eve lives in Lisbon",
    "The car's plate number is KX-4512",
]


async def test_a_reworded_question_is_nearest_its_note() -> None:
    model = LocalModel(timeout=30)
    try:
        notes = await model.embed(NOTES, query=False)
        for question, meant in (
            ("Remind me what name my pet has?", 0),
            ("How do I take my coffee?", 1),
            ("¿Dónde vive mi hermana?", 2),  # Spanish, of an English note
        ):
            [asked] = await model.embed([question], query=True)
            assert int(np.argmax(notes @ asked)) == meant, question
        assert notes.shape == (4, 384)
        assert np.allclose(np.linalg.norm(notes, axis=1), 1.0, atol=1e-3)
    finally:
        await model.aclose()


def pid_of(model: LocalModel) -> int:
    assert model._process is not None
    return model._process.pid


async def test_a_dead_or_slow_process_fails_one_request_and_the_next_starts_another() -> None:
    model = LocalModel(timeout=30)
    try:
        await model.embed(["warm"], query=True)
        first = pid_of(model)
        os.kill(first, signal.SIGKILL)
        await asyncio.sleep(0.2)  # reaped: the next request starts a new one
        assert (await model.embed(["again"], query=True)).shape == (1, 384)
        assert pid_of(model) != first
        model.timeout = 0.0001
        with pytest.raises(EmbeddingFailed, match="took too long"):
            await model.embed(NOTES * 16, query=False)
        assert model._process is None  # killed, not left behind
        model.timeout = 30
        assert (await model.embed(["and again"], query=True)).shape == (1, 384)
    finally:
        await model.aclose()


async def test_an_idle_model_process_is_let_go() -> None:
    model = LocalModel(timeout=30, idle=0.2)
    await model.embed(["hello"], query=True)
    pid = pid_of(model)
    await asyncio.sleep(1.0)
    assert model._process is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    await model.aclose()


async def test_a_bad_request_is_answered_with_why() -> None:
    model = LocalModel(timeout=30)
    try:
        with pytest.raises(EmbeddingFailed, match="texts: 1 to 64 strings"):
            await model.embed([], query=True)
        assert (await model.embed(["fine"], query=True)).shape == (1, 384)
    finally:
        await model.aclose()


async def test_an_endpoint_model_answers_in_order_and_fails_within_its_timeout(
    fake_llm: FakeLLM,
) -> None:
    model = EndpointModel("text-embedding-3-small", fake_llm.openai_base_url, OPENAI_KEY, 2.0)
    try:
        vectors = await model.embed(["green tea", "black coffee", "green tea please"], query=False)
        assert vectors.shape == (3, 384)
        assert float(vectors[0] @ vectors[2]) > float(vectors[0] @ vectors[1])  # shared words
        asked = fake_llm.embeddings.requests[-1]
        assert (asked.model, asked.inputs) == (
            "text-embedding-3-small", ("green tea", "black coffee", "green tea please"),
        )  # fmt: skip
        fake_llm.embeddings.failing.append(503)
        with pytest.raises(EmbeddingFailed, match="InternalServerError"):
            await model.embed(["x"], query=True)
        fake_llm.embeddings.delay = 5.0
        with pytest.raises(EmbeddingFailed, match="APITimeoutError"):
            await model.embed(["x"], query=True)
    finally:
        await model.aclose()


def test_the_settings_choose_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = embedder_of(load_settings(_env_file=None))
    assert isinstance(local, LocalModel) and local.name == NAME
    assert embedder_of(load_settings(_env_file=None, embeddings_model="off")) is None
    ollama = "http://127.0.0.1:11434/v1"
    chosen = load_settings(
        _env_file=None, embeddings_model="nomic-embed-text", embeddings_base_url=ollama
    )
    served = embedder_of(chosen)
    assert isinstance(served, EndpointModel) and served.name == "nomic-embed-text"
    monkeypatch.setenv("PARLEY_EMBEDDINGS_MODEL", "text-embedding-3-small")
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    assert str(caught.value) == (
        "PARLEY_EMBEDDINGS_API_KEY: OpenAI's embeddings endpoint needs a key (or set "
        "OPENAI_API_KEY, or PARLEY_EMBEDDINGS_BASE_URL for another endpoint)"
    )


async def test_a_text_too_long_for_one_request_is_cut_and_the_answers_stay_in_step() -> None:
    model = LocalModel(timeout=30)
    try:
        [huge] = await model.embed(["my dog Rex " * 300_000], query=False)  # 3.3 MB
        [rex] = await model.embed(["my dog Rex"], query=False)
        [tea] = await model.embed(["I drink green tea"], query=False)
        assert float(huge @ rex) > float(huge @ tea)  # the cut text, each answer its own
        assert float(rex @ rex) > 0.99
    finally:
        await model.aclose()
