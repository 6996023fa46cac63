"""Helpers (`delegate`) in chat replies, through the real SDKs, the fake platforms, the fake
model and a real worker: in a Slack thread each helper is one of the stream's task updates,
running then complete (or an error when it failed), and the text has no status lines for
them; in Telegram, and where Slack edits its reply instead, each helper is a status line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.llm import Fail, RecordedRequest, Reply, ToolCallSpec
from tests.fakes.slack import Posted
from tests.fakes.tg import TgUser
from tests.integration.slack.test_replies import MENTION, answered
from tests.integration.telegram.test_replies import replies
from tests.integration.worker.test_helpers import is_helper, task_of
from tests.support.slack import SlackStack
from tests.support.stack import reply_ids_kept
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
ANN = TgUser(id=1001, first_name="Ann", username="ann")
ANSWER = "One of the two came back."
ASKED = "please split this in two"
LINES = "✅ Helper: do job 0 now\n❌ Helper: do job 1 now"  # as Telegram shows them


def brain(fails: str = "1", delay: float = 0.5) -> Any:
    """The person's turn asks for two helpers in one reply; helper `fails` gets an error
    from the model API, the other answers after a while; then the turn answers."""

    def answer(request: RecordedRequest) -> Reply | Fail:
        if is_helper(request):
            task = task_of(request)
            if task == fails:
                return Fail(400, "invalid_request_error", "the helper's request was refused")
            return Reply(text=f"result {task}", delay=delay)
        if request.tool_results():
            return Reply(text=ANSWER, chunk_size=4, delay=0.05)
        calls = [
            ToolCallSpec("delegate", {"task": f"do job {n} now"}, id=f"toolu_job{n}")
            for n in range(2)
        ]
        return Reply(tool_calls=calls)

    return answer


def helper_tasks(reply: Posted) -> list[tuple[str, str, str]]:
    return [(t["id"], t["title"], t["status"]) for t in reply.tasks.values()]


async def test_slack_streams_each_helper_as_a_task_update(slack_stack: SlackStack) -> None:
    """With the default settings: two helpers, two tasks in the reply's stream, each in
    progress while it ran, then complete with its answer or an error that says why, and the
    reply's text is the answer alone."""
    fake, ann, general = await slack_stack.begin()
    slack_stack.fake.responder = brain()
    asked = await fake.say(ann, general, f"{MENTION} {ASKED}")
    (reply,) = await answered(slack_stack, general, asked.ts, count=1)
    assert reply.shown == ANSWER  # no status line of a helper in the text
    assert reply.streaming == "stopped"
    assert helper_tasks(reply) == [
        ("helper-toolu_job0", "do job 0 now", "complete"),
        ("helper-toolu_job1", "do job 1 now", "error"),
    ]
    assert reply.tasks["helper-toolu_job0"]["output"] == "result 0"
    assert reply.tasks["helper-toolu_job1"]["output"].startswith("The helper (run ")
    history = sorted((t["id"], t["status"]) for t in reply.task_history)
    assert history == [  # each sent once as it started, once as it ended, nothing twice
        ("helper-toolu_job0", "complete"),
        ("helper-toolu_job0", "in_progress"),
        ("helper-toolu_job1", "error"),
        ("helper-toolu_job1", "in_progress"),
    ]
    for ident in reply.tasks:  # each in progress first
        assert next(t["status"] for t in reply.task_history if t["id"] == ident) == "in_progress"
    assert fake.bot_messages(general.id) == []  # the helpers posted nothing of their own
    helpers = [r for r in slack_stack.fake.requests if is_helper(r)]
    assert sorted(task_of(r) for r in helpers) == ["0", "1"]


@pytest.mark.slow(30)
async def test_a_slack_reply_resumed_after_a_crash_shows_each_helper_once(
    slack_stack: SlackStack,
) -> None:
    """The worker streaming a reply is SIGKILLed while a helper still runs: the worker that
    resumes the turn edits the same message, adds no task to it, and shows each helper's
    status line once above the one answer."""
    first = await slack_stack.start_worker_process()
    fake = slack_stack.fake_slack
    ann, general = fake.user("U0ANN", "ann"), fake.channel("C0GENERAL", "general")
    slack_stack.fake.responder = brain(delay=2)
    asked = await fake.say(ann, general, f"{MENTION} {ASKED}")

    def both_shown() -> bool:
        return any(len(m.tasks) == 2 for m in fake.bot_messages(general.id, asked.ts))

    await fake.wait_for(both_shown)
    await reply_ids_kept(slack_stack.redis_url, "slack")
    slack_stack.kill(first)
    await first.wait()
    await slack_stack.start_worker_process()
    (reply,) = await answered(slack_stack, general, asked.ts, count=1)
    assert reply.shown == f"{LINES}\n\n{ANSWER}"
    running = [t["id"] for t in reply.task_history if t["status"] == "in_progress"]
    assert sorted(running) == ["helper-toolu_job0", "helper-toolu_job1"]  # once each
    assert fake.count("chat.update") >= 1


async def test_a_slack_dm_shows_the_helpers_as_status_lines(slack_stack: SlackStack) -> None:
    """A DM outside threads is edited, not streamed: the helpers are status lines there."""
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    slack_stack.fake.responder = brain()
    await fake.say(ann, dm, ASKED)
    (reply,) = await answered(slack_stack, dm, None, count=1)
    assert reply.shown == f"{LINES}\n\n{ANSWER}"
    assert reply.tasks == {} and fake.count("chat.startStream") == 0


async def test_telegram_shows_a_status_line_per_helper(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    chat = tg.private_chat(ANN)
    tg_stack.fake.responder = brain()
    tg.send(chat, ANN, ASKED)
    (shown,) = await replies(tg_stack, chat)
    assert shown == f"{LINES}\n\n{ANSWER}"
    drafts = [d.text for d in tg.drafts if d.chat_id == chat.id]
    running = "⏳ Helper: do job 0 now\n⏳ Helper: do job 1 now\n\n"
    assert any(draft.startswith(running) for draft in drafts)  # while they ran


PLAN = {
    "steps": [
        {"id": 1, "title": "Split the work", "depends_on": []},
        {"id": 2, "title": "Say what came back", "depends_on": [1]},
    ]
}


def planning_brain() -> Any:
    """A `plan_execute` turn whose first step delegates two helpers (one fails)."""
    helping = brain()

    def answer(request: RecordedRequest) -> Reply | Fail:
        asked = request.last_user_text()
        if is_helper(request) or "Carry out step 1" in asked:
            reply: Reply | Fail = helping(request)  # step 1 asks for the helpers
            return reply
        if request.tool_results():
            return Reply(text="Job 0 came back.")
        if "Carry out step 2" in asked:
            return Reply(text="Said so.")
        if "plan how" in asked:
            return Reply(text=json.dumps(PLAN))
        return Reply(text=ANSWER)

    return answer


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ANN"}], indirect=True)
async def test_slack_streams_a_plans_steps_and_its_helpers_as_tasks_of_their_own(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    status, said = await fake.command(ann, general, "/mode", "plan")
    assert status == 200 and said.startswith("From now on I answer by planning first")
    slack_stack.fake.responder = planning_brain()
    asked = await fake.say(ann, general, f"{MENTION} {ASKED}")
    (reply,) = await answered(slack_stack, general, asked.ts, count=1)
    assert reply.shown == ANSWER
    assert helper_tasks(reply) == [
        ("1", "Split the work", "complete"),
        ("2", "Say what came back", "complete"),
        ("helper-toolu_job0", "do job 0 now", "complete"),
        ("helper-toolu_job1", "do job 1 now", "error"),
    ]
    assert reply.tasks["1"]["output"] == "Job 0 came back."
