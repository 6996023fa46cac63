"""Recall of memories: found by meaning against by words alone, the time to rank a full scope,
and what the model inside Parley costs.

The set is `tests.bench.recall_set`: 206 personal facts, each with two reworded questions that
mostly share no content word with it, shuffled among 2,000 generated everyday notes that answer
none of them, all in one scope of a SQLite database (`Memories(max_per_scope=20_000)`), embedded
by the background pass (`Recall.catch_up`) with the default model (`LocalModel`,
multilingual-e5-small in its own process). Figures:
- recall@5: the share of the 412 questions whose fact is among the first five that
  `Recall.search` (by meaning, words fused at their small weight) returns, and that
  `Memories.search` (the full-text index alone) returns; and the difference. Printed beside
  them: recall@1, the vectors' own ranking (`vector_math.nearest`, no words fused) among all
  the memories and among the facts alone (what the notes take), and some misses (the
  question, its fact, what came first);
- the time to rank: generated notes are added to the scope (and embedded) up to 10,000
  memories, and each question is asked again: the whole `Recall.search` (the question's
  embedding, the full-text search, reading the scope's vectors, their crowding as kept, the
  ranking), then its parts one by one, of which the ranking proper is `vector_math.nearest`
  over the 10,000 vectors read; p50 and p95, and recall@5 among the 10,000; and the time to
  measure the crowding of the 10,000 once (`vector_math.crowding`, again only when a memory
  comes or goes);
- the model's CPU (its process's utime + stime from /proc, in clock ticks) per memory embedded
  in batches of `recall.BATCH` by `catch_up`, and per question embedded alone;
- the model process's resident memory (VmRSS) once loaded, and after all of the embedding.
PARLEY_BENCH_QUICK=1 (the smoke run) uses 40 facts, 200 notes and 1,000 memories.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.config.settings import Settings
from bot.memory import vector_math
from bot.memory.local import LocalModel
from bot.memory.recall import NEAREST, Recall
from bot.store.database import open_database
from bot.store.memory import Memories, Memory
from bot.store.memory_vectors import MemoryVectors
from tests.bench.recall_set import FACTS, Fact, check, distractors, facts, shared
from tests.bench.table import Figure, percentile, report, samples

FACT_COUNT, NOTE_COUNT = samples(len(FACTS), 40), samples(2_000, 200)
RANKED = samples(10_000, 1_000)  # memories in the scope whose ranking is timed
SCOPE = "tg:bench"
TOP = 5  # memories a search returns: recall@5 counts them
SHOWN_MISSES = 12
PARTS = (  # of a search, timed one by one
    "whole Recall.search", "its full-text search", "reading the vectors",
    "the question's embedding", "the scope's crowding, kept", "nearest (the ranking)",
)  # fmt: skip
FIGURES = (
    "recall: by meaning, recall@5",
    "recall: keywords alone, recall@5",
    "recall: by meaning over keywords alone, recall@5",
    "recall: whole search in a full scope, p50",
    "recall: whole search in a full scope, p95",
    "recall: ranking a full scope's vectors, p50",
    "recall: ranking a full scope's vectors, p95",
    "recall: model CPU per memory, batched",
    "recall: model CPU per question",
    "recall: model process RSS",
)


@dataclass(frozen=True)
class Asked:
    """A question, the fact it is about, and what a search returned, best first."""

    question: str
    fact: str
    found: list[str]

    def place(self) -> int | None:
        """Where the fact came (1 is first), or None if it was not returned."""
        return self.found.index(self.fact) + 1 if self.fact in self.found else None


def recall_at(asked: Sequence[Asked], k: int) -> float:
    """The share of questions whose fact is among the first `k` returned."""
    return sum(1 for a in asked if (place := a.place()) is not None and place <= k) / len(asked)


class Child:
    """The model's process as /proc shows it: its CPU seconds and resident memory."""

    def __init__(self, model: LocalModel) -> None:
        assert model._process is not None, "the model's process is started by its first embed"
        self.pid = model._process.pid

    def cpu(self) -> float:
        with Path(f"/proc/{self.pid}/stat").open() as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory_mb(self, field: str = "VmRSS") -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
        raise ValueError(f"no {field} in /proc/{self.pid}/status")


async def add_all(memories: Memories, texts: Sequence[str]) -> None:
    """Each text as a new memory of the scope."""
    for text in texts:
        _, new = await memories.add(SCOPE, text)
        assert new, text


async def embedded(recall: Recall, child: Child) -> tuple[int, float, float]:
    """The background pass over what is not embedded yet: how many, its seconds, the model
    process's CPU seconds."""
    cpu, started = child.cpu(), time.perf_counter()
    done = await recall.catch_up()
    return done, time.perf_counter() - started, child.cpu() - cpu


@dataclass
class Cost:
    """What the model's process spent: memory once loaded, the background passes' memories,
    seconds and CPU seconds, and CPU milliseconds per question embedded alone."""

    child: Child
    loaded_mb: float
    embedded: int
    seconds: float
    cpu: float
    per_question: float = math.nan

    def add(self, embedded: int, seconds: float, cpu: float) -> None:
        """Another background pass."""
        self.embedded, self.seconds, self.cpu = (
            self.embedded + embedded, self.seconds + seconds, self.cpu + cpu
        )  # fmt: skip

    def show(self) -> None:
        per_memory = self.cpu / self.embedded * 1000
        rss_mb, peak_mb = self.child.memory_mb(), self.child.memory_mb("VmHWM")
        print(f"model: {self.embedded:,} memories embedded by the background pass in "
              f"{self.seconds:.1f} s, {per_memory:.1f} ms of its CPU each; "
              f"{self.per_question:.1f} ms per question alone")  # fmt: skip
        print(f"model process: {self.loaded_mb:.0f} MB resident once loaded, {rss_mb:.0f} MB "
              f"after all the embedding (peak {peak_mb:.0f} MB)")  # fmt: skip
        report(
            Figure("recall: model CPU per memory, batched", per_memory, "ms"),
            Figure("recall: model CPU per question", self.per_question, "ms"),
            Figure("recall: model process RSS", rss_mb, "MB", 200),
        )


async def asked_all(
    questions: Sequence[tuple[str, str]], search: Callable[[str], Awaitable[list[Memory]]]
) -> list[Asked]:
    return [
        Asked(question, fact, [memory.text for memory in await search(question)])
        for question, fact in questions
    ]


def misses(asked: Sequence[Asked]) -> list[str]:
    """The questions whose fact was not among the first five: how many, what came first (a
    note, or another fact), and some of them spread over the set."""
    missed = [a for a in asked if (a.place() or TOP + 1) > TOP]
    facts = {a.fact for a in asked}
    by_fact = sum(1 for a in missed if a.found and a.found[0] in facts)
    lines = [
        f"misses by meaning (not in the first {TOP}): {len(missed)}; first came another fact "
        f"in {by_fact}, a note in {len(missed) - by_fact}; some of them:"
    ]
    for a in missed[:: max(1, len(missed) // SHOWN_MISSES)][:SHOWN_MISSES]:
        where = "not returned" if a.place() is None else f"came {a.place()}"
        first = a.found[0] if a.found else "(nothing)"
        lines.append(f"  {a.question!r}\n    fact ({where}): {a.fact!r}\n    first: {first!r}")
    return lines


def accuracy(
    by_meaning: list[Asked], by_words: list[Asked], nearest: dict[str, list[Asked]]
) -> None:
    """Report recall@5 by meaning and by words; print recall@1, the vectors' own ranking
    (among everything, and among the facts alone), and some misses."""
    meaning5, words5 = recall_at(by_meaning, 5), recall_at(by_words, 5)
    print(f"{len(by_meaning)} questions:")
    for name, asked in {"by meaning": by_meaning, "keywords alone": by_words, **nearest}.items():
        print(f"  {name}: recall@1 {recall_at(asked, 1):.3f}, @5 {recall_at(asked, 5):.3f}")
    print(*misses(by_meaning), sep="\n")
    report(
        Figure("recall: by meaning, recall@5", meaning5, "", 0.9, higher_is_better=True),
        Figure("recall: keywords alone, recall@5", words5, ""),
        Figure(
            "recall: by meaning over keywords alone, recall@5", meaning5 - words5, "", 0.3,
            higher_is_better=True,
        ),
    )  # fmt: skip


@contextlib.contextmanager
def timing(into: list[float]) -> Iterator[None]:
    """Add the seconds the block took to `into`."""
    started = time.perf_counter()
    yield
    into.append(time.perf_counter() - started)


def _ms(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 0.5) * 1000:.2f} ms, p95 {percentile(values, 0.95) * 1000:.2f} ms"
    )


async def ranking(
    recall: Recall, model: LocalModel, questions: Sequence[tuple[str, str]]
) -> list[Asked]:
    """The whole search, then its parts, for each question, in a scope of `RANKED` memories;
    what the whole searches found."""
    took: dict[str, list[float]] = {part: [] for part in PARTS}
    stored = await recall.vectors.of_scope(SCOPE, model.name)
    started = time.perf_counter()
    vector_math.crowding(stored)
    crowding_s = time.perf_counter() - started
    found = []
    for question, fact in questions:
        with timing(took["whole Recall.search"]):
            best = await recall.search(SCOPE, question, TOP)
        found.append(Asked(question, fact, [memory.text for memory in best]))
        with timing(took["its full-text search"]):
            await recall.memories.search(SCOPE, question, NEAREST)
        with timing(took["reading the vectors"]):
            stored = await recall.vectors.of_scope(SCOPE, model.name)
        with timing(took["the question's embedding"]):
            [vector] = await model.embed([question], query=True)
        with timing(took["the scope's crowding, kept"]):
            crowds = await recall.crowds.of(SCOPE, model.name, stored)
        with timing(took["nearest (the ranking)"]):
            vector_math.nearest(stored, vector, NEAREST, crowds)
    assert len(stored) == RANKED, len(stored)
    print(f"{len(questions)} searches among {len(stored):,} embedded memories (their crowding "
          f"measured in {crowding_s:.2f} s, once until a memory comes or goes):")  # fmt: skip
    for part, seconds in took.items():
        print(f"  {part + ':':<27} {_ms(seconds)}")
    whole, ranked = took["whole Recall.search"], took["nearest (the ranking)"]
    report(
        Figure("recall: whole search in a full scope, p50", percentile(whole, 0.5) * 1000, "ms"),
        Figure("recall: whole search in a full scope, p95", percentile(whole, 0.95) * 1000, "ms"),
        Figure("recall: ranking a full scope's vectors, p50", percentile(ranked, 0.5) * 1000, "ms"),
        Figure(
            "recall: ranking a full scope's vectors, p95", percentile(ranked, 0.95) * 1000, "ms",
            20,
        ),
    )  # fmt: skip
    return found


async def alone(
    recall: Recall, model: LocalModel, child: Child, questions: Sequence[tuple[str, str]]
) -> tuple[float, dict[str, list[Asked]]]:
    """Each question embedded alone: the model process's CPU milliseconds per question, and
    the memories nearest it by their vectors alone (`vector_math.nearest`, no words fused),
    among all of the scope's and among the facts' only (how much the notes take), by cosine
    alone and with the crowding taken into account."""
    stored = await recall.vectors.of_scope(SCOPE, model.name)
    texts = {memory.id: memory.text for memory in await recall.memories.all(SCOPE)}
    facts = {fact for _, fact in questions}
    of_facts = [(i, vector) for i, vector in stored if texts[i] in facts]
    vectors, cpu = [], child.cpu()
    for question, _ in questions:
        [vector] = await model.embed([question], query=True)
        vectors.append(vector)
    per_question = (child.cpu() - cpu) / len(questions) * 1000
    nearest: dict[str, list[Asked]] = {}
    for name, among in (("nearest, no words fused", stored), ("among the facts only", of_facts)):
        crowds = vector_math.crowding(among)
        for how, crowding in ((", by cosine alone", None), (", crowding counted", crowds)):
            nearest[name + how] = [
                Asked(question, fact, [
                    texts[i] for i in vector_math.nearest(among, vector, TOP, crowding)
                ])
                for (question, fact), vector in zip(questions, vectors, strict=True)
            ]  # fmt: skip
    return per_question, nearest


async def found(recall: Recall, model: LocalModel, chosen: list[Fact], notes: list[str]) -> Cost:
    """The facts shuffled among the notes in one scope, embedded; the questions asked by
    meaning and by words alone, then embedded alone."""
    questions = [(q, fact) for fact, *asked in chosen for q in asked]
    texts = [fact for fact, _, _ in chosen] + notes
    random.Random(7).shuffle(texts)
    started = time.perf_counter()
    await add_all(recall.memories, texts)
    took = time.perf_counter() - started
    print(f"{len(chosen)} facts and {len(notes):,} notes added to one scope in {took:.1f} s")
    unshared = sum(1 for q, fact in questions if not shared(fact, q)) / len(questions)
    print(f"questions sharing no content word with their fact: {unshared:.0%}")
    await model.embed(["warm up"], query=True)  # the process starts, its model loads
    child = Child(model)
    cost = Cost(child, child.memory_mb(), *await embedded(recall, child))
    by_meaning = await asked_all(questions, lambda q: recall.search(SCOPE, q, TOP))
    by_words = await asked_all(questions, lambda q: recall.memories.search(SCOPE, q, TOP))
    cost.per_question, nearest = await alone(recall, model, child, questions)
    accuracy(by_meaning, by_words, nearest)
    return cost


async def measure(recall: Recall, model: LocalModel, chosen: list[Fact]) -> None:
    notes = distractors(RANKED - len(chosen))
    check(notes)
    cost = await found(recall, model, chosen, notes[:NOTE_COUNT])
    await add_all(recall.memories, notes[NOTE_COUNT:])
    cost.add(*await embedded(recall, cost.child))
    questions = [(q, fact) for fact, *asked in chosen for q in asked]
    at_scale = await ranking(recall, model, questions)
    print(f"  by meaning among them: recall@1 {recall_at(at_scale, 1):.3f}, "
          f"@5 {recall_at(at_scale, 5):.3f}")  # fmt: skip
    cost.show()


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="parley-recall-") as tmp:
        url = f"sqlite+aiosqlite:///{tmp}/parley.db"
        database = await open_database(Settings(_env_file=None, database_url=url))
        model = LocalModel(timeout=60)
        recall = Recall(
            Memories(database.engine, max_per_scope=20_000), MemoryVectors(database.engine), model
        )
        try:
            await measure(recall, model, facts(FACT_COUNT))
        finally:
            await model.aclose()
            await database.aclose()


if __name__ == "__main__":
    asyncio.run(main())
