"""A turn's run, played: the agent's events go to the chat as they come, the calls it stops
at become confirmations, and the watch turns the events into the run's record. A file the
run sends is posted before the run goes on, and what became of it is recorded for the run
(`Deliveries`), so the model is never told that a file the platform refused was sent. A
finished answer is said aloud below its text for a person who asked (`bot.session.voice`),
before the run's `Completed` goes out: an event stream still ends with it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bot.agent.attachments import Deliveries
from bot.agent.loop import Agent
from bot.redis.live_runs import LiveRuns
from bot.session.decisions import Decisions
from bot.session.egress import Egress
from bot.session.live import LiveTurn
from bot.session.progress import RunProgress
from bot.session.record import Recorder, trigger
from bot.session.voice import VoiceReplies
from bot.session.watch import RunWatch
from bot.telemetry import logs
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.runs import run_id
from bot.vocabulary.state import SessionState

Save = Callable[[SessionState], Awaitable[None]]


@dataclass(frozen=True)
class Player:
    agent: Agent
    egress: Egress
    decisions: Decisions
    recorder: Recorder
    secrets: Sequence[str]  # kept out of the runs' traces
    live: LiveRuns | None = None  # where a run's progress is shown while it runs
    voice: VoiceReplies | None = None  # None: no reply is said aloud (no speech endpoint)

    async def play(
        self, group: list[Envelope], live: LiveTurn, *, save: Save, fresh: bool = False
    ) -> None:
        """Run the turn `live` to its end (or until its cancel is set), saving the state
        through `save` at each checkpoint; a run that completed is recorded. `fresh`: the
        turn is taken up for the first time, so its reply has posted nothing yet."""
        head, state, request = group[0], live.state, live.request
        resumed = request.text is None and request.decisions is None
        watch = RunWatch.of(state, resumed=resumed, secrets=self.secrets)
        if request.decisions is not None:
            watch.decided(state, head.received_at)

        async def checkpoint(current: SessionState) -> None:
            watch.keep(current)
            await save(current)

        model = request.model or self.agent.default_model
        ident, how = run_id(head.session, head.id), trigger(head, request)
        progress = RunProgress(self.live, ident, head, how, model, state, watch)
        stream = self.egress.open(group, fresh=fresh)
        live.show, live.post = stream.send, stream.post_file
        named = logs.RUN.set(ident)
        abandoned = False  # stopped from outside: the lease was lost, or the worker stops
        try:
            if resumed:
                await stream.send(ev.TextReset(reason="the turn is resumed after a restart"))
            deliveries = Deliveries()
            run = self.agent.run(
                state, request, cancel=live.cancel, checkpoint=checkpoint,
                deadline=live.deadline, deliveries=deliveries,
            )  # fmt: skip
            async for event in run:
                outgoing = event
                if isinstance(event, ev.ConfirmationRequired):
                    outgoing = await self.decisions.ask(head, state, event)
                watch.see(event)
                if isinstance(event, ev.StateChanged):
                    await progress.changed(event)
                if isinstance(event, ev.Completed) and self.voice is not None:
                    await self.voice.answer(group, state, request, event, stream)
                if isinstance(event, ev.FileSent):
                    deliveries.record(event, await stream.post_file(event))
                else:  # `ModelAnswered` too: a chat's reply holds its updates once it is whole
                    await stream.send(outgoing)
        except asyncio.CancelledError:
            abandoned = True
            raise
        finally:
            progress.halt()
            await stream.close(abandoned=abandoned)
            logs.RUN.reset(named)
        if record := watch.record(group, how, model, request.ctx.user.id):
            await self.recorder.finished(state, record)
        await progress.drop()
