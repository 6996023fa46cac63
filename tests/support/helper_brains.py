"""A fake model's part for a turn with one helper, as the chat tests script it: the person's
message asks the parent, which hands one task to a helper; the helper makes one tool call,
then says what came of it; the parent passes that on."""

from __future__ import annotations

from collections.abc import Callable

from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec


def one_helper(
    asked: str, task: str, call: ToolCallSpec, *, first: str = "", done: str = "Done. "
) -> Callable[[RecordedRequest], Reply]:
    """The answers: a request whose first message holds `asked` is the parent's (it says
    `first` and delegates `task`, then answers `done` and the helper's answer); any other is
    the helper's (it makes `call`, then answers "helper: " and the call's result)."""

    def answer(request: RecordedRequest) -> Reply:
        results = request.tool_results()
        if asked not in str(request.body["messages"][0]["content"]):  # its first: its task
            if results:
                return Reply(text=f"helper: {results[0][1]}")
            return Reply(tool_calls=[call])
        if results:
            return Reply(text=done + results[0][1].split("\n")[-1])
        return Reply(text=first, tool_calls=[ToolCallSpec("delegate", {"task": task})])

    return answer
