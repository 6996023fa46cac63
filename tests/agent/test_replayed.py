"""A replay's calls that change things: each answered once, in order, by the recorded run's
same call (same tool, same arguments in any key order); any other refused, never run."""

from __future__ import annotations

from bot.agent.replayed import REFUSED, RecordedCalls
from bot.vocabulary.messages import ToolUseBlock


def call(name: str, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id=f"c-{name}-{len(arguments)}", name=name, input=arguments)


def test_the_same_call_gets_the_recorded_answers_in_order_then_a_refusal() -> None:
    recorded = RecordedCalls.of([
        ("remember", {"fact": "tea"}, "Saved #1", False),
        ("schedule_task", {"when": "in 20 minutes", "prompt": "tea"}, "Task #3", False),
        ("remember", {"fact": "tea"}, "Already kept #1", False),
        ("send_file", {"path": "a.txt"}, "No such file", True),
    ])  # fmt: skip
    first = recorded.answer(call("remember", fact="tea"))
    task = recorded.answer(call("schedule_task", prompt="tea", when="in 20 minutes"))
    second = recorded.answer(call("remember", fact="tea"))
    third = recorded.answer(call("remember", fact="tea"))
    failed = recorded.answer(call("send_file", path="a.txt"))
    other = recorded.answer(call("remember", fact="coffee"))
    assert (first.content, first.is_error) == ("Saved #1", False)
    assert task.content == "Task #3" and task.tool_use_id == "c-schedule_task-2"
    assert second.content == "Already kept #1"
    assert (third.content, third.is_error) == (REFUSED.format(name="remember"), True)
    assert (failed.content, failed.is_error) == ("No such file", True)
    assert other.content == REFUSED.format(name="remember")
