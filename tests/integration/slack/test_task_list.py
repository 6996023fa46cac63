"""`/tasks` in Slack: the channel's tasks (its threads' included) with a Cancel button each,
and what every press of one is answered."""

from __future__ import annotations

import pytest

from adapters.chat.task_list import EMPTY, MALFORMED
from adapters.slack.task_list import ACTION
from bot.tasks.book import TaskBook
from bot.tasks.model import CONFIG_CREATOR
from bot.vocabulary.envelope import Sender
from tests.fakes.slack import FakeSlack, Posted, SlackChannel, SlackUser
from tests.fakes.slack.model import TEAM_ID
from tests.support.chat_tasks import add_task, task_book
from tests.support.slack import SlackStack, block_text, buttons_by_value

THREAD = "1700000000.000100"


def sender(user: SlackUser) -> Sender:
    """The person as Slack's ingress names them in the envelopes it submits."""
    return Sender(id=f"slack:{user.id}", name=f"slack:{user.id}")


def session(channel: SlackChannel, thread: str | None = None) -> str:
    base = f"slack:{TEAM_ID}:{channel.id}"
    return f"{base}:{thread}" if thread else base


async def listed(fake: FakeSlack, user: SlackUser, channel: SlackChannel) -> Posted:
    """Type /tasks in `channel`; the list the bot posted there."""
    before = len(fake.bot_messages(channel.id))
    status, answer = await fake.command(user, channel, "/tasks")
    assert status == 200 and answer == "", answer
    await fake.wait_for(lambda: len(fake.bot_messages(channel.id)) > before)
    return fake.bot_messages(channel.id)[-1]


async def press(
    fake: FakeSlack, user: SlackUser, message: Posted, value: str, *, check: bool = False
) -> str:
    """`user` presses Cancel carrying `value`; the private note they were answered with."""
    before = len(fake.ephemerals)
    await fake.press(user, message, ACTION, value=value, check=check)
    await fake.wait_for(lambda: len(fake.ephemerals) > before)
    (note,) = fake.ephemerals[before:]
    assert note["user"] == user.id and note["channel"] == message.channel
    return str(note["text"])


async def status_of(book: TaskBook, task_id: int) -> str:
    task = await book.get(task_id)
    assert task is not None
    return task.status


async def test_the_list_shows_the_channel_and_its_threads_and_no_other_channel(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    random = fake.channel("C0RANDOM", "random")
    async with task_book(slack_stack) as book:
        top = await add_task(book, session(general), sender(ann), "post the standup <notes>")
        inside = await add_task(book, session(general, THREAD), sender(ann), "water the plants")
        away = await add_task(book, session(random), sender(ann), "feed the cat")
    shown = await listed(fake, ann, general)
    text = block_text(shown)
    assert "post the standup &lt;notes&gt;" in text and "water the plants" in text
    assert "feed the cat" not in text and shown.thread_ts is None
    assert set(buttons_by_value(shown, ACTION)) == {str(top.id), str(inside.id)}
    assert f"#{top.id} (every 2 hours, next " in text
    assert str(away.id) in buttons_by_value(await listed(fake, ann, random), ACTION)


async def test_a_channel_without_tasks_is_told_how_to_make_one(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    status, answer = await fake.command(ann, general, "/tasks")
    assert status == 200 and answer == EMPTY and "remind me in 20 minutes" in answer
    assert fake.bot_messages(general.id) == []


async def test_the_creator_cancels_and_the_list_shows_it(slack_stack: SlackStack) -> None:
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    async with task_book(slack_stack) as book:
        first = await add_task(book, session(dm), sender(ann), "check the backups")
        second = await add_task(book, session(dm, THREAD), sender(ann), "rotate the logs")
        shown = await listed(fake, ann, dm)
        note = await press(fake, ann, shown, str(first.id), check=True)
        assert note == f"Cancelled task {first.id}."
        assert await status_of(book, first.id) == "cancelled"
        assert await status_of(book, second.id) == "active"
        await fake.wait_for(lambda: shown.edits > 0)
        assert f"#{first.id} cancelled by <@{ann.id}>: check the backups" in block_text(shown)
        assert f"#{second.id} (every 2 hours" in block_text(shown)
        assert set(buttons_by_value(shown, ACTION)) == {str(second.id)}
        again = await press(fake, ann, shown, str(first.id))
        assert again == f"Task {first.id} has already ended."


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ADA"}], indirect=True)
async def test_another_person_is_refused_and_an_admin_may_cancel(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    bob, ada = fake.user("U0BOB", "bob"), fake.user("U0ADA", "ada")
    async with task_book(slack_stack) as book:
        task = await add_task(book, session(general, THREAD), sender(ann), "check the backups")
        shown = await listed(fake, bob, general)
        refused = await press(fake, bob, shown, str(task.id), check=True)
        assert refused == f"Only <@{ann.id}>, who made task {task.id}, or an admin may cancel it."
        assert await status_of(book, task.id) == "active" and shown.edits == 0
        assert await press(fake, ada, shown, str(task.id)) == f"Cancelled task {task.id}."
        ended = await book.get(task.id)
        assert ended is not None and ended.status == "cancelled"
        assert ended.ended_by == "slack:U0ADA"
        await fake.wait_for(lambda: shown.edits > 0)
        assert buttons_by_value(shown, ACTION) == {}
        assert f"cancelled by <@{ada.id}>" in block_text(shown)


async def test_unknown_foreign_and_malformed_presses_are_answered(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    random = fake.channel("C0RANDOM", "random")
    async with task_book(slack_stack) as book:
        mine = await add_task(book, session(general), sender(ann), "check the backups")
        away = await add_task(book, session(random), sender(ann), "feed the cat")
        shown = await listed(fake, ann, general)
        no_such = await press(fake, ann, shown, "999999")
        assert no_such == "There is no task 999999 in this chat."
        assert await press(fake, ann, shown, str(away.id)) == (
            f"There is no task {away.id} in this chat."
        )
        for value in ("", "x1", "٣", "01", "1.5", f"task:cancel:{mine.id}"):
            assert await press(fake, ann, shown, value) == MALFORMED, value
        assert await status_of(book, mine.id) == "active"
        assert await status_of(book, away.id) == "active"
        assert shown.edits == 0


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ANN"}], indirect=True)
async def test_a_configured_task_is_listed_without_a_button_and_cannot_be_cancelled(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    config = Sender(id=CONFIG_CREATOR, name="the configuration")
    async with task_book(slack_stack) as book:
        task = await add_task(book, session(general), config, "daily digest", name="digest")
        shown = await listed(fake, ann, general)
        assert "daily digest (set in the configuration)" in block_text(shown)
        assert buttons_by_value(shown, ACTION) == {}
        forged = await press(fake, ann, shown, str(task.id))
        assert forged == (
            f"Task {task.id} is set in the configuration; only an operator can remove it there."
        )
        assert await status_of(book, task.id) == "active"


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ALLOWED_USERS": "slack:U0ANN"}], indirect=True)
async def test_a_stranger_is_refused_the_list(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    bob = fake.user("U0BOB", "bob")
    async with task_book(slack_stack) as book:
        await add_task(book, session(general), sender(ann), "secret plans")
    status, answer = await fake.command(bob, general, "/tasks")
    assert status == 200 and "slack:U0BOB" in answer and "secret plans" not in answer
    assert fake.bot_messages(general.id) == []


async def test_where_the_list_cannot_be_posted_it_is_answered_privately(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    async with task_book(slack_stack) as book:
        await add_task(book, session(general), sender(ann), "check the backups")
    fake.fail_next("chat.postMessage", "not_in_channel")
    status, answer = await fake.command(ann, general, "/tasks")
    assert status == 200 and "check the backups" in answer and "invite me" in answer
    assert fake.bot_messages(general.id) == []
