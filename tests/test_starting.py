"""A process collects no garbage while it starts, and has its collector back afterwards."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from worker.cli import _starting


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
