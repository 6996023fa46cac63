"""Running a session's turns: one worker at a time, each envelope committed once, in order.

`SessionRunner.take_turns` is what a worker runs when a drain job wakes it for a session. It takes
the session's lease, keeps it alive with a heartbeat (and stops the turn at once if the lease is
lost), and works through the inbox: consecutive plain messages become one turn, a decision resumes a
suspended turn, a turn found half done in the state (its worker died) is continued, and an envelope
that has crashed the worker too often goes to the dead letters so the session can go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.agent.loop import Agent, TurnRequest
from bot.config.settings import Settings
from bot.mailbox.inbox import LeaseLost, Mailbox
from bot.mailbox.liveness import Liveness
from bot.people.limits import Limits
from bot.redis.confirmations import CallSummary, Confirmations
from bot.session.egress import Egress
from bot.session.groups import finished_group, merged_group, resumed_group
from bot.session.lease import LeaseKeeper
from bot.session.states import StateStore, started_over
from bot.session.stores import TurnStores
from bot.session.turn import (
    TurnReads,
    preferred_model,
    prepared,
    read_for,
    run_config,
    tool_context,
)
from bot.session.watch import RunWatch, session_info
from bot.store.cold_context import ColdContext
from bot.store.history import History, RunRecord
from bot.store.sqlite_file import DatabaseFileGone
from bot.telemetry import logs, metrics
from bot.tools.base import ToolContext
from bot.vocabulary import events as ev
from bot.vocabulary.chats import chat_of
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.runs import run_id
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage

log = logging.getLogger(__name__)
EXPIRED = "Not run: nobody approved it before the request expired."
POISONED = "Sorry, I could not process that message (it failed {n} times), so I skipped it."
FRESH_START = "Started a new conversation: I have forgotten what we said before."


@dataclass(frozen=True)
class RunnerDeps:
    settings: Settings
    mailbox: Mailbox
    agent: Agent
    egress: Egress
    confirmations: Confirmations
    schedule_expiry: Callable[[str, float], Awaitable[None]]
    history: History
    liveness: Liveness | None = None  # None: leases end only by their TTL (tools, tests)
    services: TurnStores | None = None  # None: turns read and keep nothing in the database
    limits: Limits | None = None  # None: turns count against no daily budget (tests)


class SessionRunner:
    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps
        self.states = StateStore(deps.mailbox, ColdContext(deps.history.engine))
        s = deps.settings
        self.lease_ttl = s.lease_ttl
        self.max_attempts = s.max_attempts
        self.merge_limit = s.merge_messages if s.merge_messages > 0 else 1
        self.secrets = logs.secrets_of(s)  # kept out of the runs' traces
        self._cancels: dict[str, asyncio.Event] = {}

    def cancel(self, session: str) -> bool:
        """Stop the turn running here for `session` (a /stop); False if none runs here."""
        event = self._cancels.get(session)
        if event is not None:
            event.set()
        return event is not None

    async def take_turns(self, session: str) -> None:
        """Hold the session's lease and run its turns until the inbox is empty; someone else
        holds it already: return at once, the holder sees the new message before it lets go."""
        mailbox = self.deps.mailbox
        liveness = self.deps.liveness
        worker_id = liveness.id if liveness is not None else ""
        token = await mailbox.take_lease(session, self.lease_ttl, worker=worker_id)
        if token is None:
            return
        logs.SESSION.set(session)  # this task's log lines name the session
        holder = asyncio.current_task()
        assert holder is not None
        keeper = LeaseKeeper(mailbox, liveness, (session, token), self.lease_ttl, holder)
        keeper.start()
        try:
            while True:
                batch = await mailbox.peek(session, self.merge_limit)
                if not batch:
                    await keeper.stop()  # before the release: see `bot.session.lease`
                    released = await mailbox.release_if_empty(session, token)
                    if released is False:
                        keeper.start()
                        continue
                    return
                await self._handle(session, token, batch)
        except LeaseLost:
            log.warning("lease on %s lost; another worker continues it", session)
        except asyncio.CancelledError:
            if not keeper.lost:
                await keeper.stop()
                await self._hand_over(session, token)
                raise
            log.warning("lease on %s expired during a turn; stopped it", session)
        except Exception:
            log.exception("turn in %s failed; it will be retried", session)
            await keeper.stop()
            await self._hand_over(session, token)
        finally:
            await keeper.stop()

    async def _hand_over(self, session: str, token: str) -> None:
        """Give the lease back with work left and wake another worker to continue."""
        with contextlib.suppress(Exception):
            await self.deps.mailbox.release(session, token)
            await self.deps.mailbox.wake(session)

    async def _handle(self, session: str, token: str, batch: list[Envelope]) -> None:
        mailbox = self.deps.mailbox
        head = batch[0]
        tries = await mailbox.attempt(head)
        if tries == 1:  # taken up for the first time, not retried after a crash
            metrics.PICKUP_SECONDS.observe(max(0.0, time.time() - head.received_at))
        state = await self._state(session)
        states = self.states
        if done := finished_group(batch, state):  # its worker died before committing it
            await states.commit(session, token, done, state)
            return
        resumed = resumed_group(batch, state)
        group = resumed or merged_group(batch)
        if tries > self.max_attempts:
            await self._skip(head, state, tries - 1)
            await states.commit(session, token, [head], state)
            return
        if head.kind == "command":
            state = await self._command(head, state)
            await states.commit(session, token, group, state)
            return
        asked = await self._request(group, state, resumed=bool(resumed))
        if asked is not None:
            request, reads = asked
            await self._run(
                session,
                token,
                group,
                state,
                await prepared(request, state, reads, self.deps.services),
            )
        await states.commit(session, token, group, state)

    async def _state(self, session: str) -> SessionState:
        """The hot state, or the session rebuilt from SQL when Redis has none (lost, flushed),
        or a new session."""
        stored = await self.states.load(session)
        if stored is not None:
            return stored
        try:
            restored = await self.deps.history.restore(session)
        except Exception:
            log.exception("could not rebuild %s from the database; it starts afresh", session)
            return SessionState()
        return restored or SessionState()

    async def _skip(self, head: Envelope, state: SessionState, failures: int) -> None:
        """Give up on an envelope that keeps crashing workers, so the session can go on."""
        await self.deps.mailbox.dead_letter(head, f"failed {failures} times")
        await self._say(head, ev.Error(message=POISONED.format(n=failures)))
        state.close_unanswered("Not run: the message was skipped after repeated failures.")
        state.turn = None
        now = time.time()
        record = RunRecord(
            where=session_info(head),
            envelope_ids=[head.id],
            trigger=ev.Trigger.SKIPPED,
            sender=head.sender.id,
            model=self.deps.agent.default_model,
            finish_reason=ev.FinishReason.POISONED,
            iterations=0,
            usage=Usage(),
            started_at=now,
            finished_at=now,
            error=f"skipped after {failures} failures",
        )
        await self._record(state, record)

    async def _command(self, head: Envelope, state: SessionState) -> SessionState:
        """The session's state after a command; commands run in order with the messages."""
        if head.text != "new":
            log.warning("unknown session command %r in %s", head.text, head.session)
            return state
        await self._decline_pending(state, head.sender.id)
        await self._say(head, ev.TextDelta(text=FRESH_START), finish=ev.FinishReason.END_TURN)
        await self._quietly("forget the context of", head.session, self.deps.history.reset)
        # the record keeps the totals for /usage, also of runs it has yet to take
        return started_over(state)

    async def _decline_pending(self, state: SessionState, by: str) -> None:
        """A request nobody decided is declined when the conversation moves past it."""
        if state.pending is not None and state.pending.confirmation_id:
            await self.deps.confirmations.decide(
                state.pending.confirmation_id, "declined", by, is_admin=True
            )
            await self._audit(state.pending.confirmation_id)

    async def _audit(self, confirmation_id: str | None) -> None:
        """The approvals audit learns who decided (a person, the expiry, a new message)."""
        confirmation = await self.deps.confirmations.get(confirmation_id or "")
        if confirmation is not None:
            await self._quietly("audit the decision on", confirmation, self.deps.history.decided)

    async def _record(self, state: SessionState, record: RunRecord) -> None:
        """The reply was given either way; a run the database missed waits in
        `state.unrecorded`, and the next record writes it with the messages since
        `state.recorded`. Its tokens count against the person's day, once per turn."""
        await self._quietly("record run", record, lambda r: self.deps.history.record(state, r))
        if self.deps.limits is not None:
            await self._quietly("count the tokens of", record, self.deps.limits.charge_turn)

    async def _quietly(
        self, what: str, subject: Any, write: Callable[[Any], Awaitable[None]]
    ) -> None:
        """A write to the record that must not fail the turn (the database may be away)."""
        try:
            await write(subject)
        except DatabaseFileGone as exc:  # logged as an error once, where it was noticed
            log.warning("could not %s %s: %s", what, getattr(subject, "id", subject), exc)
        except Exception:
            log.exception("could not %s %s", what, getattr(subject, "id", subject))

    async def _request(
        self, group: list[Envelope], state: SessionState, *, resumed: bool
    ) -> tuple[TurnRequest, TurnReads] | None:
        head = group[0]
        asker = head
        if (head.is_decision or resumed) and state.turn is not None and state.turn.person:
            update = {"sender": state.turn.person, "chat_kind": state.turn.chat_kind}
            asker = head.model_copy(update=update)  # the turn goes on as the person who asked
        ids = tuple(envelope.id for envelope in group)
        mailbox = self.deps.mailbox
        reads, config, option = await asyncio.gather(  # at once: the person waits for them
            read_for(asker, self.deps.services),
            run_config(head, state, mailbox, goes_on=head.is_decision or resumed),
            mailbox.option(head.session, "model"),
        )
        ctx = tool_context(asker, self.deps.settings, reads.preferences)
        model = config.model or option or preferred_model(ctx, self.deps.settings)
        if resumed:  # continue what a dead worker began
            return TurnRequest(ctx, envelope_ids=ids, model=model, config=config), reads
        tasks = self.deps.services.tasks if self.deps.services is not None else None
        if head.kind == "scheduled" and tasks is not None and await tasks.called_off(head.id):
            return None  # it waited behind the message that cancelled its task
        if head.is_decision:
            decided = (
                "expired" if head.kind == "expiry" else "approved" if head.approve else "denied"
            )
            metrics.CONFIRMATIONS.labels(decided).inc()
            await self._audit(head.confirmation_id)
            pending = state.pending
            if pending is None or pending.confirmation_id != head.confirmation_id:
                return None  # decided too late: the turn has moved on
            decisions = {call_id: bool(head.approve) for call_id in pending.waiting}
            if head.approve and head.remember:
                names = {c.name for c in pending.calls if c.id in pending.waiting}
                if await self._grant(ctx, names, head.sender.id):
                    reads = reads.granting(names)
            note = EXPIRED if head.kind == "expiry" else "Denied by the user."
            return TurnRequest(
                ctx, decisions=decisions, envelope_ids=ids, deny_note=note, model=model,
                config=config,
            ), reads  # fmt: skip
        await self._decline_pending(state, head.sender.id)
        text = "\n".join(envelope.text for envelope in group)
        return TurnRequest(ctx, text=text, envelope_ids=ids, model=model, config=config), reads

    async def _grant(self, ctx: ToolContext, tools: set[str], by: str) -> bool:
        """Keep an "Always allow": the person who asked may run `tools` in this chat from now
        on, this turn included (True once kept). A database that cannot take it costs the
        grant, not the turn: the approved calls still run, and are asked about again next
        time."""
        services = self.deps.services
        if services is None:
            return False
        person, chat = ctx.user.id, chat_of(ctx.session_key)
        try:
            await services.grants.add(person, chat, tools, by)
        except Exception:
            log.warning("could not keep what %s allowed in %s", person, chat, exc_info=True)
            return False
        return True

    async def _run(
        self,
        session: str,
        token: str,
        group: list[Envelope],
        state: SessionState,
        request: TurnRequest,
    ) -> None:
        head = group[0]

        resumed = request.text is None and request.decisions is None
        watch = RunWatch.of(state, resumed=resumed, secrets=self.secrets)

        async def checkpoint(current: SessionState) -> None:
            watch.keep(current)
            await self.states.save(session, token, current)

        cancel = self._cancels[session] = asyncio.Event()
        stream = self.deps.egress.open(group)
        named = logs.RUN.set(run_id(session, head.id))
        abandoned = False  # stopped from outside: the lease was lost, or the worker stops
        try:
            if resumed:
                await stream.send(ev.TextReset(reason="the turn is resumed after a restart"))
            async for event in self.deps.agent.run(
                state, request, cancel=cancel, checkpoint=checkpoint
            ):
                outgoing = event
                if isinstance(event, ev.ConfirmationRequired):
                    outgoing = await self._confirmation(head, state, event)
                watch.see(event)
                await stream.send(outgoing)
        except asyncio.CancelledError:
            abandoned = True
            raise
        finally:
            self._cancels.pop(session, None)
            await stream.close(abandoned=abandoned)
            logs.RUN.reset(named)
        model = request.model or self.deps.agent.default_model
        if record := watch.record(group, _trigger(head, request), model, request.ctx.user.id):
            metrics.observe_run(record, self.deps.agent.deps.tools.names)
            await self._record(state, record)

    async def _confirmation(
        self, head: Envelope, state: SessionState, event: ev.ConfirmationRequired
    ) -> ev.ConfirmationRequired:
        ttl = self.deps.settings.confirmation_ttl
        confirmation = await self.deps.confirmations.create(
            head.session,
            head.id,
            head.sender.id,
            [
                CallSummary(call_id=c.call_id, name=c.name, arguments=c.arguments)
                for c in event.calls
            ],
            ttl,
            can_remember=event.can_remember,
            platform=head.platform,
            reply_to=head.reply_to,
        )
        if state.pending is not None:
            state.pending.confirmation_id = confirmation.id
        await self._quietly(
            "audit", confirmation, lambda r: self.deps.history.asked(session_info(head), r)
        )
        await self.deps.schedule_expiry(confirmation.id, ttl)
        return event.model_copy(
            update={"confirmation_id": confirmation.id, "expires_at": confirmation.expires_at}
        )

    async def _say(
        self,
        envelope: Envelope,
        event: ev.AgentEvent,
        finish: ev.FinishReason = ev.FinishReason.ERROR,
    ) -> None:
        stream = self.deps.egress.open([envelope])
        try:
            await stream.send(event)
            await stream.send(ev.Completed(finish_reason=finish, iterations=0, usage=Usage()))
        finally:
            await stream.close()


def _trigger(head: Envelope, request: TurnRequest) -> ev.Trigger:
    if head.kind == "scheduled" and request.text is not None:
        return ev.Trigger.SCHEDULED
    if head.run is not None and request.text is not None:
        return ev.Trigger.API
    if request.text is not None:
        return ev.Trigger.MESSAGE
    if request.decisions is None:
        return ev.Trigger.RESUME
    return ev.Trigger.DECISION  # a person's or the expiry's: the record has one for both
