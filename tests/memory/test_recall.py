"""Recall on real databases with the model inside Parley: a reworded question finds its
memory among others by meaning, a failing model leaves recall to words with one warning,
and the background pass embeds what the configured model has not (after a change of model,
all of it again)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence

import pytest

from bot.memory.embeddings import EmbeddingFailed, Vectors
from bot.memory.local import LocalModel
from bot.memory.recall import Recall
from bot.store.database import Database
from bot.store.memory import Memories
from bot.store.memory_vectors import MemoryVectors
from tests.integration.telegram.test_memory import OTHERS, REX

pytestmark = pytest.mark.e2e  # starts the model's process
ANN = "tg:1"


@pytest.fixture
async def model() -> AsyncIterator[LocalModel]:
    started = LocalModel(timeout=30)
    yield started
    await started.aclose()


class Broken:
    """A model that always fails, as an unreachable endpoint does."""

    name = "broken"

    async def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        raise EmbeddingFailed("the embeddings endpoint: APIConnectionError")

    async def aclose(self) -> None:
        return None


async def test_a_reworded_question_finds_its_memory_by_meaning(
    db: Database, model: LocalModel
) -> None:
    recall = Recall.on(db.engine, model)
    for fact in [REX, *OTHERS]:
        memory, _ = await recall.memories.add(ANN, fact)
        await recall.kept(memory)
    found = await recall.search(ANN, "Remind me what name my pet has?", 5)
    assert found[0].text == REX
    words_alone = await recall.memories.search(ANN, "Remind me what name my pet has?", 5)
    assert REX not in [memory.text for memory in words_alone]
    # exact words and numbers are found first as well
    for asked, meant in (
        ("what is the bike lock code?", "The bike lock code is 4471"),
        ("KX-4512", "The car's plate number is KX-4512"),
        ("88213", "The library card number is 88213"),
    ):
        assert (await recall.search(ANN, asked, 3))[0].text == meant, asked
    assert await recall.search("tg:2", "Remind me what name my pet has?", 5) == []


async def test_a_failing_model_leaves_recall_to_words(
    db: Database, model: LocalModel, caplog: pytest.LogCaptureFixture
) -> None:
    memories, vectors = Memories(db.engine), MemoryVectors(db.engine)
    tea, _ = await memories.add(ANN, "I like green tea")
    await Recall(memories, vectors, model).kept(tea)
    broken = Recall(memories, vectors, Broken())
    with caplog.at_level(logging.WARNING):
        await broken.kept(tea)  # said, and left for the background pass
        found = await broken.search(ANN, "green tea", 5)
    assert [memory.text for memory in found] == ["I like green tea"]
    assert [memory.id for memory in await vectors.waiting("broken")] == [tea.id]
    said = [record.getMessage() for record in caplog.records]
    assert said == ["recall goes by words for 60 s: the embeddings endpoint: APIConnectionError"]
    assert broken.rest.resting()  # not asked again meanwhile: no second warning
    assert await broken.search(ANN, "tea", 5) and len(caplog.records) == 1


async def test_the_background_pass_embeds_what_the_model_has_not(
    db: Database, model: LocalModel
) -> None:
    memories, vectors = Memories(db.engine), MemoryVectors(db.engine)
    for fact in [REX, *OTHERS[:5]]:
        await memories.add(ANN, fact)  # kept before there were vectors
    recall = Recall(memories, vectors, model)
    assert await recall.catch_up() == 6
    assert await recall.catch_up() == 0
    assert (await recall.search(ANN, "Which animal do I own?", 1))[0].text == REX
    model.name = "another-model"  # a change of model: everything again, under its name
    assert await recall.catch_up() == 6
    assert len(await vectors.of_scope(ANN, "another-model")) == 6


async def test_meaning_never_crosses_scopes(db: Database, model: LocalModel) -> None:
    """Two people and a group, each with a pet: each question finds its own scope's alone."""
    recall = Recall.on(db.engine, model)
    pets = {
        ANN: "Dog: Rex, a beagle adopted in 2019",
        "tg:2": "Bob's cat is called Tom",
        "chat:tg:-100": "The office goldfish is named Bubbles",
    }
    for scope, fact in pets.items():
        memory, _ = await recall.memories.add(scope, fact)
        await recall.kept(memory)
    for scope, fact in pets.items():
        found = await recall.search(scope, "What is the pet called?", 5)
        assert [memory.text for memory in found] == [fact], scope


async def test_a_memory_stands_out_for_a_message_about_it_and_none_for_small_talk(
    db: Database, model: LocalModel
) -> None:
    recall = Recall.on(db.engine, model)
    for fact in [REX, *OTHERS[:10]]:
        memory, _ = await recall.memories.add(ANN, fact)
        await recall.kept(memory)
    assert await recall.standing_out(ANN, "Which breed is my pup?", 3) == []  # 11: too few
    for fact in OTHERS[10:]:
        memory, _ = await recall.memories.add(ANN, fact)
        await recall.kept(memory)
    [found, *_] = await recall.standing_out(ANN, "Which breed is my pup?", 3)
    assert found.text == REX
    for small_talk in ("thanks!", "ok cool", "Tell me a joke"):
        assert await recall.standing_out(ANN, small_talk, 3) == [], small_talk
    assert await Recall.on(db.engine).standing_out(ANN, "Which breed is my pup?", 3) == []
