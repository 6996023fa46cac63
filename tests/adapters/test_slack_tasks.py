"""A streamed Slack reply's tasks: each helper and each plan step a task of its own, sent only
when it changes."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.messages.chunk import TaskUpdateChunk

from adapters.slack.tasks import TASK_TEXT, TaskBoard
from bot.vocabulary import events as ev


def sent(board: TaskBoard, chunks: list[TaskUpdateChunk]) -> list[dict[str, Any]]:
    board.mark(chunks)
    return [chunk.to_dict() for chunk in chunks]


def start(call_id: str, task: str) -> ev.ToolCallStart:
    return ev.ToolCallStart(call_id=call_id, name="delegate", arguments={"task": task})


def result(call_id: str, content: str, *, is_error: bool = False) -> ev.ToolCallResult:
    return ev.ToolCallResult(call_id=call_id, name="delegate", content=content, is_error=is_error)


def test_a_helper_runs_then_completes_with_its_answer_once() -> None:
    board = TaskBoard()
    assert sent(board, board.helper(start("toolu_1", "look up\n  the  number"))) == [
        {
            "type": "task_update",
            "id": "helper-toolu_1",
            "title": "look up the number",
            "status": "in_progress",
        }
    ]
    assert board.helper(start("toolu_1", "look up the number")) == []  # the same start again
    answer = "[helper run " + "a" * 32 + "]\nIt is 42."
    (done,) = sent(board, board.helper(result("toolu_1", answer)))
    assert (done["status"], done["output"], done["title"]) == (
        "complete",
        "It is 42.",
        "look up the number",
    )
    assert board.helper(result("toolu_1", answer)) == []  # a repeated result adds nothing
    assert board.helper(start("toolu_1", "look up the number")) == []  # never running again


def test_a_failed_helper_is_an_error_that_says_why_within_slacks_limit() -> None:
    board = TaskBoard()
    sent(board, board.helper(start("c1", "x" * 400)))
    (failed,) = sent(
        board, board.helper(result("c1", "The helper ended: " + "why " * 100, is_error=True))
    )
    assert failed["status"] == "error"
    assert failed["output"].startswith("The helper ended: why why")
    assert len(failed["output"]) == len(failed["title"]) == TASK_TEXT
    assert board.helper(result("c9", "no start was seen")) == []


def test_a_plan_and_helpers_in_one_reply_keep_apart() -> None:
    board = TaskBoard()
    steps = [
        ev.PlanStep(id=1, title="Find it", status="running"),
        ev.PlanStep(id=2, title="Use it"),
    ]
    first = sent(board, board.plan(ev.PlanUpdated(steps=steps)))
    helper = sent(board, board.helper(start("1", "find it for me")))
    assert [c["id"] for c in first] == ["1", "2"] and helper[0]["id"] == "helper-1"
    steps[0] = ev.PlanStep(id=1, title="Find it", status="done", result="found")
    (changed,) = sent(board, board.plan(ev.PlanUpdated(steps=steps)))  # step 2 did not change
    assert (changed["id"], changed["status"], changed["output"]) == ("1", "complete", "found")
    (ended,) = sent(board, board.helper(result("1", "gone", is_error=True)))
    assert (ended["id"], ended["status"]) == ("helper-1", "error")
    assert board.plan(ev.PlanUpdated(steps=steps)) == []
