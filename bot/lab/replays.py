"""A replay, as a worker takes it from its lane (`bot.vocabulary.replays`).

Its evaluation is read first: a cancelled one, or one whose replays took its token budget
already, skips it (said in its row). Then the run it replays: its lane's session starts over
(the runner does it) with the conversation the run had before it, and the turn gets the
run's recorded calls, which answer any call that changes something (`bot.agent.replayed`),
and the candidate's instructions in place of the chat's, if it has some. A turn resumed
after a worker died gets its recorded calls again, and nothing else.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.agent.deps import TurnRequest
from bot.agent.replayed import RecordedCalls
from bot.store.evaluations import Evaluation, Evaluations
from bot.store.replays import ReplaySources
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.messages import Message
from bot.vocabulary.replays import evaluation_of
from bot.vocabulary.runs import run_id

GONE = "the recorded run is gone, or began with no message"


@dataclass(frozen=True)
class Replay:
    calls: RecordedCalls
    instructions: str | None  # the candidate's, in place of the chat's
    before: list[Message] | None  # the conversation its lane starts over with (None: goes on)

    def applied(self, request: TurnRequest) -> TurnRequest:
        rules = request.chat_rules
        if self.instructions is not None:
            rules = dataclasses.replace(rules, instruction=self.instructions or None)
        return dataclasses.replace(request, replay=self.calls, chat_rules=rules)


@dataclass(frozen=True)
class Replays:
    evaluations: Evaluations
    sources: ReplaySources

    @classmethod
    def on(cls, engine: AsyncEngine) -> Replays:
        return cls(Evaluations(engine), ReplaySources(engine))

    async def prepared(self, head: Envelope, *, resumed: bool) -> Replay | None:
        """What the replay `head` runs with; None when it is skipped (its row says why)."""
        evaluation_id = evaluation_of(head.session)
        evaluation = await self.evaluations.get(evaluation_id) if evaluation_id else None
        if evaluation is None:
            return None  # not a lane of any evaluation there is
        source = await self.sources.input_of(head.replay_of) if head.replay_of else None
        why = GONE if source is None else None
        if why is None and not resumed:  # a replay begun goes on, whatever happened since
            why = await self._why_not(evaluation)
        if why is not None or source is None:
            await self.evaluations.skip(evaluation.id, run_id(head.session, head.id), why or GONE)
            return None
        calls = RecordedCalls.of(
            [(call.name, call.arguments, call.content, call.is_error) for call in source.calls]
        )
        before = None if resumed else list(source.before)
        return Replay(calls, evaluation.config.get("instructions"), before)

    async def _why_not(self, evaluation: Evaluation) -> str | None:
        if evaluation.status == "cancelled":
            return "the evaluation was cancelled"
        budget = evaluation.budget
        if budget is not None and await self.evaluations.spent(evaluation.id) >= budget:
            return "the evaluation's token budget was spent"
        return None
