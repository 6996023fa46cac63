"""A run's own config through the real SDKs: its output schema checked and repaired, its
tools, temperature, step cap and retries."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from bot.agent.output import check
from bot.vocabulary import events as ev
from bot.vocabulary.run_config import RetryConfig, RunConfig
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type, shown_text
from tests.fakes.llm import Fail, FakeLLM, Reply, ToolCallSpec

SCHEMA = {
    "type": "object",
    "required": ["city", "population"],
    "properties": {"city": {"type": "string"}, "population": {"type": "integer", "minimum": 0}},
    "additionalProperties": False,
}


async def test_an_answer_that_matches_the_schema_is_its_output(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    fake_llm.enqueue(Reply(text='```json\n{"city": "Oslo", "population": 709000}\n```'))
    events = await collect(
        make_agent(), SessionState(), "Oslo?", config=RunConfig(output_schema=SCHEMA)
    )
    done = completed(events)
    assert done.finish_reason == "end_turn"
    assert done.output == {"city": "Oslo", "population": 709000}
    [verdict] = of_type(events, ev.Validated)
    assert verdict.valid and verdict.attempt == 1 and not verdict.repairing
    assert json.dumps(SCHEMA) in fake_llm.requests[0].last_user_text()


async def test_a_wrong_answer_is_repaired_with_its_errors(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    fake_llm.enqueue(
        Reply(text='{"city": "Oslo", "population": "many"}'),
        Reply(text='{"city": "Oslo", "population": 709000}'),
    )
    events = await collect(
        make_agent(), SessionState(), "Oslo?", config=RunConfig(output_schema=SCHEMA)
    )
    first, second = of_type(events, ev.Validated)
    assert not first.valid and first.repairing
    assert first.errors == ["at $.population: 'many' is not of type 'integer'"]
    assert second.valid and second.attempt == 2
    assert "'many' is not of type 'integer'" in fake_llm.requests[1].last_user_text()
    assert shown_text(events) == '{"city": "Oslo", "population": 709000}'  # reset, then again
    assert completed(events).output == {"city": "Oslo", "population": 709000}


async def test_repairs_are_bounded(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    fake_llm.enqueue(Reply(text="Oslo, about 700k"), Reply(text="still prose"))
    config = RunConfig(output_schema=SCHEMA, repair_attempts=1)
    events = await collect(make_agent(), SessionState(), "Oslo?", config=config)
    verdicts = of_type(events, ev.Validated)
    assert [(v.valid, v.repairing) for v in verdicts] == [(False, True), (False, False)]
    assert verdicts[0].errors == ["the answer is not JSON"]
    done = completed(events)
    assert done.finish_reason == ev.FinishReason.INVALID_OUTPUT and done.output is None
    assert len(fake_llm.requests) == 2


async def test_a_run_offers_only_its_tools_and_refuses_others(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCallSpec("current_time", {"timezone": "UTC"})]),
        Reply(text="I may not tell the time."),
    )
    config = RunConfig(tools=("calculator",))
    events = await collect(make_agent(), SessionState(), "time?", config=config)
    offered = fake_llm.requests[0].body["tools"]
    names = [t.get("name") or t["function"]["name"] for t in offered]
    assert names == ["calculator"]
    [result] = of_type(events, ev.ToolCallResult)
    assert result.is_error and "unknown tool" in result.content.lower()


async def test_temperature_and_step_cap_are_the_runs(
    fake_llm: FakeLLM, make_agent: MakeAgent, api: str
) -> None:
    call = ToolCallSpec("calculator", {"expression": "1+1"})
    fake_llm.enqueue(Reply(tool_calls=[call]), Reply(tool_calls=[call]), Reply(text="never"))
    config = RunConfig(temperature=0.2, max_steps=1)
    events = await collect(make_agent(), SessionState(), "go", config=config)
    assert completed(events).finish_reason == ev.FinishReason.MAX_ITERATIONS
    assert len(fake_llm.requests) == 1
    assert fake_llm.requests[0].body.get("temperature") == 0.2


async def test_sampling_is_the_deployment_s_unless_the_run_says(
    fake_llm: FakeLLM, make_agent: MakeAgent, api: str
) -> None:
    """PARLEY_TEMPERATURE and PARLEY_TOP_P for every call, a run's own over them, none sent
    where none is set (each API's range: OpenAI's goes to 2)."""
    fake_llm.responder = lambda _request: Reply(text="ok")
    await collect(make_agent(), SessionState(), "go")
    deployment = 1.5 if api == "openai" else 0.7
    sampled = make_agent(temperature=deployment, top_p=0.9)
    await collect(sampled, SessionState(), "go")
    await collect(sampled, SessionState(), "go", config=RunConfig(temperature=0.1, top_p=0.5))
    sent = [(r.body.get("temperature"), r.body.get("top_p")) for r in fake_llm.requests]
    assert sent == [(None, None), (deployment, 0.9), (0.1, 0.5)]


async def test_retries_are_the_runs(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    fake_llm.enqueue(Fail(status=529, error_type="overloaded_error"), Reply(text="late"))
    config = RunConfig(retry=RetryConfig(attempts=1))
    events = await collect(make_agent(), SessionState(), "go", config=config)
    assert completed(events).finish_reason == ev.FinishReason.ERROR
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "nonsense"}, "not a valid JSON Schema"),
        ({"properties": {"a": {"type": "string"}}, "x": "y" * 20_000}, "larger than"),
        ({"items": {"items": {"items": {"items": {"items": {"items": {"items": {}}}}}}}}, None),
    ],
)
def test_a_schema_is_checked_when_the_run_is_asked_for(
    schema: dict[str, object], problem: str | None
) -> None:
    nested: dict[str, object] = {}
    for _ in range(20):
        nested = {"items": nested}
    if problem is None:
        RunConfig(output_schema=schema)  # seven levels: fine
        schema, problem = nested, "nests deeper"
    with pytest.raises(ValidationError, match=problem):
        RunConfig(output_schema=schema)


def test_the_answer_is_found_in_prose_and_fences() -> None:
    assert check(SCHEMA, 'Here: {"city": "A", "population": 1} done').value == {
        "city": "A",
        "population": 1,
    }
    verdict = check(SCHEMA, '{"city": 5, "extra": true}')
    assert not verdict.valid
    assert verdict.errors == [
        "at $: 'population' is a required property",
        "at $: Additional properties are not allowed ('extra' was unexpected)",
        "at $.city: 5 is not of type 'string'",
    ]


async def test_a_run_stops_at_its_own_timeout(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    fake_llm.enqueue(Reply(text="word " * 200, chunk_size=5, delay=0.05))  # about 2 s
    events = await collect(make_agent(), SessionState(), "go", config=RunConfig(timeout=0.5))
    assert completed(events).finish_reason == ev.FinishReason.TIMED_OUT


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ('{"max_steps": true}', ("max_steps",)),
        ('{"max_steps": "5"}', ("max_steps",)),
        ('{"max_steps": 2.5}', ("max_steps",)),
        ('{"repair_attempts": "2"}', ("repair_attempts",)),
        ('{"repair_attempts": false}', ("repair_attempts",)),
        ('{"temperature": true}', ("temperature",)),
        ('{"temperature": "0.5"}', ("temperature",)),
        ('{"temperature": NaN}', ("temperature",)),
        ('{"timeout": "30"}', ("timeout",)),
        ('{"timeout": Infinity}', ("timeout",)),
        ('{"retry": {"attempts": true}}', ("retry", "attempts")),
        ('{"retry": {"attempts": "3"}}', ("retry", "attempts")),
        ('{"mode": 1}', ("mode",)),
        ('{"model": 5}', ("model",)),
        ('{"tools": "calculator"}', ("tools",)),
        ('{"tools": [1]}', ("tools", 0)),
        ('{"output_schema": "{}"}', ("output_schema",)),
    ],
)
def test_every_field_takes_only_its_json_type(raw: str, where: tuple[str | int, ...]) -> None:
    """As a request body reads it (Python's json, which also reads NaN) and as JSON."""
    with pytest.raises(ValidationError) as as_python:
        RunConfig.model_validate(json.loads(raw))
    with pytest.raises(ValidationError) as as_json:
        RunConfig.model_validate_json(raw)
    for caught in (as_python, as_json):
        assert [problem["loc"] for problem in caught.value.errors()] == [where]


def test_a_whole_number_is_a_temperature_and_a_list_is_the_tools() -> None:
    raw = '{"temperature": 1, "timeout": 30, "tools": ["calculator"], "retry": {"attempts": 2}}'
    for config in (RunConfig.model_validate(json.loads(raw)), RunConfig.model_validate_json(raw)):
        assert config.temperature == 1.0 and config.timeout == 30.0
        assert config.tools == ("calculator",) and config.retry == RetryConfig(attempts=2)
