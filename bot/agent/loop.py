"""The agent loop: one run takes a session from a user message (or a decision) to a stop.

A run ends on a final answer, the iteration cap, a repeating tool call, a cancel, a provider
failure, or tool calls that wait for a person's decision. Whatever ends it, every tool_use in
the context has its tool_result, the state is saved, and `Completed` is the last event.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from bot.agent import events as ev
from bot.agent.compaction import Compactor, estimate_text_tokens
from bot.agent.model_call import ModelOutcome, call_model
from bot.agent.prompt import PromptBuilder
from bot.agent.state import SessionState, TurnProgress
from bot.agent.tool_step import ToolStep
from bot.config import PolicyRule, Settings
from bot.llm.base import ModelRequest, Provider
from bot.llm.retry import RetryPolicy, Sleep
from bot.messages import Message, TextBlock, ToolUseBlock
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor
from bot.tools.policy import Policy

Checkpoint = Callable[[SessionState], Awaitable[None]]


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class AgentDeps:
    """Everything the loop needs, built once by the composition root."""

    settings: Settings
    provider: Provider
    model: str
    tools: ToolRegistry
    executor: ToolExecutor
    policy: Policy
    prompt: PromptBuilder
    compactor: Compactor
    retry: RetryPolicy
    sleep: Sleep = asyncio.sleep
    clock: Callable[[], datetime] = _utcnow


@dataclass(frozen=True)
class TurnRequest:
    """A new user message (`text`), decisions on waiting calls (call id → approved), or
    neither: continue the turn saved in the state (after the worker running it died)."""

    ctx: ToolContext
    text: str | None = None
    decisions: Mapping[str, bool] | None = None
    envelope_ids: tuple[str, ...] = ()
    deny_note: str = "Denied by the user."
    model: str | None = None


class Agent:
    def __init__(self, deps: AgentDeps) -> None:
        self.deps = deps

    def run(
        self,
        state: SessionState,
        request: TurnRequest,
        *,
        cancel: asyncio.Event | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> AsyncIterator[ev.AgentEvent]:
        """Advance `state` (mutated in place) and stream what happens; see the module doc."""
        return _Run(self.deps, state, request, cancel, checkpoint).events()


class _Run:
    """The mutable bookkeeping of one run; never shared between runs."""

    def __init__(
        self,
        deps: AgentDeps,
        state: SessionState,
        request: TurnRequest,
        cancel: asyncio.Event | None,
        checkpoint: Checkpoint | None,
    ) -> None:
        self.deps = deps
        self.state = state
        self.request = request
        self.cancel = cancel
        self.checkpoint = checkpoint
        policy = deps.policy.with_rules(
            PolicyRule(action="allow", tool=name) for name in state.always_allow
        )
        self.tools = ToolStep(
            deps.tools, deps.executor, policy, state, request.ctx, cancel, self.save
        )
        self.finish: ev.FinishReason | str | None = None
        self.final_text = ""
        self.notice = ""

    @property
    def turn(self) -> TurnProgress:
        if self.state.turn is None:
            self.state.turn = TurnProgress()
        return self.state.turn

    async def save(self) -> None:
        if self.checkpoint is not None:
            await self.checkpoint(self.state)

    async def events(self) -> AsyncIterator[ev.AgentEvent]:
        yield ev.StateChanged(layer="turn", state=ev.TurnState.INIT)
        async for event in self._start():
            yield event
        while self.finish is None:
            async for event in self._iterate():
                yield event
        async for event in self._end():
            yield event

    async def _start(self) -> AsyncIterator[ev.AgentEvent]:
        request, state = self.request, self.state
        if request.text is not None:
            if state.pending is not None:
                note = "Not run: the user sent a new message instead of deciding."
                async for event in self.tools.settle({}, note):
                    yield event
            state.close_unanswered("Not run: the turn it belonged to was abandoned.")
            state.turn = TurnProgress(envelope_ids=list(request.envelope_ids))
            now = self.deps.clock()
            stamp = self.deps.prompt.stamp(request.ctx, now)
            state.add_user(TextBlock(text=stamp), TextBlock(text=request.text))
        elif request.decisions is not None:
            if state.pending is None:
                yield ev.Error(message="Nothing is waiting for a decision.")
                self.finish = ev.FinishReason.NOTHING_PENDING
                return
            if request.envelope_ids:
                self.turn.envelope_ids = list(request.envelope_ids)
            async for event in self.tools.settle(request.decisions, request.deny_note):
                yield event
        elif interrupted := state.unanswered_tool_uses():
            async for event in self.tools.resume(interrupted):
                yield event
        self.finish = self.tools.finish
        await self.save()

    async def _iterate(self) -> AsyncIterator[ev.AgentEvent]:
        """One model call and the tools it asked for; sets `finish` when the turn should end."""
        if self.cancel is not None and self.cancel.is_set():
            self.finish = ev.FinishReason.CANCELLED
            return
        cap = self.deps.settings.max_iterations
        if self.turn.iteration >= cap:
            self.finish = ev.FinishReason.MAX_ITERATIONS
            self._notice(
                f"I stopped after {cap} steps without a final answer. "
                "Tell me how to go on, or ask a narrower question."
            )
            return
        self.turn.iteration += 1
        yield ev.Iteration(number=self.turn.iteration)
        request = self._request()
        async for event in self._compact(request):
            yield event
        if request.messages is not self.state.messages:
            request = replace(request, messages=self.state.messages)
        yield ev.StateChanged(layer="turn", state=ev.TurnState.PLANNING)
        outcome = ModelOutcome()
        async for event in call_model(
            self.deps.provider,
            request,
            self.deps.retry,
            self.deps.sleep,
            self.cancel,
            outcome,
        ):
            yield event
        async for event in self._observe(outcome):
            yield event

    async def _observe(self, outcome: ModelOutcome) -> AsyncIterator[ev.AgentEvent]:
        self.turn.usage += outcome.usage
        if outcome.error is not None:
            yield ev.Error(message=outcome.error)
            self.finish = ev.FinishReason.ERROR
            return
        calls = [] if outcome.finish_reason is None else outcome.calls
        content: list[TextBlock | ToolUseBlock] = (
            [TextBlock(text=outcome.text)] if outcome.text else []
        )
        content += [
            ToolUseBlock(
                id=c.id,
                name=c.name,
                input=c.arguments,
                raw_input=c.raw_arguments if c.error else None,
                input_error=c.error,
            )
            for c in calls
        ]
        if content:
            self.state.messages.append(
                Message(role="assistant", content=list(content), usage=outcome.usage)
            )
        self.final_text = outcome.text
        await self.save()
        if outcome.finish_reason is None:
            self.finish = ev.FinishReason.CANCELLED
        elif not calls:
            self.finish = outcome.finish_reason
        else:
            async for event in self.tools.run([b for b in content if isinstance(b, ToolUseBlock)]):
                yield event
            self.finish = self.tools.finish
            if self.tools.notice:
                self._notice(self.tools.notice)
            await self.save()

    async def _compact(self, request: ModelRequest) -> AsyncIterator[ev.AgentEvent]:
        """At most once per model call: fold older turns when the request is over budget."""
        overhead = estimate_text_tokens(
            *(part.text for part in request.system),
            json.dumps([t.__dict__ for t in request.tools]),
        )
        compactor = self.deps.compactor
        if not compactor.needed(self.state.messages, overhead):
            return
        yield ev.StateChanged(layer="turn", state=ev.TurnState.COMPACTING)
        result = await compactor.compact(self.state.messages, overhead)
        if result is None:
            return
        self.state.messages = result.messages
        await self.save()
        yield ev.Compacted(
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            summarized=result.summarized,
            messages_folded=result.folded,
        )

    def _request(self) -> ModelRequest:
        deps = self.deps
        return ModelRequest(
            model=self.request.model or deps.model,
            system=deps.prompt.system(self.request.ctx, deps.clock()),
            messages=self.state.messages,
            tools=deps.tools.specs,
            max_tokens=deps.settings.max_tokens,
        )

    def _notice(self, text: str) -> None:
        """A closing line from Parley itself, shown to the user and kept in the context."""
        self.state.messages.append(Message(role="assistant", content=[TextBlock(text=text)]))
        self.final_text = text
        self.notice = text

    async def _end(self) -> AsyncIterator[ev.AgentEvent]:
        if self.notice:
            yield ev.TextDelta(text=self.notice)
        finish = self.finish or ev.FinishReason.END_TURN
        turn = self.turn
        if finish != ev.FinishReason.AWAITING_CONFIRMATION:
            self.state.turn = None
        self.state.finished = list(self.request.envelope_ids)
        failed = finish == ev.FinishReason.ERROR
        yield ev.StateChanged(
            layer="turn", state=ev.TurnState.FAILED if failed else ev.TurnState.COMPLETED
        )
        await self.save()
        yield ev.Completed(
            finish_reason=finish, iterations=turn.iteration, usage=turn.usage, text=self.final_text
        )
