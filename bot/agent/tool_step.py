"""The tool half of an iteration: repeat detection, the policy, execution and confirmation.

Results are collected per call and added to the context in one user message, in the order of
the calls, only when every call has one: the model APIs reject a context in which a tool_use
lacks its tool_result. Files a call made for the person are stored and announced after the
results (`bot.agent.attachments`), each a `FileSent` event; the results go into the context
once those events were shown, saying what the reply recorded of each file (`Deliveries`): a
file the platform refused is never told to the model as sent. `delegate` calls past the
helpers a turn may start are answered without running (`bot.agent.helper_count`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from bot.agent import helper_count
from bot.agent.attachments import Attachments, Deliveries, SendLimits, Taken, turn_images
from bot.agent.cancel import wait_all_or_cancel
from bot.agent.replayed import RecordedCalls
from bot.agent.step import Step, StepEnd
from bot.tools import ask_user
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor, ToolOutcome, cache_key
from bot.tools.policy import Policy
from bot.vocabulary import events as ev
from bot.vocabulary.files import SentFile
from bot.vocabulary.helpers import TOOL as DELEGATE
from bot.vocabulary.messages import ToolResultBlock, ToolUseBlock
from bot.vocabulary.state import PendingConfirmation, SessionState, TurnProgress

REPEAT_WARN = 3
CANCELLED = "Cancelled by the user before it finished."
STOPPED = "Not run: the turn was stopped."
ASK_ALONE = (
    "Not run: it was called with ask_user, which waits for the person's answer. Call it "
    "again once they answered, if it is still needed."
)
INTERRUPTED = (
    "Interrupted: the worker running this tool stopped before it finished. It was not run "
    "again, because running it twice could repeat its effect; ask the user before retrying."
)


@dataclass
class _Screened:
    """A batch sorted by the repeat check and the policy, before anything runs."""

    run_now: list[ToolUseBlock] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    looping: str | None = None  # the tool called over and over, which stops the turn


class ToolStep:
    """Runs the tool calls of a turn. Each method is a `Step`: it yields the events and, last,
    a `StepEnd` that tells the loop whether the turn stops."""

    def __init__(
        self,
        registry: ToolRegistry,
        executor: ToolExecutor,
        policy: Policy,
        state: SessionState,
        ctx: ToolContext,
        cancel: asyncio.Event | None,
        save: Callable[[], Awaitable[None]],
        stopped: Callable[[], str] = lambda: CANCELLED,
        attachments: Attachments | None = None,
        deliveries: Deliveries | None = None,
        *,
        helpers: int,
        replay: RecordedCalls | None = None,
    ) -> None:
        """`stopped` says why a call the turn's cancel cut off did not finish (a /stop, or
        the turn's time running out); `attachments` takes the files calls made (None: no
        file is sent), `deliveries` is where the reply says what became of them, and
        `helpers` is how many helpers the turn may start (PARLEY_HELPERS_PER_TURN)."""
        self.registry = registry
        self.executor = executor
        self.policy = policy
        self.state = state
        self.ctx = ctx
        self.caller = policy.caller(ctx)
        self.cancel = cancel
        self.save = save
        self.stopped = stopped
        self.helpers = helpers
        self.replay = replay  # a replay's: its calls that change things are answered from it
        self.attachments = attachments or Attachments(None, SendLimits(0, 0))
        self.deliveries = deliveries
        self._files: list[ev.FileSent] = []  # of the calls just run, announced after results
        self._taken: dict[str, tuple[str, Taken]] = {}  # their text and files, by call

    @property
    def turn(self) -> TurnProgress:
        if self.state.turn is None:
            self.state.turn = TurnProgress()
        return self.state.turn

    async def run(
        self,
        calls: Sequence[ToolUseBlock],
        *,
        done: Mapping[str, ToolResultBlock] | None = None,
        order: Sequence[ToolUseBlock] | None = None,
        resumed: bool = False,
    ) -> Step:
        """Decide, run and record one batch of calls.

        `done` holds results already known for other calls of the same assistant message,
        and `order` that message's calls, when only part of a batch is run here. A `resumed`
        batch was counted for repeats before the crash and is not counted again.
        """
        yield ev.StateChanged(layer="turn", state=ev.TurnState.EXECUTING)
        for call in calls:
            yield ev.ToolCallStart(call_id=call.id, name=call.name, arguments=call.input)
        results: dict[str, ToolResultBlock] = dict(done or {})
        batch = list(order or calls)
        screened = self._screen_batch(calls, results, count=not resumed)
        if screened.looping is not None:
            for call in batch:
                results.setdefault(call.id, _error(call, STOPPED))
            screened.run_now, screened.waiting = [], []
        if screened.run_now:
            yield ev.StateChanged(layer="call", state=ev.CallState.TOOL_EXECUTING)
        outcomes, finished = await self._execute(screened.run_now, results)
        for event in self._report([c for c in batch if c.id in results], results, outcomes):
            yield event
        for event in self._sent():
            yield event
        self._told(results)
        if screened.looping is not None:
            end = StepEnd(ev.FinishReason.DOOM_LOOP, _looping_notice(screened.looping))
        else:
            end = StepEnd(None if finished else ev.FinishReason.CANCELLED)
        if screened.waiting and end.finish is None:
            for event in self._suspend(batch, results, screened.waiting):
                yield event
            yield StepEnd(ev.FinishReason.AWAITING_CONFIRMATION)
            return
        for event in self._close(batch, results, unasked=screened.waiting):
            yield event
        yield end

    async def resume(self, calls: Sequence[ToolUseBlock]) -> Step:
        """Finish a batch cut off by a crash: calls that may have run are not run blindly again.

        A read-only call is simply run again; any other call that had started is reported to
        the model as interrupted; calls that never started go through the policy as usual.
        """
        started = set(self.turn.started)
        results: dict[str, ToolResultBlock] = {}
        rerun: list[ToolUseBlock] = []
        for call in calls:
            tool = self.registry.get(call.name)
            if call.id in started and not (tool is not None and tool.read_only):
                results[call.id] = _error(call, INTERRUPTED)
            else:
                rerun.append(call)
        if not rerun:
            for event in self._report(calls, results, {}):
                yield event
            self.state.add_user(*(results[call.id] for call in calls))
            yield StepEnd()
            return
        async for item in self.run(rerun, done=results, order=calls, resumed=True):
            yield item

    async def apply_decisions(
        self,
        decisions: Mapping[str, bool],
        deny_note: str,
        answers: Mapping[str, str] | None = None,
    ) -> Step:
        """Finish a suspended batch: run what was approved, refuse the rest, record all. An
        `ask_user` call's result is its answer (`answers`), or says it had none."""
        pending = self.state.pending
        if pending is None:
            yield StepEnd()
            return
        results = dict(pending.results)
        approved = [c for c in pending.calls if c.id in pending.waiting and decisions.get(c.id)]
        for call in pending.calls:
            if call.id not in pending.waiting or decisions.get(call.id):
                continue
            if call.name == ask_user.NAME:
                said = (answers or {}).get(call.id, ask_user.SET_ASIDE)
                results[call.id] = ToolResultBlock(tool_use_id=call.id, content=said)
            else:
                results[call.id] = _error(call, deny_note)
        if approved:
            yield ev.StateChanged(layer="call", state=ev.CallState.TOOL_EXECUTING)
        outcomes, finished = await self._execute(approved, results)
        for call in pending.calls:
            results.setdefault(call.id, _error(call, self.stopped()))
        decided = [c for c in pending.calls if c.id in pending.waiting]
        for event in self._report(decided, results, outcomes):
            yield event
        for event in self._sent():
            yield event
        self._told(results)
        self.state.add_user(*(results[call.id] for call in pending.calls))
        self.state.pending = None
        self.turn.started = []
        yield StepEnd(None if finished else ev.FinishReason.CANCELLED)

    def _suspend(
        self, batch: list[ToolUseBlock], results: dict[str, ToolResultBlock], waiting: list[str]
    ) -> list[ev.AgentEvent]:
        """Keep the batch in the state until a person decides on the `waiting` calls."""
        self.state.pending = PendingConfirmation(
            calls=batch, results=results, waiting=waiting, asked_at=time.time()
        )
        asked = [c for c in batch if c.id in waiting]
        questions = ask_user.parse(asked[0].input) if asked[0].name == ask_user.NAME else []
        return [
            ev.StateChanged(layer="turn", state=ev.TurnState.AWAITING_CONFIRMATION),
            ev.ConfirmationRequired(
                calls=[ev.PendingCall(call_id=c.id, name=c.name, arguments=c.input) for c in asked],
                can_remember=not questions
                and all(self.policy.may_remember(c.name, c.input, self.caller) for c in asked),
                questions=questions if isinstance(questions, list) else [],
                timeout=self._timeout(asked),
            ),
        ]

    def _timeout(self, asked: Sequence[ToolUseBlock]) -> float | None:
        """The shortest wait the asked calls' rules set, if any sets one."""
        waits = [self.policy.timeout(c.name, c.input, self.caller) for c in asked]
        given = [wait for wait in waits if wait is not None]
        return min(given) if given else None

    def _close(
        self, batch: list[ToolUseBlock], results: dict[str, ToolResultBlock], unasked: list[str]
    ) -> list[ev.AgentEvent]:
        """Add the batch's results to the context; calls that were to be asked about, but
        the turn stops first, are reported as cancelled."""
        refused = [call for call in batch if call.id in unasked]
        for call in refused:
            results[call.id] = _error(call, self.stopped())
        events = self._report(refused, results, {})
        events.append(ev.StateChanged(layer="turn", state=ev.TurnState.OBSERVING))
        self.state.add_user(*(results[call.id] for call in batch))
        self.turn.started = []
        return events

    def _screen_batch(
        self, calls: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock], *, count: bool
    ) -> _Screened:
        """Sort `calls`: a result that replaces running one goes into `results`."""
        screened = _Screened()
        for call in calls:
            if count:
                self._count_repeat(call)
            if self.turn.repeat_count > REPEAT_WARN:
                screened.looping = call.name
                results[call.id] = _error(call, STOPPED)
                continue
            verdict = self._screen(call)
            if isinstance(verdict, ToolResultBlock):
                results[call.id] = verdict
            elif verdict == "ask":
                screened.waiting.append(call.id)
            else:
                screened.run_now.append(call)
        return _one_question(screened, calls, results)

    def _count_repeat(self, call: ToolUseBlock) -> None:
        turn = self.turn
        signature = cache_key(call)
        if signature == turn.repeat_signature:
            turn.repeat_count += 1
        else:
            turn.repeat_signature, turn.repeat_count = signature, 1

    def _screen(self, call: ToolUseBlock) -> ToolResultBlock | str:
        """A result that replaces running the call (a repeat, a denial), or the policy's
        verdict."""
        if self.turn.repeat_count == REPEAT_WARN:
            return _error(
                call,
                (
                    f"Not run: you called {call.name} with these exact arguments {REPEAT_WARN} "
                    "times in a row. The result will not change. Use what you have, try "
                    "something different, or answer the user."
                ),
            )
        tool = self.registry.get(call.name)
        if tool is None:  # also one the executor has, where the run was offered fewer
            available = ", ".join(self.registry.names) or "none"
            return _error(call, f"Unknown tool {call.name!r}. Available tools: {available}.")
        action = self.policy.decide(tool, call.name, call.input, self.caller)
        if action == "deny":
            return _error(call, f"Not run: the policy does not allow {call.name} here.")
        live = tool.read_only and action == "allow" and call.name != DELEGATE  # a helper's
        if self.replay is not None and not live:  # calls would not be a replay's any more
            return self.replay.answer(call)  # nothing is done twice, nobody is asked
        if call.name == DELEGATE and not helper_count.let_through(self.turn, call.id, self.helpers):
            return _error(call, helper_count.refusal(self.helpers))
        if call.name == ask_user.NAME:  # never run: the person answers it
            asked = ask_user.parse(call.input)
            return _error(call, asked) if isinstance(asked, str) else "ask"
        return action

    async def _execute(
        self, calls: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock]
    ) -> tuple[dict[str, ToolOutcome], bool]:
        """Run `calls` concurrently into `results`; the flag is False if a cancel cut them off,
        and then the unfinished ones say so.

        The calls are marked as started, and saved, before they run: after a crash, a call
        that may have had its effect is not run again blindly.
        """
        if calls:
            self.turn.started = [*self.turn.started, *(call.id for call in calls)]
            await self.save()
        room = self.attachments.room(self.turn)
        ctx = replace(self.ctx, files=room, images=turn_images(self.state))
        tasks = self.executor.start(calls, ctx, self.turn.cache)
        finished = await wait_all_or_cancel(tasks, self.cancel)
        self.attachments.count_read(room, self.turn)
        outcomes: dict[str, ToolOutcome] = {}
        for call, task in zip(calls, tasks, strict=True):
            if task.cancelled() or task.exception() is not None:
                results[call.id] = _error(call, self.stopped())
                continue
            out = outcomes[call.id] = task.result()
            if out.usage is not None:  # a helper's tokens are this run's too
                self.turn.usage += out.usage
            content, sent = out.content, list[ev.FileSent]()
            if out.files:
                taken = await self.attachments.take(call.id, out.files, self.turn, self.ctx.user.id)
                self._taken[call.id] = (content, taken)
                sent = taken.sent
                content, self._files = f"{content}\n{taken.note()}", [*self._files, *sent]
            results[call.id] = ToolResultBlock(
                tool_use_id=call.id,
                content=content,
                is_error=out.is_error,
                files=[SentFile.of(event.file, event.caption) for event in sent],
            )
        return outcomes, finished

    def _sent(self) -> list[ev.FileSent]:
        """The files of the calls just run, once."""
        sent, self._files = self._files, []
        return sent

    def _told(self, results: dict[str, ToolResultBlock]) -> None:
        """The results of the calls just run that sent files, as the context keeps them:
        each file as its reply recorded it, now that their events were shown."""
        for call_id, (content, taken) in self._taken.items():
            told = f"{content}\n{taken.note(self.deliveries)}"
            results[call_id] = results[call_id].model_copy(update={"content": told})
        self._taken = {}

    @staticmethod
    def _report(
        calls: Sequence[ToolUseBlock],
        results: Mapping[str, ToolResultBlock],
        outcomes: Mapping[str, ToolOutcome],
    ) -> list[ev.AgentEvent]:
        events: list[ev.AgentEvent] = []
        for call in calls:
            block, out = results[call.id], outcomes.get(call.id)
            events.append(
                ev.ToolCallResult(
                    call_id=call.id,
                    name=call.name,
                    content=block.content,
                    is_error=block.is_error,
                    duration=out.duration if out else 0.0,
                    cached=out.cached if out else False,
                )
            )
        return events


def _one_question(
    screened: _Screened, calls: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock]
) -> _Screened:
    """A batch waits for one thing: with an `ask_user` call among those waiting, the first
    such call waits alone, and the other calls that wait are not run (the model may call
    them again once it has the answer). A confirmation is either a question or approvals."""
    names = {call.id: call for call in calls}
    first = next((i for i in screened.waiting if names[i].name == ask_user.NAME), None)
    if first is None:
        return screened
    for call_id in screened.waiting:
        if call_id != first:
            results[call_id] = _error(names[call_id], ASK_ALONE)
    screened.waiting = [first]
    return screened


def _looping_notice(name: str) -> str:
    return (
        f"I stopped because I kept calling {name} with the same "
        "arguments without getting anywhere. Could you rephrase or give me "
        "more to go on?"
    )


def _error(call: ToolUseBlock, message: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=call.id, content=message, is_error=True)
