"""A process collects no garbage while it starts, and has its collector back afterwards."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest
from arq.connections import RedisSettings, create_pool

from adapters.http.egress import HttpEgress
from adapters.platforms.loading import LoadingEgress
from bot.mailbox.liveness import Liveness
from bot.redis import keys
from bot.session.egress import Egress
from worker.cli import _starting
from worker.loops import say_ready


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    yield
    gc.unfreeze()
    gc.enable()


def test_nothing_is_collected_while_starting_and_what_it_made_is_left_out_of_later_passes() -> None:
    passes: list[str] = []
    gc.callbacks.append(lambda phase, _: passes.append(phase))
    try:
        with _starting():
            made = [[object()] for _ in range(100_000)]  # far past the first threshold
            assert not gc.isenabled()
        assert passes == []
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(made)
    finally:
        gc.callbacks.pop()


def test_a_start_that_fails_gives_the_collector_back() -> None:
    with pytest.raises(RuntimeError), _starting():
        raise RuntimeError("configuration error")
    assert gc.isenabled()


async def test_what_the_platforms_loaded_after_start_is_left_out_of_later_passes(
    redis_url: str,
) -> None:
    """A platform's SDK loads in a thread after start-up (`adapters.platforms.loading`); once the
    worker says it is ready, what the load made is out of the collector's sight too, so the
    full collections of a busy worker do not go over it again and again."""
    made: list[list[object]] = []

    def load() -> Callable[[], Egress]:
        made.extend([object()] for _ in range(50_000))  # an SDK's modules, classes, functions
        return lambda: HttpEgress(pool)

    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        frozen = gc.get_freeze_count()
        platforms = {"late": LoadingEgress("late", load)}
        await say_ready(pool, Liveness(pool, 3.0), platforms)
        assert gc.get_freeze_count() >= frozen + len(made)
        assert await pool.xlen(keys.READY_STREAM) == 1
    finally:
        await pool.aclose()
