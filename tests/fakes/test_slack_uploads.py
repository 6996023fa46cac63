"""The fake Slack's three-step upload, driven by the real slack_sdk client (`files_upload_v2`
and its steps one by one): the file shared in its thread with its comment and bytes, and what
Slack refuses (no name or length, bytes that are not the length announced, a completion
before the upload, an unknown file, a thread that is not one)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack import BOT_TOKEN, FakeSlack


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as slack:
        yield slack


@pytest.fixture
def client(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=BOT_TOKEN, base_url=fake.base_url)


async def refused(call: object) -> str:
    with pytest.raises(SlackApiError) as failure:
        await call  # type: ignore[misc]
    return str(failure.value.response["error"])


async def test_a_file_is_shared_in_its_thread(fake: FakeSlack, client: AsyncWebClient) -> None:
    general = fake.channel("C0GENERAL", "general")
    top = await client.chat_postMessage(channel=general.id, text="top")
    table = b"city,people\nLisbon,545000\n"
    done = await client.files_upload_v2(
        filename="cities.csv", content=table, title="cities.csv", channel=general.id,
        thread_ts=top["ts"], initial_comment="Both cities",
    )  # fmt: skip
    [shared] = fake.uploads.shared
    assert done["file"]["id"] == shared.id
    assert (shared.name, shared.data, shared.channel) == ("cities.csv", table, general.id)
    assert (shared.thread_ts, shared.comment) == (top["ts"], "Both cities")
    assert [
        fake.count(m) for m in ("files.getUploadURLExternal", "files.completeUploadExternal")
    ] == [1, 1]


async def test_what_slack_refuses_is_refused(fake: FakeSlack, client: AsyncWebClient) -> None:
    general = fake.channel("C0GENERAL", "general")
    top = await client.chat_postMessage(channel=general.id, text="top")
    reply = await client.chat_postMessage(channel=general.id, thread_ts=top["ts"], text="r")
    assert await refused(client.api_call("files.getUploadURLExternal", params={"length": 3})) == (
        "invalid_arguments"
    )
    assert (
        await refused(
            client.api_call("files.getUploadURLExternal", params={"filename": "a", "length": 0})
        )
        == "invalid_arguments"
    )
    url = await client.files_getUploadURLExternal(filename="a.txt", length=3)
    file = [{"id": url["file_id"], "title": "a.txt"}]
    assert (
        await refused(client.files_completeUploadExternal(files=file, channel_id=general.id))
        == "file_upload_incomplete"
    )
    async with aiohttp.ClientSession() as session:
        async with session.post(url["upload_url"], data=b"four") as wrong:
            assert wrong.status == 400
        async with session.post(url["upload_url"], data=b"abc") as right:
            assert right.status == 200
    assert (
        await refused(
            client.files_completeUploadExternal(
                files=file, channel_id=general.id, thread_ts=reply["ts"]
            )
        )
        == "thread_not_found"
    )
    assert (
        await refused(client.files_completeUploadExternal(files=file, channel_id="C0NOPE"))
        == "channel_not_found"
    )
    assert (
        await refused(
            client.files_completeUploadExternal(files=[{"id": "F0NOPE"}], channel_id=general.id)
        )
        == "file_not_found"
    )
    assert fake.uploads.shared == []
    await client.files_completeUploadExternal(files=file, channel_id=general.id)
    assert [f.data for f in fake.uploads.shared] == [b"abc"]
