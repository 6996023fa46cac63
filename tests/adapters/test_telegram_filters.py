"""Every filter and handler of Parley's routers runs in the event loop: aiogram runs one that
is not a coroutine function in a pool thread, a hop there and back for each update."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from aiogram import Router
from aiogram.types import CallbackQuery, Chat, User
from aiogram.types import Message as TgMessage

from adapters.telegram import filters, ingress


def _objects(router: Router) -> Iterator[Any]:
    for observer in router.observers.values():
        for handler in observer.handlers:
            yield handler
            yield from handler.filters or ()
    for child in router.sub_routers:
        yield from _objects(child)


def test_no_filter_or_handler_of_the_routers_is_run_in_a_thread() -> None:
    objects = list(_objects(ingress.router()))
    assert len(objects) > 20
    in_threads = [repr(each.callback) for each in objects if not each.awaitable]
    assert in_threads == []


def _message(**fields: Any) -> TgMessage:
    ann = User(id=1, is_bot=False, first_name="Ann")
    when = datetime.now(UTC)
    return TgMessage(
        message_id=1, date=when, chat=Chat(id=1, type="private"), from_user=ann, **fields
    )


PHOTO = [{"file_id": "p", "file_unique_id": "u", "width": 1, "height": 1}]
STICKER = {"file_id": "s", "file_unique_id": "u", "type": "regular", "width": 1, "height": 1,
           "is_animated": False, "is_video": False}  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "files", "text"),
    [
        ({"text": "hi"}, False, True),
        ({"text": ""}, False, False),
        ({"caption": "look", "media_group_id": "g"}, True, True),
        ({"document": {"file_id": "d", "file_unique_id": "u"}}, True, False),
        ({"voice": {"file_id": "v", "file_unique_id": "u", "duration": 1}}, True, False),
        ({"photo": PHOTO}, True, False),
        ({"sticker": STICKER}, False, False),
    ],
)
async def test_the_message_filters_say_what_a_message_carries(
    fields: dict[str, Any], files: bool, text: bool
) -> None:
    message = _message(**fields)
    assert await filters.has_files(message) is files
    assert await filters.has_text(message) is text


async def test_a_press_is_taken_by_its_prefix_only() -> None:
    starts = filters.data_starts("mem:")
    user = User(id=1, is_bot=False, first_name="Ann")
    assert await starts(CallbackQuery(id="1", from_user=user, chat_instance="c", data="mem:3"))
    assert not await starts(CallbackQuery(id="2", from_user=user, chat_instance="c", data="t:3"))
    assert not await starts(CallbackQuery(id="3", from_user=user, chat_instance="c"))
