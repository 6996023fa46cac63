"""A task's daily token cap and quiet check-ins end to end, with a `parley scheduler` process,
a worker, the web process and the fake model, over HTTP.

A task whose first run spends more than the cap does not reach the model again that day; its
chat is told so once, and `/api/tasks` shows what it spent. A quiet check-in whose model
answers the marker posts nothing, and one with news posts it whole; both are recorded, and
both ran on PARLEY_CHECKIN_MODEL.
"""

from __future__ import annotations

import json
import zoneinfo
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import pytest
from redis.asyncio import Redis

from adapters.platforms.targets import target_of
from bot.redis import keys
from bot.tasks.book import NewTask
from bot.tasks.model import NOTHING_TO_REPORT
from bot.vocabulary.envelope import Sender
from bot.vocabulary.schedule import parse_when
from tests.fakes.llm import RecordedRequest, Reply
from tests.support.chat_tasks import task_book
from tests.support.schedulers import Schedulers
from tests.support.stack import Stack, idle
from tests.support.tasks import RUNS, database_of, is_run, rows
from tests.support.waiting import until

CAPPED = {"PARLEY_TASK_TOKENS_PER_DAY": "50", "PARLEY_TASK_MIN_INTERVAL": "1"}
QUIET = {"PARLEY_TASK_MIN_INTERVAL": "1", "PARLEY_CHECKIN_MODEL": "claude-checkin"}
OPERATOR = Sender(id="http:local", name="operator", is_admin=True)


@pytest.fixture
async def schedulers(stack: Stack) -> AsyncIterator[Schedulers]:
    """Schedulers for the HTTP stack, one of them leading, and a worker."""
    running = Schedulers(stack.redis_url, stack.env, stack.tmp)
    try:
        await running.start()
        await stack.start_worker()
        await running.wait_for_leader()
        yield running
    finally:
        await running.stop()


async def shown(stack: Stack, session: str) -> str:
    """All the text the session's event stream carried, in order."""
    redis = Redis.from_url(stack.redis_url)
    try:
        raw = await redis.xrange(keys.events(f"http:{session}"))
    finally:
        await redis.aclose()
    events = [json.loads(fields[b"event"]) for _, fields in raw]
    return "".join(e["text"] for e in events if e["type"] == "text_delta")


async def runs_of(stack: Stack, task_id: int, at_least: int) -> None:
    """Wait until the scheduler sent `at_least` runs of the task."""
    async with task_book(stack) as book:

        async def sent() -> bool:
            task = await book.get(task_id)
            return task is not None and task.runs >= at_least

        await until(sent, f"{at_least} runs of task {task_id} sent")


@pytest.mark.parametrize("stack", [CAPPED], indirect=True)
async def test_a_task_at_its_daily_cap_does_not_run_and_its_chat_is_told_once(
    stack: Stack, schedulers: Schedulers
) -> None:
    stack.fake.responder = lambda _: Reply(text="Rang the bell.")
    async with stack.client() as client:
        session = await stack.session(client)
        made = await client.post(
            "/api/tasks",
            json={"session": f"http:{session}", "prompt": "Ring the bell", "when": "every 2 s"},
        )
        assert made.status_code == 201, made.text
        task_id = made.json()["id"]
        assert (made.json()["tokens_today"], made.json()["tokens_per_day"]) == (0, 50)
        await runs_of(stack, task_id, 4)  # one that ran, one told of, two more dropped
        await idle(stack.redis_url)
        listed = (await client.get("/api/tasks")).json()["items"]
        detail = (await client.get(f"/api/tasks/{task_id}")).json()
    assert len([r for r in stack.fake.requests if is_run(r)]) == 1
    said = await shown(stack, session)
    told = (
        f"The task #{task_id} (Ring the bell) reached its daily cap of 50 tokens; "
        "it runs again tomorrow."
    )
    assert said.count(told) == 1, said
    assert said.count("Rang the bell.") == 1
    (item,) = listed
    assert item["tokens_per_day"] == 50 and item["tokens_today"] > 50
    assert detail["tokens_today"] == item["tokens_today"]
    (run,) = await rows(database_of(stack.env), RUNS, session_key=f"http:{session}")
    assert run.input_tokens + run.output_tokens <= item["tokens_today"]


def checking_the_build(answers: list[str]) -> Callable[[RecordedRequest], Reply]:
    """A model whose check-in runs answer `answers` in turn, then the marker."""
    given = iter(answers)

    def respond(request: RecordedRequest) -> Reply:
        return Reply(text=next(given, NOTHING_TO_REPORT) if is_run(request) else "Hi.")

    return respond


@pytest.mark.parametrize("stack", [QUIET], indirect=True)
async def test_a_quiet_check_in_posts_only_when_it_has_something_to_say(
    stack: Stack, schedulers: Schedulers
) -> None:
    stack.fake.responder = checking_the_build([NOTHING_TO_REPORT, "The build failed at step 3."])
    async with stack.client() as client:
        session = await stack.session(client)
    now = datetime.now(UTC)
    when = "every 2 seconds"
    new = NewTask(
        target_of(f"http:{session}"), OPERATOR, "Look at the build; say only if it failed",
        when, parse_when(when, zoneinfo.ZoneInfo("UTC"), now), quiet=True,
    )  # fmt: skip
    async with task_book(stack) as book:
        task = await book.add(new, max_active=20, now=now)
        await runs_of(stack, task.id, 3)
        await book.end(task.id, OPERATOR)
    await idle(stack.redis_url)
    said = await shown(stack, session)
    assert NOTHING_TO_REPORT not in said
    assert said == "The build failed at step 3.", said
    runs = [r for r in stack.fake.requests if is_run(r)]
    assert len(runs) >= 3
    assert {r.body["model"] for r in runs} == {"claude-checkin"}
    assert NOTHING_TO_REPORT in runs[0].last_user_text()  # the run was told how to be quiet
    recorded = await rows(database_of(stack.env), RUNS, session_key=f"http:{session}")
    assert len(recorded) == len(runs)
