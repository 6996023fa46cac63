"""`/metrics` on `parley web` shows the deployment's backlog and its platform calls, end to
end: Telegram (long polling, the fake Bot API) and Slack (HTTP events, the fake Web API)
deliver messages to the web process while no worker runs, and `parley_queue_depth` counts
them; a `parley worker` process then answers them through the platforms' rate limits, the
backlog drains to 0, and the worker's platform calls, the 429s it met and the time it
waited reach the web process's `/metrics`."""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.fakes.llm import RecordedRequest, Reply
from tests.fakes.slack import FakeSlack
from tests.fakes.tg import FakeTelegram, TgUser
from tests.support.stack import Stack
from tests.support.waiting import until

ANN = TgUser(id=1001, first_name="Ann", username="ann")
BOB = TgUser(id=1002, first_name="Bob", username="bob")
CALLS = "parley_platform_calls_total"
SENT = {"platform": "telegram", "method": "sendMessage"}
POSTED = {"platform": "slack", "method": "chat.postMessage"}


def value(text: str, name: str, **labels: str) -> float:
    """The sum of `name`'s samples that carry `labels` (0 if none)."""
    return sum(
        float(sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    )


async def metrics_until(
    client: httpx.AsyncClient, ready: Callable[[str], bool], what: Callable[[str], object]
) -> str:
    """`/metrics` once `ready` holds for it; if it never does, the failure says `what` of
    the last one read."""
    shown = [""]

    async def holds() -> bool:
        answer = await client.get("/metrics")
        assert answer.status_code == 200, answer.text
        shown[0] = answer.text
        return ready(shown[0])

    await until(holds, lambda: f"/metrics showing it: {what(shown[0])}", every=0.2)
    return shown[0]


def missing(shown: str, chats: int) -> list[str]:
    """What `shown` lacks once every reply has landed and the worker's snapshot that counted
    them is published (within 5 s)."""
    wanted = {
        "backlog": value(shown, "parley_queue_depth") == 0
        and value(shown, "parley_sessions_waiting") == 0,
        "telegram sent": value(shown, CALLS, **SENT, outcome="ok") >= chats,
        "telegram 429 call": value(shown, CALLS, **SENT, outcome="rate_limited") >= 1,
        "slack posted": value(shown, CALLS, **POSTED, outcome="ok") >= 1,
        "slack 429 call": value(shown, CALLS, **POSTED, outcome="rate_limited") >= 1,
    }
    for platform in ("telegram", "slack"):
        limited = value(shown, "parley_platform_rate_limited_total", platform=platform)
        wanted[f"{platform} 429s"] = limited >= 1
        # The refused reply waited out the platform's retry_after before it was made again.
        waited = value(shown, "parley_rate_limit_wait_seconds_sum", platform=platform)
        wanted[f"{platform} waited {waited}"] = waited >= 0.9
    return [what for what, ok in wanted.items() if not ok]


async def test_the_backlog_drains_and_platform_calls_reach_metrics(
    platforms: Stack, fake_telegram: FakeTelegram, fake_slack: FakeSlack
) -> None:
    tg, slack = fake_telegram, fake_slack

    def answer(request: RecordedRequest) -> Reply:
        return Reply(text="Noted.")

    platforms.fake.responder = answer
    chats = [tg.private_chat(ANN), tg.private_chat(BOB)]
    for chat, person in zip(chats, (ANN, BOB), strict=True):
        tg.send(chat, person, "first")
        tg.send(chat, person, "second")
    ann = slack.user("U0ANN", "ann")
    dm = slack.dm(ann)
    await slack.say(ann, dm, "hello")
    async with platforms.client() as client:
        queued = await metrics_until(
            client,
            lambda shown: value(shown, "parley_queue_depth") >= 5,
            lambda shown: f"a queue depth of 5, not {value(shown, 'parley_queue_depth')}",
        )
        assert value(queued, "parley_queue_depth") == 5  # no worker runs: all five wait
        assert value(queued, "parley_sessions_waiting") == 3
        assert value(queued, "parley_sessions_running") == 0

        # Each platform refuses the first reply with a 429 and a retry_after of 1 s.
        tg.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
        slack.fail_next("chat.postMessage", status=429, retry_after=1)
        await platforms.start_worker_process()
        await tg.wait_for(lambda: all(tg.messages(chat) for chat in chats))
        await slack.wait_for(lambda: bool(slack.bot_messages(dm.id)))

        shown = await metrics_until(
            client,
            lambda shown: not missing(shown, len(chats)),
            lambda shown: f"nothing missing, not {missing(shown, len(chats))}",
        )
    assert missing(shown, len(chats)) == []
    methods = re.findall(r'method="([^"]*)"', shown)
    assert methods and all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_.]*", m) for m in methods)
    assert not re.search(r'="[^"]*(1001|1002|D0ANN)[^"]*"', shown)  # never a chat in a label
