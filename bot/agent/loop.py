"""The agent loop: one run takes a session from a user message (or a decision) to a stop.

A run ends on a final answer, the iteration cap, a repeating tool call, a cancel, a provider
failure, or tool calls that wait for a person's decision. Whatever ends it, every tool_use in
the context has its tool_result, the state is saved, and `Completed` is the last event.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace

from bot.agent import budget, failed_turn, output
from bot.agent.attachments import Deliveries
from bot.agent.compaction import context_sizes, overhead_tokens
from bot.agent.deadline import TOOL_NOTE, Deadline
from bot.agent.deps import AgentDeps, TurnRequest
from bot.agent.joining import taken_in
from bot.agent.model_call import ModelOutcome, call_model
from bot.agent.plan import PlanExecution
from bot.agent.ran_with import ran_with
from bot.agent.step import Step, StepEnd
from bot.agent.tool_step import CANCELLED, ToolStep
from bot.config.values import PolicyRule
from bot.llm.base import ModelRequest
from bot.llm.media import carries_images
from bot.memory.prompt import recalled_note
from bot.vocabulary import events as ev
from bot.vocabulary.messages import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolUseBlock,
)
from bot.vocabulary.run_config import RunConfig, reasoning_in
from bot.vocabulary.state import SessionState, TurnProgress

Checkpoint = Callable[[SessionState], Awaitable[None]]
ANSWER_SHOWN = 2000  # characters of a judged answer its validation event carries
UNSEEN_NOTE = "This model cannot see images, so I answered from your words alone."


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
        deadline: Deadline | None = None,
        deliveries: Deliveries | None = None,
    ) -> AsyncIterator[ev.AgentEvent]:
        """Advance `state` (mutated in place) and stream what happens; see the module doc.
        `deadline`: the turn's clock, when its caller holds it too (a worker's turns);
        `deliveries`: where whoever shows the events records what became of each file
        (`bot.agent.attachments`), before the run goes on past it."""
        run = _Run(self.deps, state, request, cancel, checkpoint, deliveries)
        run.deadline = deadline or run.deadline
        return run.events()

    @property
    def default_model(self) -> str:
        """The model of a turn whose session chose none (PARLEY_MODEL)."""
        return self.deps.model

    async def warm(self) -> None:
        """Start the tools' helper process before the first call that needs one."""
        await self.deps.executor.warm()

    async def aclose(self) -> None:
        """Close the provider's connections and stop the tools' helper processes and the
        reader kept for their files."""
        try:
            await self.deps.provider.aclose()
        finally:
            await self.deps.executor.aclose()
            if self.deps.attachments is not None:
                await self.deps.attachments.aclose()


class _Run:
    """The mutable bookkeeping of one run; never shared between runs."""

    def __init__(
        self,
        deps: AgentDeps,
        state: SessionState,
        request: TurnRequest,
        cancel: asyncio.Event | None,
        checkpoint: Checkpoint | None,
        deliveries: Deliveries | None = None,
    ) -> None:
        self.state = state
        self.request = request
        # A new message brings its config; a decision or a resume goes on with its turn's.
        if state.turn is not None and request.text is None:
            config = state.turn.config or RunConfig()
        else:
            config = request.config
        self.config = config
        self.reasoning = reasoning_in(
            request.ctx.chat_kind, config.reasoning, deps.settings.reasoning
        )
        self.deps = deps = _configured(deps, config, request.chat_rules.tools_off)
        self.cancel = cancel if cancel is not None else asyncio.Event()
        self.deadline = Deadline(config.timeout or deps.settings.turn_timeout, self.cancel)
        self.checkpoint = checkpoint
        policy = deps.policy.with_rules(
            PolicyRule(action="allow", tool=name) for name in request.allowed
        )
        self.plan = PlanExecution(self) if config.mode == "plan_execute" else None
        self.output: object = None  # the answer's JSON, once it matched the schema
        self.tools = ToolStep(
            deps.tools,
            deps.executor,
            policy,
            state,
            request.ctx,
            self.cancel,
            self.save,
            lambda: TOOL_NOTE if self.deadline.passed else CANCELLED,
            deps.attachments,
            deliveries,
            helpers=deps.settings.helpers_per_turn,
            replay=request.replay,
        )
        self.final_text = ""
        self.notice = ""
        self.repairing = False
        self.model = ""  # the model that answered last, once one has
        self.unseen = False  # the model answered without seeing the images: it is said
        self.joined: list[str] = []  # the envelopes that joined the turn in this run

    @property
    def turn(self) -> TurnProgress:
        if self.state.turn is None:
            self.state.turn = TurnProgress()
        return self.state.turn

    async def save(self) -> None:
        if self.checkpoint is not None:
            await self.checkpoint(self.state)

    async def events(self) -> AsyncIterator[ev.AgentEvent]:
        """The turn from top to bottom: start it, then one model call with its tools after
        another until a step ends the turn, then end it. The first finish a step gives is
        the turn's."""
        yield ev.StateChanged(layer="turn", state=ev.TurnState.INIT)
        finish: ev.FinishReason | str | None = None
        step = self._start()
        self.deadline.start()
        try:
            while True:
                async for item in step:
                    if isinstance(item, StepEnd):
                        finish = finish or item.finish
                    else:
                        yield item
                if finish == ev.FinishReason.END_TURN and self.config.output_schema:
                    async for event in self._judge():
                        yield event
                    finish = None if self.repairing else finish
                    if self.output is None and not self.repairing:
                        finish = ev.FinishReason.INVALID_OUTPUT
                if finish is not None:
                    break
                async for event in self._joined():
                    yield event
                step = self.plan.step() if self.plan is not None else self.iterate()
        finally:
            self.deadline.stop()
        if self.deadline.passed and finish == ev.FinishReason.CANCELLED:
            finish = ev.FinishReason.TIMED_OUT
            self._notice(self.deadline.notice())
        async for event in self._end(finish):
            yield event

    async def _joined(self) -> AsyncIterator[ev.AgentEvent]:
        """Between two steps: take in what the person wrote meanwhile (`bot.agent.joining`),
        saved with the turn's envelopes before the next call reads it."""
        joining = self.request.joining
        if joining is None or (self.cancel is not None and self.cancel.is_set()):
            return
        joined = await joining.take()
        if joined:
            self.joined += [envelope.id for envelope in joined]
            yield taken_in(self.state, joined, self.request.ctx)
            await self.save()

    async def _start(self) -> Step:
        """Take in the new message or the decisions, or finish tool calls a crash cut off."""
        request, state = self.request, self.state
        if request.text is not None:
            if state.pending is not None:
                note = "Not run: the user sent a new message instead of deciding."
                async for item in self.tools.apply_decisions({}, note, request.answers):
                    yield item
            state.close_unanswered("Not run: the turn it belonged to was abandoned.")
            ctx = request.ctx
            state.turn = TurnProgress(
                envelope_ids=list(request.envelope_ids),
                person=ctx.user,
                chat_kind=ctx.chat_kind,
                config=None if self.config.is_default else self.config,
            )
            now = self.deps.clock()
            stamp = self.deps.prompt.stamp(request.ctx, now)
            files = [
                ImageBlock(file=ref) if ref.is_image else DocumentBlock(file=ref)
                for ref in request.attachments
            ]
            question: list[TextBlock | ImageBlock | DocumentBlock] = [
                TextBlock(text=stamp),
                *([TextBlock(text=recalled_note(request.recalled))] if request.recalled else []),
                *files,
                TextBlock(text=request.text),
            ]
            if state.unanswered:  # the message before waits for its answer too
                question.insert(0, TextBlock(text=failed_turn.ANSWER_BOTH))
                state.unanswered = False
            state.add_user(*question)
            state.turn.start = failed_turn.mark_after(state.messages, len(question))
            if self.config.output_schema and self.plan is None:  # a plan asks at its answer
                state.add_user(TextBlock(text=output.instruction(self.config.output_schema)))
        elif request.decisions is not None:
            if state.pending is None:
                yield ev.Error(message="Nothing is waiting for a decision.")
                yield StepEnd(ev.FinishReason.NOTHING_PENDING)
                return
            if request.envelope_ids:
                self.turn.envelope_ids = list(request.envelope_ids)
            decisions, note, answers = request.decisions, request.deny_note, request.answers
            async for item in self.tools.apply_decisions(decisions, note, answers):
                yield item
        elif interrupted := state.unanswered_tool_uses():
            async for item in self.tools.resume(interrupted):
                yield item
        elif self.plan is None and (kept := _kept_answer(state)) is not None:
            # Its worker stopped after the answer was saved and before the turn's end was:
            # shown again after the client's reset, never asked for (and kept) twice.
            self.final_text = kept
            yield ev.TextDelta(text=kept)
            yield StepEnd(ev.FinishReason.END_TURN)
            return
        await self.save()

    async def _judge(self) -> AsyncIterator[ev.AgentEvent]:
        """Check the answer against the run's output schema. One that does not match is
        asked for again with what is wrong, a bounded number of times (`repairing`)."""
        schema = self.config.output_schema
        assert schema is not None
        turn = self.turn
        turn.validations += 1
        verdict = await asyncio.to_thread(output.check, schema, self.final_text)
        self.repairing = not verdict.valid and turn.validations <= self.config.repair_attempts
        yield ev.Validated(
            attempt=turn.validations,
            valid=verdict.valid,
            errors=verdict.errors,
            compliance=verdict.compliance,
            repairing=self.repairing,
            answer=self.final_text[:ANSWER_SHOWN],
        )
        if verdict.valid:
            self.output = verdict.value
        elif self.repairing:
            yield ev.TextReset(reason="the answer did not match its output schema")
            self.state.add_user(TextBlock(text=output.repair_prompt(verdict.errors)))
            await self.save()

    async def iterate(self) -> Step:
        """One model call and the tools it asked for."""
        if self.cancel is not None and self.cancel.is_set():
            yield StepEnd(ev.FinishReason.CANCELLED)
            return
        request = self._next_request()
        if isinstance(request, StepEnd):
            yield request
            return
        self.turn.iteration += 1
        yield ev.Iteration(number=self.turn.iteration, model=request.model)
        async for fitted in self._fit(request):
            if isinstance(fitted, ModelRequest):
                request = fitted
            else:
                yield fitted
        yield ev.StateChanged(layer="turn", state=ev.TurnState.PLANNING)
        outcome = ModelOutcome()
        async for part in self._asked(request):
            if isinstance(part, ModelOutcome):
                outcome = part
            else:
                yield part
        self.model = outcome.model  # a fallback that answered answers the rest of the turn
        yield ev.ModelAnswered(
            model=outcome.model, usage=outcome.usage, finish_reason=outcome.finish_reason
        )
        async for item in self._observe(outcome):
            yield item

    def _next_request(self) -> ModelRequest | StepEnd:
        """The next model call's request, or the end of a turn at its step cap or with no
        room left in its token budget (`bot.agent.budget`)."""
        cap = self.config.max_steps or self.deps.settings.max_iterations
        if self.turn.iteration >= cap:
            self._notice(
                f"I stopped after {cap} steps without a final answer. "
                "Tell me how to go on, or ask a narrower question."
            )
            return StepEnd(ev.FinishReason.MAX_ITERATIONS)
        request = budget.within(self.config.token_budget, self.turn.usage, self._request())
        if request is None:
            self._notice(budget.notice(self.config.token_budget or 0))
            return StepEnd(ev.FinishReason.BUDGET_SPENT)
        return request

    async def _asked(self, request: ModelRequest) -> AsyncIterator[ev.AgentEvent | ModelOutcome]:
        """The call, and once more if its model refused the images; the outcome last."""
        outcome = ModelOutcome()
        async for part in self._call(request):
            if isinstance(part, ModelOutcome):
                outcome = part
            else:
                yield part
        if outcome.rejected and request.images and carries_images(self.state.messages):
            # A model without vision refuses images: asked again, each one is a sentence,
            # as it is from now on in this session (the context as a fallback left it).
            self.state.blind.append(request.model)
            again = replace(request, images=False, messages=self.state.messages)
            async for part in self._call(again):
                if isinstance(part, ModelOutcome):
                    outcome = part
                else:
                    yield part
            self.unseen = outcome.error is None
        yield outcome

    def _call(self, request: ModelRequest) -> AsyncIterator[ev.AgentEvent | ModelOutcome]:
        deps = self.deps
        return call_model(
            deps.provider, request, deps.retry, deps.sleep, self.cancel,
            shown=self.reasoning, fallbacks=deps.fallbacks, fit=self._fit,
        )  # fmt: skip

    async def _observe(self, outcome: ModelOutcome) -> Step:
        """Keep what the model said, then run the tools it asked for."""
        self.turn.usage += outcome.usage
        if outcome.error is not None:
            said, self.state.unanswered = failed_turn.mended(
                self.state.messages, self.turn.start, outcome.error, rejected=outcome.rejected
            )
            yield ev.Error(message=said, cause=outcome.error)
            yield StepEnd(ev.FinishReason.ERROR)
            return
        calls = [] if outcome.finish_reason is None else outcome.calls
        content: list[Block] = [TextBlock(text=outcome.text)] if outcome.text else []
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
        if content:  # its thinking first, as the API wants it back; alone, it is not kept
            self.state.messages.append(
                Message(
                    role="assistant",
                    content=[*outcome.thoughts, *content],
                    usage=outcome.usage,
                    model=outcome.model,
                )
            )
        self.final_text = outcome.text
        await self.save()
        if outcome.finish_reason is None:
            yield StepEnd(ev.FinishReason.CANCELLED)
            return
        if not calls:
            yield StepEnd(outcome.finish_reason)
            return
        async for item in self.tools.run([b for b in content if isinstance(b, ToolUseBlock)]):
            if isinstance(item, StepEnd) and item.notice:
                self._notice(item.notice)
            yield item
        await self.save()

    async def _fit(self, request: ModelRequest) -> AsyncIterator[ev.AgentEvent | ModelRequest]:
        """`request` with the context folded for the window of the model it names (the
        turn's, or a fallback's that may be smaller), after the events of that; last."""
        async for event in self._compact(request):
            yield event
        if request.messages is not self.state.messages:
            request = replace(request, messages=self.state.messages)
        yield request

    async def _compact(self, request: ModelRequest) -> AsyncIterator[ev.AgentEvent]:
        """At most once per model call (and once more for a fallback it is handed to): fold
        older turns when the request is over its model's budget."""
        overhead = overhead_tokens(request)
        compactor, model = self.deps.compactor, request.model
        sizes = self.state.per_message.setdefault("size", context_sizes())
        if not compactor.needed(self.state.messages, overhead, model, sizes):
            return
        yield ev.StateChanged(layer="turn", state=ev.TurnState.COMPACTING)
        result = await compactor.compact(self.state.messages, overhead, model)
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
        model = self.model or self.config.model or self.request.model or deps.model
        return ModelRequest(
            model=model,
            system=deps.prompt.system(
                self.request.ctx,
                deps.clock(),
                self.request.memory,
                self.request.chat_rules.instruction,
                self.request.chat_rules.skills_off,
            ),
            messages=self.state.messages,
            tools=deps.tools.specs,
            max_tokens=deps.settings.max_tokens,
            temperature=_either(self.config.temperature, deps.settings.temperature),
            top_p=_either(self.config.top_p, deps.settings.top_p),
            reasoning=None if self.reasoning == "off" else deps.settings.reasoning_effort,
            show_thinking=self.reasoning in ("on", "stream"),
            images=model not in self.state.blind,
            per_message=self.state.per_message,
        )

    def _notice(self, text: str) -> None:
        """A closing line from Parley itself, shown to the user and kept in the context; it
        starts a paragraph of its own after text the model was cut off in."""
        self.state.messages.append(Message(role="assistant", content=[TextBlock(text=text)]))
        self.notice = f"\n\n{text}" if self.final_text else text
        self.final_text = text

    async def _end(self, finish: ev.FinishReason | str) -> AsyncIterator[ev.AgentEvent]:
        if self.unseen:  # told, not kept in the context: the model knows from the sentences
            yield ev.TextDelta(text=f"\n\n_{UNSEEN_NOTE}_")
        if self.notice:
            yield ev.TextDelta(text=self.notice)
        turn = self.turn
        if finish != ev.FinishReason.AWAITING_CONFIRMATION:
            self.state.turn = None
        self.state.finished = [*self.request.envelope_ids, *self.joined]
        failed = finish == ev.FinishReason.ERROR
        yield ev.StateChanged(
            layer="turn", state=ev.TurnState.FAILED if failed else ev.TurnState.COMPLETED
        )
        await self.save()
        yield ev.Completed(
            finish_reason=finish,
            iterations=turn.iteration,
            usage=turn.usage,
            text=self.final_text,
            output=self.output,
            model=self.model,
            config=ran_with(self.deps, self.request, self.config, self.reasoning),
        )


def _kept_answer(state: SessionState) -> str | None:
    """The final answer a resumed turn already holds: its last message is the model's, with
    text and no tool call. A turn's own question is saved before any answer, so that
    message is this turn's."""
    last = state.messages[-1] if state.turn is not None and state.messages else None
    if last is None or last.role != "assistant" or last.tool_uses or not last.text:
        return None
    return last.text


def _configured(deps: AgentDeps, config: RunConfig, off: frozenset[str]) -> AgentDeps:
    """The loop's parts as the run's config changes them: its tools, less those switched
    `off` in its chat, and its retries."""
    if config.tools is not None:
        deps = replace(deps, tools=deps.tools.only(config.tools))
    if off:
        deps = replace(deps, tools=deps.tools.without(off))
    if config.retry is not None:
        deps = replace(deps, retry=replace(deps.retry, attempts=config.retry.attempts))
    return deps


def _either(run: float | None, deployment: float | None) -> float | None:
    """A run's own sampling setting, else the deployment's (None: the API's default)."""
    return run if run is not None else deployment
