"""A run's trace as GenAI spans: names, parent links, attributes, times, statuses, and what
stays out of them (content by default, secrets always)."""

from __future__ import annotations

import itertools
from dataclasses import replace

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from bot.store.outcome import UNANSWERED, status_of
from bot.telemetry.spans import SpanOptions, run_spans
from bot.trace.builder import REDACTED, TraceBuilder
from bot.vocabulary import events as ev
from bot.vocabulary.helpers import helper_envelope_id, helper_session
from bot.vocabulary.runs import RunRecord, SessionInfo, run_id
from bot.vocabulary.usage import Usage

SECRET = "sk-ant-very-secret-key-0123456789"
START = 1_800_000_000.0


def options(content: bool = False) -> SpanOptions:
    return SpanOptions(Resource.create({"service.name": "parley"}), lambda m: "anthropic",
                       content, (SECRET,))  # fmt: skip


def record_of(*events: ev.AgentEvent, error: str | None = None) -> RunRecord:
    ticks = itertools.count()
    builder = TraceBuilder(clock=lambda: START + next(ticks), secrets=(SECRET,))
    for event in events:
        builder.see(event)
    done = events[-1]
    assert isinstance(done, ev.Completed)
    return RunRecord(
        where=SessionInfo("http:abc", "http"), envelope_ids=["m1"], trigger="message", sender="ann",
        model="claude-test", finish_reason=done.finish_reason, iterations=done.iterations,
        usage=done.usage, started_at=START - 1, finished_at=START + 100, error=error,
        trace=builder.trace,
    )  # fmt: skip


def spans_of(record: RunRecord, content: bool = False) -> list[ReadableSpan]:
    status = status_of(record.finish_reason)
    return run_spans(record, status, status in UNANSWERED, options(content))


def answered(model: str, usage: Usage, finish: str | None) -> ev.ModelAnswered:
    return ev.ModelAnswered(model=model, usage=usage, finish_reason=finish)


TOOL_RUN = (
    ev.Iteration(number=1, model="claude-test"),
    answered("claude-test", Usage(100, 20, 30, 5), "tool_use"),
    ev.ToolCallStart(call_id="toolu_1", name="calculator", arguments={"x": SECRET}),
    ev.ToolCallResult(call_id="toolu_1", name="calculator", content=f"42 {SECRET}"),
    ev.Iteration(number=2, model="claude-test"),
    answered("claude-test", Usage(150, 10), "end_turn"),
    ev.Completed(finish_reason="end_turn", iterations=2, usage=Usage(250, 30, 30, 5)),
)


def test_a_run_is_an_invoke_agent_span_with_its_calls_and_tools_under_it() -> None:
    record = record_of(*TOOL_RUN)
    root, chat1, tool, chat2 = spans_of(record)
    assert root.name == "invoke_agent parley"
    assert [chat1.name, tool.name, chat2.name] == [
        "chat claude-test", "execute_tool calculator", "chat claude-test",
    ]  # fmt: skip
    # one trace, the run's own id; every call a child of the run's span
    assert root.context is not None and root.parent is None
    assert f"{root.context.trace_id:032x}" == record.id == run_id("http:abc", "m1")
    for child in (chat1, tool, chat2):
        assert child.context is not None and child.parent is not None
        assert child.context.trace_id == root.context.trace_id
        assert child.parent.span_id == root.context.span_id
    assert len({s.context.span_id for s in (root, chat1, tool, chat2) if s.context}) == 4
    assert root.attributes is not None
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.conversation.id"] == "http:abc"
    assert root.attributes["parley.run.id"] == record.id
    assert root.attributes["parley.run.outcome"] == "completed"
    assert root.attributes["gen_ai.usage.input_tokens"] == 285  # cached tokens counted in
    assert root.status.status_code == StatusCode.OK


def test_a_model_call_span_has_its_own_tokens_model_and_finish_reason() -> None:
    _, chat1, _, chat2 = spans_of(record_of(*TOOL_RUN))
    assert chat1.attributes is not None and chat2.attributes is not None
    assert chat1.attributes["gen_ai.operation.name"] == "chat"
    assert chat1.attributes["gen_ai.provider.name"] == "anthropic"
    assert chat1.attributes["gen_ai.request.model"] == "claude-test"
    assert chat1.attributes["gen_ai.response.model"] == "claude-test"
    assert chat1.attributes["gen_ai.usage.input_tokens"] == 135
    assert chat1.attributes["gen_ai.usage.output_tokens"] == 20
    assert chat1.attributes["gen_ai.usage.cache_read.input_tokens"] == 30
    assert chat1.attributes["gen_ai.usage.cache_creation.input_tokens"] == 5
    assert chat1.attributes["gen_ai.response.finish_reasons"] == ["tool_use"]
    assert chat2.attributes["gen_ai.usage.input_tokens"] == 150
    assert "gen_ai.usage.cache_read.input_tokens" not in chat2.attributes
    assert chat2.attributes["gen_ai.response.finish_reasons"] == ["end_turn"]


def test_times_are_the_traces_own() -> None:
    root, chat1, tool, chat2 = spans_of(record_of(*TOOL_RUN))
    seconds = 1_000_000_000
    assert (root.start_time, root.end_time) == ((START - 1) * seconds, (START + 100) * seconds)
    # the builder's clock ticks once per event: the call starts at 0, ends when it answered
    assert (chat1.start_time, chat1.end_time) == (START * seconds, (START + 1) * seconds)
    assert (tool.start_time, tool.end_time) == ((START + 2) * seconds, (START + 3) * seconds)
    assert chat2.start_time == (START + 4) * seconds


def test_a_tool_span_names_its_call_and_keeps_content_out_by_default() -> None:
    _, _, tool, _ = spans_of(record_of(*TOOL_RUN))
    assert tool.attributes is not None
    assert tool.attributes["gen_ai.tool.name"] == "calculator"
    assert tool.attributes["gen_ai.tool.call.id"] == "toolu_1"
    assert "gen_ai.tool.call.arguments" not in tool.attributes
    assert "gen_ai.tool.call.result" not in tool.attributes
    assert tool.status.status_code == StatusCode.UNSET


def test_content_when_asked_is_the_traces_preview_without_secrets() -> None:
    spans = spans_of(record_of(*TOOL_RUN), content=True)
    tool = spans[2]
    assert tool.attributes is not None
    assert tool.attributes["gen_ai.tool.call.result"] == f"42 {REDACTED}"
    assert REDACTED in str(tool.attributes["gen_ai.tool.call.arguments"])
    for span in spans:
        assert SECRET not in repr(dict(span.attributes or {}))


def test_a_failed_tool_call_has_an_error_status() -> None:
    record = record_of(
        ev.Iteration(number=1, model="claude-test"),
        ev.ToolCallStart(call_id="t", name="run_python", arguments={}),
        ev.ToolCallResult(call_id="t", name="run_python", content="boom", is_error=True),
        ev.Iteration(number=2, model="claude-test"),
        ev.Completed(finish_reason="end_turn", iterations=2, usage=Usage(1, 1)),
    )
    tool = spans_of(record)[2]
    assert tool.status.status_code == StatusCode.ERROR
    assert tool.status.description == "the tool failed"  # no content by default
    assert tool.attributes is not None and tool.attributes["error.type"] == "tool_error"
    assert spans_of(record, content=True)[2].status.description == "boom"


def test_a_failed_run_and_its_failed_call_have_error_statuses_saying_why() -> None:
    why = f"overloaded (key {SECRET})"
    record = record_of(
        ev.Iteration(number=1, model="claude-test"),
        ev.Retrying(attempt=1, delay=0.5, error="overloaded"),
        answered("claude-test", Usage(), None),  # as the loop says it of a failed call
        ev.Error(message="The model is unavailable", cause=why),
        ev.Completed(finish_reason="error", iterations=1, usage=Usage()),
        error=why,
    )
    root, chat = spans_of(record)
    assert chat.attributes is not None and "gen_ai.response.model" not in chat.attributes
    assert root.status.status_code == StatusCode.ERROR
    assert root.attributes is not None and root.attributes["parley.run.outcome"] == "failed"
    assert chat.status.status_code == StatusCode.ERROR
    for span in (root, chat):
        assert span.status.description == f"overloaded (key {REDACTED})"
    assert [e.name for e in chat.events] == ["parley.retry", "parley.error"]
    assert chat.events[0].attributes is not None
    assert chat.events[0].attributes["parley.attempt"] == 1


def test_every_run_that_did_not_answer_is_an_error_and_one_that_waits_is_not() -> None:
    for reason in ("timed_out", "max_iterations", "doom_loop", "cancelled", "poisoned"):
        record = record_of(ev.Iteration(number=1), ev.Completed(
            finish_reason=reason, iterations=1, usage=Usage()))  # fmt: skip
        root = spans_of(record)[0]
        assert root.status.status_code == StatusCode.ERROR, reason
        assert root.attributes is not None
        assert root.attributes["error.type"] == status_of(reason)
    waiting = record_of(ev.Iteration(number=1), ev.Completed(
        finish_reason="awaiting_confirmation", iterations=1, usage=Usage()))  # fmt: skip
    assert spans_of(waiting)[0].status.status_code == StatusCode.OK


def test_a_helpers_run_nests_under_its_parents_delegate_call() -> None:
    helper_session_key = helper_session("http:abc", "toolu_d")
    helper = run_id(helper_session_key, helper_envelope_id("toolu_d"))
    parent = record_of(
        ev.Iteration(number=1),
        ev.ToolCallStart(call_id="toolu_d", name="delegate", arguments={"task": "look"}),
        ev.ToolCallResult(call_id="toolu_d", name="delegate", content=f"Found. (run {helper})"),
        ev.Completed(finish_reason="end_turn", iterations=1, usage=Usage()),
    )
    root, _, delegate = spans_of(parent)
    assert delegate.attributes is not None
    assert delegate.attributes["parley.helper.run.id"] == helper
    alone = record_of(
        ev.Iteration(number=1), ev.Completed(finish_reason="end_turn", iterations=1, usage=Usage())
    )
    child = replace(
        alone,
        where=SessionInfo(helper_session_key, "http"),
        envelope_ids=[helper_envelope_id("toolu_d")],
        parent_run=parent.id,
    )
    assert child.id == helper
    helper_root, helper_chat = spans_of(child)
    assert root.context is not None and delegate.context is not None
    assert helper_root.context is not None and helper_root.parent is not None
    # the helper's spans are in its parent's trace, its run under the call that started it
    assert helper_root.context.trace_id == root.context.trace_id
    assert helper_root.parent.span_id == delegate.context.span_id
    assert helper_chat.parent is not None
    assert helper_chat.parent.span_id == helper_root.context.span_id
    assert helper_root.attributes is not None
    assert helper_root.attributes["parley.run.id"] == helper
    assert helper_root.attributes["parley.parent.run.id"] == parent.id
    (link,) = delegate.links
    assert link.context.span_id == helper_root.context.span_id


def test_the_same_run_gives_the_same_spans() -> None:
    first = [s.context.span_id for s in spans_of(record_of(*TOOL_RUN)) if s.context]
    again = [s.context.span_id for s in spans_of(record_of(*TOOL_RUN)) if s.context]
    assert first == again
