"""Helpers: a `delegate` call runs a child run through the mailbox and waits for its answer.

A helper is a session of its own (`bot.vocabulary.helpers`: its key is its parent's and the
tool call's id), given one envelope that carries its `RunConfig` (a step cap, a token
budget, a timeout, the tools it may use) and sent as the parent's person, in the parent's
chat. So it inherits every promise of the mailbox: it is committed once, its answer is
recorded, and a worker killed while it runs hands it to another, which resumes it. Its
events go to its own stream in Redis (`keys.events`, as an HTTP run's do), and its answer is
the last `completed` event there (a run of its that stopped to wait for a person is not the
last): whoever waits reads it from the start.

Why a waiting parent cannot starve its helpers (the deadlock question): a parent's turn
holds one of its worker's slots (PARLEY_WORKER_SESSIONS) while it waits, and if every slot
of every worker were held by a waiting parent, a helper woken through arq would find no
worker to take it. So a helper never needs a slot: the parent's own call runs it, in the
parent's process and inside the parent's slot, taking the helper's lease like any worker
would (`SessionRunner.take_turns`). Another worker with room may take it first (its wake-up
is rung like any session's); then the lease is theirs and the parent only waits, and should
that worker die, the lease lapses and the waiting parent, which looks again every
`LOOK_S`, takes the helper over itself. What a worker runs beyond its slots is thus bounded
by its slots times PARLEY_DELEGATE_CONCURRENCY, and depth by PARLEY_DELEGATE_DEPTH.

A parent resumed after its worker died calls `delegate` again with the same call id (the
tool may run again: it is idempotent, see `bot.assembly.delegate`): its envelope is the
mailbox's duplicate, and the call finds the helper running, or its answer, or runs it.

A helper's call that needs a person's approval is asked in its parent's chat: the parent,
following the helper's stream, finds the request there and posts its prompt in its own
reply, naming the helper (`bot.session.helper_requests`). It goes on waiting meanwhile, its
clock held (the time is the person's), for as long as the request waits and the helper then
runs. A press decides the request as any press does; the decision goes into the helper's
mailbox and resumes the helper, which answers into its own stream, where its parent reads
the answer. The files a helper sends are posted in the parent's reply the same way, and
what became of each (posted, or refused by the platform) is said under the helper's answer,
since the helper itself could know only that it handed them on.

A helper ends with its parent: a `/stop` or the parent's clock sets the parent's cancel,
which cancels the call, which stops the helper (`stop_helper`: marked, so one not yet
started stops at once, and told to every worker) and withdraws the request it waits on. A
parent's worker that shuts down or dies does not stop its helpers: the parent resumes
elsewhere and finds them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from bot.config.settings import Settings
from bot.llm.served import Served
from bot.people.limits import Limits
from bot.redis import keys
from bot.redis.results import text
from bot.session.helper_cleanup import drop_answered_helper
from bot.session.helper_requests import Parent, Waiting, pass_on, withdraw
from bot.session.live import LiveTurn, stop_helper
from bot.session.runner import SessionRunner
from bot.telemetry import logs
from bot.tools.base import ToolContext, ToolError, ToolResult
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.helpers import (
    PLATFORM,
    TOOL,
    depth_of,
    helper_envelope_id,
    helper_session,
    task_line,
)
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.runs import run_id
from bot.vocabulary.usage import Usage

log = logging.getLogger(__name__)
LOOK_S = 1.0  # how often a waiting call checks that someone runs its helper
SLACK_S = 30.0  # beyond the helper's own timeout: its pick-up, a worker that died
MIN_TIME_S = 2.0  # a helper needs at least this much of its parent's time
MARGIN_S = 3.0  # a helper ends this long before its parent's clock, for the parent's answer
# Tools a helper never gets: they need the person, whom a helper cannot ask.
NEEDS_PERSON = frozenset({"ask_user"})


class HelperFailed(ToolError):
    """A helper that ended without its answer: said as the call's error, its tokens kept."""

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass
class Answer:
    """What a helper's stream said of its run: its end, and the approvals it asked for."""

    completed: dict[str, Any] | None = None  # its last run's end: its answer, or why none
    # What its runs posted for the person (its approval requests, its files), not yet shown
    # in the parent's reply.
    news: list[ev.ConfirmationRequired | ev.FileSent] = field(default_factory=list)
    files: dict[str, str | None] = field(default_factory=dict)  # its files: what became of them
    lost: bool = False  # it ended long ago, and its stream (kept 15 minutes) lapsed since
    usage: Usage = field(default_factory=Usage)  # of all its runs (it may stop to ask)

    def ended(self, event: dict[str, Any]) -> None:
        """A run of the helper's ended: its tokens count; it is the last unless it stopped
        to wait for a person."""
        raw = event.get("usage") or {}
        fields = Usage.__dataclass_fields__
        self.usage += Usage(**{k: int(v) for k, v in raw.items() if k in fields})
        if event.get("finish_reason") != ev.FinishReason.AWAITING_CONFIRMATION:
            self.completed = event


@dataclass
class _Share:
    """What one parent turn's helpers share in this process: how many run at once, and the
    tokens the running ones may still spend (so that together they stay within the
    parent's budget)."""

    gate: asyncio.Semaphore
    reserved: int = 0
    calls: int = 0  # delegate calls of the turn in progress here, waiting ones included


@dataclass
class HelperRuns:
    """Starts and follows the helpers of the turns a worker runs (see the module doc)."""

    settings: Settings
    runner: SessionRunner
    limits: Limits | None = None
    _shares: dict[str, _Share] = field(default_factory=dict)  # by parent session

    async def delegate(
        self, ctx: ToolContext, task: str, tools: Collection[str] | None, model: str | None
    ) -> ToolResult:
        """Run `task` as a helper of the turn `ctx` belongs to; its answer, or HelperFailed."""
        parent = ctx.session_key
        live = self.runner.live.get(parent)
        if live is None:
            raise ToolError("A helper can only be started from a running turn.")
        if depth_of(parent) >= self.settings.delegate_depth:
            raise ToolError(
                "Not run: a helper cannot start helpers of its own (PARLEY_DELEGATE_DEPTH is "
                f"{self.settings.delegate_depth}). Do the work yourself."
            )
        config = self._config(live, tools, model, depth_of(parent) + 1)
        session = helper_session(parent, ctx.call_id)
        share = self._shares.get(parent)
        if share is None:
            gate = asyncio.Semaphore(self.settings.delegate_concurrency)
            share = self._shares[parent] = _Share(gate)
        share.calls += 1
        try:
            async with share.gate:
                budget = await self._budget(live, ctx, share.reserved)
                share.reserved += budget
                try:
                    config = config.model_copy(update={"token_budget": budget})
                    answer = await self._run(Parent(ctx, live), session, task, config)
                finally:
                    share.reserved -= budget
        finally:
            share.calls -= 1
            if not share.calls:
                self._shares.pop(parent, None)
        return _result(answer, run_id(session, helper_envelope_id(ctx.call_id)))

    def _config(
        self, live: LiveTurn, tools: Collection[str] | None, model: str | None, depth: int
    ) -> RunConfig:
        """The helper's run: its step cap and timeout within what its parent has left, its
        tools a subset of its parent's (never more, never those that need the person,
        `delegate` only while it may nest deeper), its model one this deployment serves."""
        parent = live.config
        every = self.runner.deps.agent.deps.tools.names
        offered = set(parent.tools) if parent.tools is not None else set(every)
        offered -= live.request.chat_rules.tools_off | NEEDS_PERSON
        if depth >= self.settings.delegate_depth:
            offered.discard(TOOL)
        if tools is not None:
            refused = sorted(set(tools) - offered)
            if refused:
                raise ToolError(
                    f"Not run: a helper may only use tools this turn may use; not {refused}. "
                    f"It may use: {sorted(offered)}."
                )
            offered = set(tools)
        if model is not None and Served.of(self.settings).name(model) is None:
            raise ToolError(f"Not run: this deployment does not serve the model {model!r}.")
        left = live.time_left - MARGIN_S
        if left < MIN_TIME_S:
            raise ToolError("Not run: this turn has no time left for a helper.")
        steps = self.settings.delegate_steps
        return RunConfig(
            model=model or live.request.model,
            max_steps=min(steps, parent.max_steps) if parent.max_steps else steps,
            tools=tuple(sorted(offered)),
            timeout=round(min(self.settings.delegate_timeout, left), 3),
            reasoning="off",
        )

    async def _budget(self, live: LiveTurn, ctx: ToolContext, reserved: int) -> int:
        """PARLEY_DELEGATE_TOKENS, or what the parent has left if less, less what its
        helpers running now may spend (`reserved`): of its own budget (an API run's, a
        helper's), and of the person's day (PARLEY_USER_TOKENS_PER_DAY)."""
        budget = self.settings.delegate_tokens
        used = live.usage.prompt_tokens + live.usage.output_tokens
        if live.config.token_budget is not None:
            budget = min(budget, live.config.token_budget - used - reserved)
        day = self.settings.user_tokens_per_day
        if self.limits is not None and day is not None and not self.limits.exempt(ctx.user.id):
            left = day - await self.limits.tokens_used(ctx.user.id) - used  # turn not yet charged
            budget = min(budget, left - reserved)
        if budget < 1:
            raise ToolError("Not run: no tokens are left in this turn's budget for a helper.")
        return budget

    async def _run(self, parent: Parent, session: str, task: str, config: RunConfig) -> Answer:
        """Send the helper its envelope (again, after a resume: a duplicate then) and wait
        for its answer; a cancelled parent stops it."""
        ctx = parent.ctx
        envelope = Envelope(
            id=helper_envelope_id(ctx.call_id), session=session, text=task, sender=ctx.user,
            platform=PLATFORM, chat_kind=ctx.chat_kind, run=config, parent_run=logs.RUN.get(),
        )  # fmt: skip
        mailbox = self.runner.deps.mailbox
        try:
            await mailbox.submit(envelope)
            limit = (config.timeout or self.settings.delegate_timeout) + SLACK_S
            answer = await self._follow(parent, session, task_line(task), limit)
        except asyncio.CancelledError:
            if parent.live.cancel.is_set():  # a /stop or the parent's clock, not a shutdown
                await self._stop(session)
            raise
        if answer.completed is None and not answer.lost:  # out of time
            await self._stop(session)
        if answer.completed is not None:  # read: its hot state may go (its stream stays)
            await drop_answered_helper(mailbox, self.runner.states, session, envelope.id)
        return answer

    async def _stop(self, session: str) -> None:
        """Stop the helper, and withdraw the request it waits on, if it waits on one."""
        await stop_helper(self.runner.deps.mailbox.redis, session)
        deps = self.runner.deps
        await withdraw(deps.confirmations, deps.history, deps.egress, session)

    async def _follow(self, parent: Parent, session: str, task: str, limit: float) -> Answer:
        """The helper's answer from its stream, read from the start; meanwhile, whenever
        nobody holds its lease and its envelope waits, it is run here, and what it asks a
        person is asked in the parent's chat (see the module doc)."""
        mailbox = self.runner.deps.mailbox
        answer, since = Answer(), "0-0"
        deadline = time.monotonic() + limit
        with Waiting(self.runner.deps.confirmations, parent.live.deadline) as waiting:
            while time.monotonic() < deadline:
                since = await self._read(session, since, answer, block=False)
                until = await pass_on(parent, answer.news, waiting, task, answer.files)
                if until is not None:
                    deadline = max(deadline, time.monotonic() + until - time.time() + limit)
                if answer.completed is not None:
                    return answer
                await waiting.check()
                queued, busy = await mailbox.pending(session), await mailbox.busy(session)
                if queued and not busy:
                    # Its own task, so the helper's log context stays its own; cancelled with us.
                    await asyncio.ensure_future(self.runner.take_turns(session))
                    continue
                if not queued and not busy and waiting.person is None:
                    since = await self._read(session, since, answer, block=False)  # committed
                    if answer.news:
                        continue  # it posted (it stopped at a request) just after the read above
                    answer.lost = answer.completed is None
                    return answer  # found now (it ended just after the read above), or lapsed
                since = await self._read(session, since, answer, block=True)
        return answer

    async def _read(self, session: str, since: str, answer: Answer, *, block: bool) -> str:
        """Events of the helper's stream after `since` into `answer`; the new position. The
        stream is the helper's alone: its task's run, and the runs its decisions resume."""
        redis = self.runner.deps.mailbox.redis
        wait = int(LOOK_S * 1000) if block else None
        found = await redis.xread({keys.events(session): since}, count=500, block=wait)
        for _, entries in found or []:
            for entry_id, fields in entries:
                since = text(entry_id)
                event = json.loads({text(k): text(v) for k, v in fields.items()}["event"])
                if event.get("type") == "completed":
                    answer.ended(event)
                elif event.get("type") == "confirmation_required":
                    answer.news.append(ev.ConfirmationRequired.model_validate(event))
                elif event.get("type") == "file":
                    answer.news.append(ev.FileSent.model_validate(event))
        return since


def _result(answer: Answer, helper_run: str) -> ToolResult:
    """The helper's answer as its parent's model reads it, or its failure, said plainly."""
    done = answer.completed
    usage = answer.usage
    if answer.lost:
        raise HelperFailed(
            f"The helper (run {helper_run}) ended long ago and its answer is no longer kept; "
            "read its run's record, or start a new helper."
        )
    if done is None:
        raise HelperFailed(f"The helper (run {helper_run}) did not finish in time and was stopped.")
    finish = str(done.get("finish_reason"))
    said = str(done.get("text") or "").strip()
    if finish not in ("end_turn", "max_tokens"):
        raise HelperFailed(
            f"The helper (run {helper_run}) ended without an answer ({finish}) after "
            f"{done.get('iterations', 0)} steps. What it said last: {said or '(nothing)'}"
            + _files(answer),
            usage,
        )
    text = said or "(the helper gave no text)"
    return ToolResult(text=f"[helper run {helper_run}]\n{text}{_files(answer)}", usage=usage)


def _files(answer: Answer) -> str:
    """What became of the files the helper sent, as this turn's reply said when it posted
    them (the helper itself knew only that they were handed on)."""
    lines = []
    for name, said in answer.files.items():
        if said == "":
            lines.append(f"{name}, which the helper sent, is in the chat.")
        elif said is not None:
            lines.append(f"{name}, which the helper sent, was not sent: {said}.")
    return "".join(f"\n{line}" for line in lines)
