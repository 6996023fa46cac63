"""`POST /api/agent/run`: one task, run once with its own config, answered as JSON or as
an event stream.

A run is a message in a session of its own (so its events, record and trace are its own),
carrying its `RunConfig` through the mailbox like any other message; it is answered by
whichever worker takes it. Identical requests (the same caller, task and config) made while
one of them runs are one run: the first submits it, the others follow its events, and all
get the same answer. What is checked here, before anything is queued: the body (strictly:
each field its own JSON type, the config's too), the model (this deployment must serve it),
the tools (they must exist), the temperature (Anthropic's models take 0 to 1). A JSON answer
carries the run's metrics as its record has them (`adapters.http.run_metrics`), and the
compliance score of its last answer checked against its output schema.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, field_validator

from adapters.http import place
from adapters.http.common import USER, api_sender
from adapters.http.run_checks import config_problems
from adapters.http.run_metrics import recorded_metrics
from adapters.http.sse import relay, stream_position
from adapters.http.streams import Listener, Slot, StreamHub, StreamInterrupted
from adapters.web.input import read_body, refusal
from adapters.web.services import Services
from bot.redis import keys
from bot.redis.live_runs import LiveRuns
from bot.redis.results import done
from bot.session.progress import queued
from bot.store.outcome import RunStatus, status_of
from bot.vocabulary.envelope import MAX_INITIAL, MAX_TEXT, Envelope, Said, transcript_problem
from bot.vocabulary.events import Trigger
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.runs import run_id

SLACK_S = 120  # beyond the run's own timeout: waiting for a worker to take it, approvals aside
WAIT_S = 15.0  # how long one read of the run's stream waits
# Deletes the dedup entry only while it still names this run.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RunIn(BaseModel):
    """A run asked for; strict, like its config: `"stream": 1` is refused, not read as true."""

    model_config = ConfigDict(extra="forbid", strict=True)

    task: str = Field(min_length=1, max_length=MAX_TEXT)
    config: RunConfig = Field(default_factory=RunConfig)
    stream: bool = False
    # the conversation the run's session starts with, before the task
    initial_messages: list[Said] = Field(default_factory=list, max_length=MAX_INITIAL)

    @field_validator("task")
    @classmethod
    def _not_blank(cls, task: str) -> str:
        if not task.strip():
            raise ValueError("the task is only whitespace")
        return task

    @field_validator("initial_messages")
    @classmethod
    def _taking_turns(cls, said: list[Said]) -> list[Said]:
        if (problem := transcript_problem(said)) is not None:
            raise ValueError(problem)
        return said


@dataclass
class Outcome:
    """What a run's events said, read as they pass; its text is the answer `completed`
    carries."""

    done: dict[str, Any] | None = None
    confirmation: dict[str, Any] | None = None
    plan: list[dict[str, Any]] | None = None
    validations: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)  # sent by its tools, with `url`

    def see(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "confirmation_required":
            self.confirmation = event
        elif kind == "file":
            self.files.append({**event["file"], "caption": event["caption"], "url": event["url"]})
        elif kind == "plan":
            self.plan = event["steps"]
        elif kind == "validation":
            self.validations.append(event)
        elif kind == "completed":
            self.done = event


class AgentRuns:
    def __init__(self, services: Services, hub: StreamHub) -> None:
        self.services = services
        self.hub = hub
        self.live = LiveRuns(services.redis, services.settings.turn_timeout)

    async def run(self, request: web.Request) -> web.StreamResponse:
        body: RunIn = await read_body(request, RunIn)
        config = await self._checked(body.config)
        slot = self.hub.reserve()
        if slot is None:
            raise refusal(
                web.HTTPServiceUnavailable, "too many open event streams; try again later",
                headers={"Retry-After": "5"}, retry=True,
            )  # fmt: skip
        dedup = _dedup_key(request[USER], body, config)
        with slot:
            session, envelope_id, since, joined = await self._start(request, body, config, dedup)
            named = {
                "X-Parley-Run": run_id(session, envelope_id),
                "X-Parley-Session": place.session_id(session),
                "X-Parley-Deduplicated": "true" if joined else "false",
            }
            keep = joined  # a run this request did not start is released by its starter
            try:
                if body.stream:
                    return await relay(request, slot, session, envelope_id, since, named)
                outcome = await self._follow(request, slot, (session, envelope_id, since), config)
            except web.HTTPServiceUnavailable:
                keep = True  # the run goes on: the same request finds it again
                raise
            finally:
                if not keep:  # the run ended, or its client left: the next one is new
                    ours = f"{place.session_id(session)} {envelope_id}"
                    await done(self.services.redis.eval(_RELEASE, 1, dedup, ours))
        metrics = None
        if outcome.done is not None and request.transport is not None:
            metrics = await recorded_metrics(self.services.traces, named["X-Parley-Run"])
        return _answer(session, envelope_id, outcome, joined, metrics)

    async def _checked(self, config: RunConfig) -> RunConfig:
        """The config with its model resolved, or a 422 naming what this deployment lacks."""
        config, problems = await config_problems(self.services, config)
        if problems:
            raise refusal(web.HTTPUnprocessableEntity, "invalid request", problems=problems)
        return config

    async def _start(
        self, request: web.Request, body: RunIn, config: RunConfig, dedup: str
    ) -> tuple[str, str, str, bool]:
        """The run to follow: (session, envelope id, stream position, joined an identical one
        already running)."""
        redis = self.services.redis
        session_id, envelope_id = place.new_session_id(), f"run-{uuid.uuid4().hex}"
        ttl = round((config.timeout or self.services.settings.turn_timeout) + SLACK_S)
        ours = f"{session_id} {envelope_id}"
        if not await redis.set(dedup, ours, nx=True, ex=ttl):
            running = await redis.get(dedup)
            if running is not None:
                session_id, envelope_id = running.decode().split(" ")
                return place.session_key(session_id), envelope_id, "0-0", True
            await redis.set(dedup, ours, ex=ttl)  # it ended in between: run it anew
        record = {"owner": request[USER], "created_at": time.time(), "run": True}
        session = place.session_key(session_id)
        envelope = Envelope(
            id=envelope_id, session=session, text=body.task, sender=api_sender(request),
            platform=place.PLATFORM, run=config, initial=body.initial_messages,
        )  # fmt: skip
        ident = run_id(session, envelope_id)
        try:
            await redis.set(keys.http_session(session_id), json.dumps(record))
            since = await stream_position(redis, session)
            model = config.model or self.services.settings.model
            await self.live.show(ident, session, queued(ident, envelope, Trigger.API, model))
            await self.services.mailbox.submit(envelope)
        except BaseException:  # never queued: no identical request may wait for it
            with contextlib.suppress(Exception):
                await done(redis.eval(_RELEASE, 1, dedup, ours))
                await self.live.drop(ident, session)
            raise
        return session, envelope_id, since, False

    async def _follow(
        self, request: web.Request, slot: Slot, run: tuple[str, str, str], config: RunConfig
    ) -> Outcome:
        """The run's events until it completes, its time is up, or its client leaves. A
        stream cut short is a 503: the same request follows the same run again."""
        session, envelope_id, since = run
        outcome = Outcome()
        limit = (config.timeout or self.services.settings.turn_timeout) + SLACK_S
        started = time.monotonic()

        def gone() -> bool:
            return request.transport is None

        try:
            async with slot.listen(keys.events(session), since, gone) as listener:
                while outcome.done is None and time.monotonic() - started < limit and not gone():
                    await _read(listener, envelope_id, outcome)
        except StreamInterrupted as cut:
            raise refusal(
                web.HTTPServiceUnavailable,
                f"the run's event stream was cut ({cut.reason}); send the same request again "
                "to follow the same run",
                headers={"Retry-After": "5"},
                retry=True,
            ) from None
        return outcome


def _dedup_key(caller: str, body: RunIn, config: RunConfig) -> str:
    """Requests are identical when the same caller asks the same task with the same config,
    after the same transcript."""
    given = [said.model_dump() for said in body.initial_messages]
    same = json.dumps([caller, body.task, config.model_dump(mode="json"), given], sort_keys=True)
    return keys.agent_run(hashlib.sha256(same.encode()).hexdigest())


async def _read(listener: Listener, envelope_id: str, outcome: Outcome) -> None:
    entry = await listener.next(WAIT_S)
    if entry is not None and envelope_id in entry[1][b"envelopes"].decode().split(","):
        outcome.see(json.loads(entry[1][b"event"]))


def _answer(
    session: str, envelope_id: str, outcome: Outcome, joined: bool, metrics: dict[str, Any] | None
) -> web.Response:
    """The run's JSON answer; `metrics` are its record's (`adapters.http.run_metrics`)."""
    ident = run_id(session, envelope_id)
    base: dict[str, Any] = {
        "run_id": ident,
        "session": place.session_id(session),
        "deduplicated": joined,
        "trace": f"/api/traces/{ident}",
    }
    completed = outcome.done
    if completed is None:
        return web.json_response(
            {**base, "status": "running", "error": "the run did not end in time; follow its trace"},
            status=504,
        )
    finish = completed["finish_reason"]
    status = status_of(finish)  # as the run's record says
    answer = {
        **base,
        "status": status,
        "finish_reason": finish,
        "text": completed["text"],
        "output": completed.get("output"),
        "steps": completed["iterations"],
        "usage": completed["usage"],
        "validations": outcome.validations,
        "compliance": outcome.validations[-1].get("compliance") if outcome.validations else None,
        "metrics": metrics,
        "plan": outcome.plan,
        "files": outcome.files,
        "confirmation": outcome.confirmation,
    }
    return web.json_response(answer, status=202 if status == RunStatus.WAITING else 200)


def mount(app: web.Application, services: Services, hub: StreamHub) -> None:
    runs = AgentRuns(services, hub)
    app.router.add_post("/api/agent/run", runs.run)
