"""The scheduling tools as the model calls them: through the tool executor, with the
database's task book and people (SQLite and PostgreSQL, a real Redis)."""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from bot.assembly.catalog import standard_tools
from bot.assembly.tool_settings import task_rules
from bot.config.settings import Settings
from bot.store.people import People
from bot.tasks.book import NewTask, TaskBook
from bot.tasks.model import CONFIG_CREATOR, Target
from bot.tasks.tools import TaskRules, task_tools
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.builtin import builtin_tools
from bot.tools.executor import ToolExecutor, ToolOutcome
from bot.vocabulary.envelope import Sender
from bot.vocabulary.preferences import Preferences
from bot.vocabulary.schedule import parse_when
from tests.support.databases import call

ANN = Sender(id="tg:1", name="Ann")
BOB = Sender(id="tg:2", name="Bob")
ADMIN = Sender(id="tg:9", name="Root", is_admin=True)
TOPIC = {"chat_id": -100, "chat_type": "supergroup", "thread_id": 7}
RUN = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [0-9]{4}-[0-9]{2}-[0-9]{2} ([0-9]{2}:[0-9]{2}) ([A-Z]+)"
)


def tools_on(book: TaskBook, people: People, rules: TaskRules) -> ToolExecutor:
    registry = ToolRegistry([*builtin_tools(), *task_tools(book, people, rules)])
    return ToolExecutor(registry, timeout=30, concurrency=4, output_limit=10_000)


@pytest.fixture
def executor(book: TaskBook, people: People) -> ToolExecutor:
    return tools_on(book, people, task_rules(Settings(_env_file=None)))


@pytest.fixture
def ctx() -> ToolContext:
    return ToolContext(
        session_key="tg:-100:7",
        user=ANN,
        platform="telegram",
        chat_kind="supergroup",
        reply_to=TOPIC,
    )


def runs_in(confirmation: str) -> list[tuple[str, str]]:
    return [(match[2], match[3]) for match in RUN.finditer(confirmation)]


async def test_schedule_task_confirms_the_zone_and_three_runs(
    executor: ToolExecutor, ctx: ToolContext, book: TaskBook
) -> None:
    outcome = await call(
        executor, ctx, "schedule_task", prompt="Summarise the open issues", when="0 9 * * 1-5"
    )
    assert not outcome.is_error, outcome.content
    assert outcome.content.startswith("Task 1 runs cron 0 9 * * 1-5, in the time zone UTC.")
    assert runs_in(outcome.content) == [("09:00", "UTC")] * 3
    assert outcome.content.endswith("Prompt: Summarise the open issues")
    (task,) = await book.in_chat("tg:-100")
    assert task.target == Target(
        session="tg:-100:7", platform="telegram", chat_kind="supergroup", reply_to=TOPIC
    )
    assert (task.creator, task.if_missed, task.when) == (ANN, "skip", "0 9 * * 1-5")


async def test_the_zone_set_by_set_timezone_is_used_at_once(
    executor: ToolExecutor, ctx: ToolContext, book: TaskBook, people: People
) -> None:
    """In the same turn, too: the context still holds the zone the turn began with."""
    outcome = await call(executor, ctx, "set_timezone", timezone="Europe/Lisbon")
    assert outcome.content.startswith("Time zone set to Europe/Lisbon; it is ")
    assert await people.timezone(ANN.id) == "Europe/Lisbon"
    outcome = await call(
        executor, ctx, "schedule_task", prompt="Stretch", when="0 9 * * *", if_missed="run_once"
    )
    assert "in the time zone Europe/Lisbon." in outcome.content
    assert {time for time, _ in runs_in(outcome.content)} == {"09:00"}
    assert {zone for _, zone in runs_in(outcome.content)} <= {"WET", "WEST"}
    (task,) = await book.of_person(ANN.id)
    assert (task.schedule.zone, task.if_missed) == ("Europe/Lisbon", "run_once")
    # a turn that begins with the zone in its context reads the same
    later = replace(ctx, preferences=Preferences(timezone="Europe/Lisbon"))
    outcome = await call(executor, later, "schedule_task", prompt="Drink", when="in 2 hours")
    assert "runs once, in the time zone Europe/Lisbon." in outcome.content


async def test_schedule_task_refuses_what_it_cannot_run(
    executor: ToolExecutor, ctx: ToolContext, book: TaskBook
) -> None:
    refusals = {
        "every minute": "That runs every 1 minute; tasks may run at most every 5 minutes.",
        "*/1 * * * *": "That runs every 1 minute; tasks may run at most every 5 minutes.",
        "someday": "Cannot read when='someday'.",
        "in ٣ minutes": "Cannot read the duration '٣ minutes'",
        "2020-01-01T09:00": "2020-01-01 09:00 UTC has already passed",
    }
    for when, message in refusals.items():
        outcome = await call(executor, ctx, "schedule_task", prompt="x", when=when)
        assert outcome.is_error and message in outcome.content, (when, outcome.content)
    outcome = await call(executor, ctx, "schedule_task", prompt="x" * 4001, when="in 1 hour")
    assert outcome.is_error and outcome.content.startswith("Invalid arguments for schedule_task")
    outcome = await call(
        executor, ctx, "schedule_task", prompt="x", when="in 1 hour", if_missed="x"
    )
    assert outcome.is_error and "if_missed" in outcome.content
    outcome = await call(executor, ctx, "schedule_task", prompt=" \n ", when="in 1 hour")
    assert outcome.is_error and "The prompt is empty" in outcome.content
    assert await book.every(active=False) == []


async def test_the_per_person_limit_is_the_tool_s_answer(
    ctx: ToolContext, book: TaskBook, people: People
) -> None:
    small = tools_on(book, people, task_rules(Settings(_env_file=None, tasks_per_person=1)))
    assert not (await call(small, ctx, "schedule_task", prompt="a", when="in 1h")).is_error
    outcome = await call(small, ctx, "schedule_task", prompt="b", when="in 1h")
    assert outcome.is_error and outcome.content.startswith("You have 1 active tasks, the most")


async def test_list_tasks_scopes(executor: ToolExecutor, ctx: ToolContext) -> None:
    assert (await call(executor, ctx, "list_tasks")).content == "No active tasks."
    in_chat = replace(ctx, session_key="tg:-100", reply_to={"chat_id": -100})
    elsewhere = replace(ctx, session_key="tg:1", chat_kind="private", reply_to={"chat_id": 1})
    bob = replace(in_chat, user=BOB)
    for where, prompt in ((ctx, "in the topic"), (in_chat, "in the group"), (elsewhere, "dm")):
        await call(executor, where, "schedule_task", prompt=prompt, when="every 2 hours")
    await call(executor, bob, "schedule_task", prompt="Bob's", when="in 3 hours")

    def listed(outcome: ToolOutcome) -> list[str]:
        return [line.split(": ", 1)[1] for line in outcome.content.splitlines()]

    group = await call(executor, in_chat, "list_tasks")
    assert listed(group) == ["in the topic", "in the group", "Bob's"]
    assert group.content.splitlines()[0].startswith("#1 (every 2 hours, next ")
    assert group.content.splitlines()[2].startswith("#4 (once, next ")
    assert listed(await call(executor, ctx, "list_tasks", scope="chat")) == ["in the topic"]
    mine = await call(executor, in_chat, "list_tasks", scope="mine")
    assert listed(mine) == ["in the topic", "in the group", "dm"]
    bad = await call(executor, ctx, "list_tasks", scope="everyone")
    assert bad.is_error and bad.content.startswith("Invalid arguments for list_tasks: scope")


async def test_cancel_task_rules(executor: ToolExecutor, ctx: ToolContext, book: TaskBook) -> None:
    for n in range(3):
        await call(executor, ctx, "schedule_task", prompt=f"task {n}", when="in 1 hour")
    bob, admin = replace(ctx, user=BOB), replace(ctx, user=ADMIN)
    answers = [
        (bob, 1, True, "Only Ann, who made task 1, or an admin may cancel it."),
        (ctx, 1, False, "Cancelled task 1; it will not run again."),
        (ctx, 1, False, "Task 1 had already ended (cancelled)."),
        (admin, 2, False, "Cancelled task 2; it will not run again."),
        (bob, 999, True, "There is no task 999."),
    ]
    for who, task_id, is_error, answer in answers:
        outcome = await call(executor, who, "cancel_task", task_id=task_id)
        assert (outcome.is_error, outcome.content) == (is_error, answer)
    for bad in (0, -1, "٣", "1; DROP TABLE tasks"):
        outcome = await call(executor, ctx, "cancel_task", task_id=bad)
        assert outcome.is_error and outcome.content.startswith("Invalid arguments for cancel_task")
    assert [t.id for t in await book.every()] == [3]


async def test_a_configured_task_cannot_be_cancelled_by_a_tool(
    executor: ToolExecutor, ctx: ToolContext, book: TaskBook
) -> None:
    new = await _configured(book)
    admin = replace(ctx, user=ADMIN)
    outcome = await call(executor, admin, "cancel_task", task_id=new)
    assert outcome.is_error
    assert outcome.content == f"Task {new} comes from Parley's configuration (PARLEY_TASKS)."


async def _configured(book: TaskBook) -> int:
    now = datetime.now(UTC)
    schedule = parse_when("0 8 * * *", zoneinfo.ZoneInfo("UTC"), now)
    target = Target(session="slack:T1:C1", platform="slack")
    creator = Sender(id=CONFIG_CREATOR)
    (task,) = await book.replace_config(
        [NewTask(target, creator, "digest", "0 8 * * *", schedule, name="digest")], now
    )
    return task.id


@pytest.mark.parametrize(
    "zone", ["Mars/Olympus", "../../etc/passwd", "/etc/localtime", "Europe", "zone.tab", ""]
)
async def test_set_timezone_refuses_unknown_zones(
    executor: ToolExecutor, ctx: ToolContext, people: People, zone: str
) -> None:
    outcome = await call(executor, ctx, "set_timezone", timezone=zone)
    assert outcome.is_error
    assert outcome.content == (
        f"Unknown time zone {zone!r}; use an IANA name such as Europe/Lisbon."
    )
    assert await people.timezone(ANN.id) is None


async def test_without_the_database_s_stores_the_tools_are_not_offered(ctx: ToolContext) -> None:
    """`parley chat` and `parley mcp` have no stores: the model is not offered the tools, and
    a call of one anyway is answered as a call of a tool that does not exist."""
    registry = ToolRegistry(standard_tools(Settings(_env_file=None)))
    console = ToolExecutor(registry, timeout=30, concurrency=4, output_limit=10_000)
    calls: Mapping[str, dict[str, object]] = {
        "schedule_task": {"prompt": "x", "when": "in 1 hour"},
        "list_tasks": {},
        "cancel_task": {"task_id": 1},
        "set_timezone": {"timezone": "Europe/Lisbon"},
    }
    assert not set(calls) & {spec.name for spec in registry.specs}
    for name, arguments in calls.items():
        outcome = await call(console, ctx, name, **arguments)
        assert outcome.is_error, name
        assert outcome.content.startswith(f"Unknown tool {name!r}. Available tools: "), name


@pytest.mark.parametrize("zone", ["Europe", "zone.tab", "posixrules", "right/UTC", "localtime"])
async def test_only_zone_database_names_are_zones(
    executor: ToolExecutor, ctx: ToolContext, zone: str
) -> None:
    """`ZoneInfo` alone opens a directory or a data file beside the zones, and fails with
    the machine's paths in its error."""
    outcome = await call(executor, ctx, "current_time", timezone=zone)
    assert outcome.is_error
    assert outcome.content == (
        f"Unknown time zone {zone!r}; use an IANA name such as America/New_York."
    )
    with pytest.raises(ValidationError, match="unknown IANA time zone"):
        Settings(_env_file=None, timezone=zone)
