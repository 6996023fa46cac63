"""Running a session's turns: one worker at a time, each envelope committed once, in order.

`SessionRunner.take_turns` is what a worker runs when a drain job wakes it for a session. It takes
the session's lease, keeps it alive with a heartbeat (and stops the turn at once if the lease is
lost), and works through the inbox: consecutive plain messages become one turn, a decision resumes a
suspended turn, a turn found half done in the state (its worker died) is continued, and an envelope
that has crashed the worker too often goes to the dead letters so the session can go on. What a
turn is (`turn`), the envelopes that are not messages (`commands`, `decisions`), and how a run is
played and recorded (`play`, `record`) are the modules beside this one: the runner only holds the
lease, reads the inbox and commits.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time

from bot.agent.deps import TurnRequest
from bot.lab.replays import Replays
from bot.mailbox.inbox import Head, LeaseLost
from bot.mailbox.saved_state import TurnOptions
from bot.redis.live_runs import LiveRuns
from bot.session.commands import Commands
from bot.session.decisions import Decisions
from bot.session.deps import RunnerDeps
from bot.session.groups import finished_group, merged_group, resumed_group
from bot.session.lease import LeaseKeeper
from bot.session.live import LiveTurn, helper_stopped
from bot.session.play import Player
from bot.session.record import Recorder
from bot.session.states import StateStore, started_over
from bot.session.steering import MAX_GROUP, InboxJoining
from bot.session.turn import Turns
from bot.skills.tools import LOAD as LOAD_SKILL
from bot.store.cold_context import ColdContext
from bot.telemetry import logs, metrics
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.helpers import is_helper
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.state import SessionState
from bot.vocabulary.steering import steer_mode

log = logging.getLogger(__name__)


class SessionRunner:
    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps
        s = deps.settings
        self.states = StateStore(deps.mailbox, ColdContext(deps.history.engine))
        self.lease_ttl = s.lease_ttl
        self.max_attempts = s.max_attempts
        self.merge_limit = s.merge_messages if s.merge_messages > 0 else 1
        # The inbox's head is read this far: as far as a turn's group may reach, merged and
        # joined (`bot.session.steering`), so a turn resumed or finished after a crash is
        # always found whole at the head.
        self.head_size = max(self.merge_limit, MAX_GROUP)
        stores = deps.stores
        grants = stores.grants if stores is not None else None
        decisions = Decisions(
            deps.confirmations, deps.history, grants, deps.schedule_expiry, s.confirmation_ttl,
            show=deps.egress.expired,
        )  # fmt: skip
        agent = deps.agent.deps
        models = (agent.model, *agent.fallbacks)
        # load_skill comes and goes with the skills, and is counted by its name all along
        named = [*agent.tools.names, LOAD_SKILL]
        recorder = Recorder(deps.history, deps.limits, named, models, deps.exports)
        prompt = agent.prompt
        self.turns = Turns(s, deps.mailbox, decisions, stores, prompt.skills, prompt.bootstrap)
        model = deps.agent.default_model
        self.commands = Commands(
            deps.mailbox, deps.egress, decisions, recorder, model, agent.compactor
        )
        self.replays = Replays.on(deps.history.engine)
        self.player = Player(
            deps.agent, deps.egress, decisions, recorder, logs.secrets_of(s),
            LiveRuns(deps.mailbox.redis, s.turn_timeout), deps.voice,
        )  # fmt: skip
        self._cancels: dict[str, asyncio.Event] = {}
        self.live: dict[str, LiveTurn] = {}  # the turns running here, for their helpers

    def cancel(self, session: str) -> bool:
        """Stop the turn running here for `session` (a /stop); False if none runs here."""
        event = self._cancels.get(session)
        if event is not None:
            event.set()
        return event is not None

    async def take_turns(self, session: str) -> None:
        """Hold the session's lease and run its turns until the inbox is empty; someone else
        holds it already: return at once, the holder sees the new message before it lets go.
        The lease comes with the first turn's envelopes, and each commit brings the next
        turn's, or lets the lease go when none waits (`Mailbox.take_turn`, `Mailbox.commit`)."""
        mailbox = self.deps.mailbox
        liveness = self.deps.liveness
        worker_id = liveness.id if liveness is not None else ""
        taken = await mailbox.take_turn(session, self.lease_ttl, self.head_size, worker=worker_id)
        if taken is None:
            return
        token, head = taken
        logs.SESSION.set(session)  # this task's log lines name the session
        holder = asyncio.current_task()
        assert holder is not None
        keeper = LeaseKeeper(mailbox, liveness, (session, token), self.lease_ttl, holder)
        keeper.start()
        try:
            next_head: Head | None = head
            while next_head is not None:
                next_head = await self._handle(session, token, next_head, keeper)
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

    async def _handle(
        self, session: str, token: str, head: Head, keeper: LeaseKeeper
    ) -> Head | None:
        """Take the envelopes at the head of the inbox as one turn, and commit them with the
        state the turn left: a turn its dead worker finished is only committed. The next
        turn's head, or None once the lease is let go."""
        batch, tries = head.envelopes, head.tries
        first = batch[0]
        if tries == 1:  # taken up for the first time, not retried after a crash
            metrics.PICKUP_SECONDS.observe(max(0.0, time.time() - first.received_at))
        state, options = await self._state(session)
        if done := finished_group(batch, state):  # its worker died before committing it
            return await self._commit(session, token, done, state, keeper)
        resumed = resumed_group(batch, state)
        group = resumed or merged_group(batch[: self.merge_limit])
        if tries > self.max_attempts:
            await self.commands.skip(first, state, tries - 1)
            group = [first]
        elif first.kind == "command":
            state = await self.commands.run(first, state, options.model)
        else:  # a first try's reply has posted nothing yet
            state = await self._turn(session, token, group, state, options, resumed, tries == 1)
        return await self._commit(session, token, group, state, keeper)

    async def _turn(
        self,
        session: str,
        token: str,
        group: list[Envelope],
        state: SessionState,
        options: TurnOptions,
        resumed: list[Envelope] | None,
        fresh: bool,
    ) -> SessionState:
        """Run the turn `group` makes, if it makes one; a replay (`bot.lab`) in the state
        its lane starts it with, or not at all when it is skipped; an API run given a
        transcript in a new session after it. The state to commit."""
        replay = None
        if group[0].replay_of is not None:
            replay = await self.replays.prepared(group[0], resumed=bool(resumed))
            if replay is None:
                return state
            if replay.before is not None:  # its lane starts over: no replay sees another
                state = started_over(state)
                state.messages = replay.before
                state.recorded = replay.before[-1].id if replay.before else None
        elif group[0].initial and not state.messages and not resumed:  # a given transcript
            state.messages = [
                Message(role=said.role, content=[TextBlock(text=said.content)])
                for said in group[0].initial
            ]
        request = await self.turns.request(group, state, options, resumed=bool(resumed))
        if request is not None:
            request = replay.applied(request) if replay is not None else request
            mode = steer_mode(options.steer, self.deps.settings.steer_mode)
            if joining := InboxJoining.of(self.deps.mailbox, group, mode):
                request = dataclasses.replace(request, joining=joining)
            await self._play(session, token, group, state, request, fresh=fresh)
        return state

    async def _commit(
        self,
        session: str,
        token: str,
        group: list[Envelope],
        state: SessionState,
        keeper: LeaseKeeper,
    ) -> Head | None:
        """Commit `group` and take the next turn's head in the same step, or let the lease go
        when none waits. The heartbeat stops first (see `bot.session.lease`), and beats again
        for the next turn."""
        await keeper.stop()
        head = await self.states.commit(session, token, group, state, then=self.head_size)
        if head is not None:
            keeper.start()
        return head

    async def _state(self, session: str) -> tuple[SessionState, TurnOptions]:
        """The hot state, or the session rebuilt from SQL when Redis has none (lost, flushed),
        or a new session; and the options its turn runs with, read with the hot state."""
        stored, options = await self.states.load_for_turn(session)
        if stored is not None:
            return stored, options
        try:
            restored = await self.deps.history.restore(session)
        except Exception:
            log.exception("could not rebuild %s from the database; it starts afresh", session)
            return SessionState(), options
        return restored or SessionState(), options

    async def _play(
        self,
        session: str,
        token: str,
        group: list[Envelope],
        state: SessionState,
        request: TurnRequest,
        *,
        fresh: bool = False,
    ) -> None:
        """Play the turn under the lease: its checkpoints are saved with the lease's token,
        and a /stop for the session reaches it through `cancel`."""
        cancel = self._cancels[session] = asyncio.Event()
        live = self.live[session] = LiveTurn(
            state, request, self.deps.settings.turn_timeout, cancel
        )
        save = functools.partial(self.states.save, session, token)
        try:
            if is_helper(session) and await helper_stopped(self.deps.mailbox.redis, session):
                cancel.set()  # its parent stopped before it began: it ends at once
            await self.player.play(group, live, save=save, fresh=fresh)
        finally:
            self._cancels.pop(session, None)
            self.live.pop(session, None)
