"""The lanes Telegram's updates are handled in: what getUpdates may confirm, what it hands
over again, an album's parts together, the bound on updates held, failures kept for the
webhook's answer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from aiogram.types import Update

from adapters.telegram import lanes
from adapters.telegram.lanes import Lanes


def update(update_id: int, chat: int, album: str | None = None) -> Update:
    message: dict[str, Any] = {
        "message_id": update_id,
        "date": 0,
        "chat": {"id": chat, "type": "private"},
        "text": "hi",
    }
    if album is not None:
        message["media_group_id"] = album
    return Update.model_validate({"update_id": update_id, "message": message})


class Recorder:
    """A handler that records what it was given and waits, per chat, until let go."""

    def __init__(self) -> None:
        self.handled: list[list[int]] = []
        self.gates: dict[int, asyncio.Event] = {}

    async def __call__(self, updates: Sequence[Update]) -> None:
        assert updates[0].message is not None
        gate = self.gates.get(updates[0].message.chat.id)
        if gate is not None:
            await gate.wait()
        self.handled.append([u.update_id for u in updates])


async def test_offset_is_the_first_update_not_yet_handled() -> None:
    recorder = Recorder()
    recorder.gates[1] = asyncio.Event()
    held = Lanes(recorder)
    assert held.offset is None and not held.busy
    held.take([update(10, 1), update(11, 2), update(12, 1)])
    await held.put(update(13, 2))  # chat 2 goes on while chat 1 waits
    assert recorder.handled == [[11], [13]]
    assert held.offset == 10 and held.busy
    held.take([update(10, 1), update(11, 2), update(12, 1), update(13, 2)])  # handed over again
    recorder.gates[1].set()
    await held.settle(5)
    while held.busy:
        await held.settle(5)
    assert recorder.handled == [[11], [13], [10], [12]]  # chat 1 in its order, each once
    assert held.offset == 14


async def test_an_album_s_parts_are_handed_over_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lanes, "ALBUM_WAIT", 0.05)
    recorder = Recorder()
    held = Lanes(recorder)
    parts = [held.put(update(20 + i, 1, album="a")) for i in range(3)]
    after = held.put(update(30, 1))
    await asyncio.gather(*parts, after)
    assert recorder.handled == [[20, 21, 22], [30]]


async def test_an_album_of_more_parts_than_telegram_allows_is_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lanes, "ALBUM_WAIT", 0.05)
    recorder = Recorder()
    held = Lanes(recorder)
    await asyncio.gather(*(held.put(update(100 + i, 1, album="b")) for i in range(12)))
    assert [len(parts) for parts in recorder.handled] == [10, 2]


async def test_no_more_than_pending_updates_are_held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lanes, "PENDING", 2)
    recorder = Recorder()
    recorder.gates[1] = asyncio.Event()
    held = Lanes(recorder)
    held.take([update(1, 1), update(2, 1), update(3, 1)])
    assert held.offset == 1
    recorder.gates[1].set()
    while held.busy:
        await held.settle(5)
    assert held.offset == 3  # update 3 was not taken: getUpdates hands it over again
    held.take([update(3, 1)])
    while held.busy:
        await held.settle(5)
    assert recorder.handled == [[1], [2], [3]]


async def test_a_failure_is_set_on_the_updates_and_the_lane_goes_on() -> None:
    handled: list[int] = []

    async def handle(updates: Sequence[Update]) -> None:
        if updates[0].update_id == 1:
            raise ConnectionError("Redis is down")
        handled.append(updates[0].update_id)

    held = Lanes(handle)
    failed, next_one = held.put(update(1, 1)), held.put(update(2, 1))
    with pytest.raises(ConnectionError):
        await failed
    await next_one
    assert handled == [2] and held.offset == 3


async def test_finish_returns_once_every_update_taken_was_handled() -> None:
    """What a stopping `parley web` waits on before it confirms the offset."""
    recorder = Recorder()
    recorder.gates[1] = asyncio.Event()
    held = Lanes(recorder)
    await held.finish()  # nothing taken: at once
    held.take([update(20, 1), update(21, 2), update(22, 1)])
    finishing = asyncio.create_task(held.finish())
    while recorder.handled != [[21]]:  # chat 2 goes on
        await held.settle(5)
    assert not finishing.done() and held.unfinished == 2  # chat 1's two wait
    recorder.gates[1].set()
    await asyncio.wait_for(finishing, 5)
    assert held.unfinished == 0 and held.offset == 23
    assert sorted(map(tuple, recorder.handled)) == [(20,), (21,), (22,)]
