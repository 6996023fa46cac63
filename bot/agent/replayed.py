"""A replay's tool calls (`bot.lab`): those that change something are answered from the
recorded run, never run again.

A call the replay may run live is one of a read-only tool that needs nobody's approval (a
search, the time, a calculation). Any other (sending a file, remembering, a task, an MCP
tool not marked read-only, `run_python`, a call that would ask a person, `delegate`, whose
helper's own calls would run outside the replay) is answered with
what the same call (the same tool, the same arguments) answered in the recorded run, each
recorded answer once and in order; a call the recorded run did not make is refused with a
sentence the model reads, so nothing happens twice and the model is never told that
something happened that did not.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.vocabulary.messages import ToolResultBlock, ToolUseBlock

REFUSED = (
    "Not run: this is a replay of a recorded run, and {name} changes things; the recorded "
    "run made no such call with these arguments, so there is no answer to give."
)


def _key(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps([name, arguments], sort_keys=True, default=str)


@dataclass
class RecordedCalls:
    """The recorded run's calls and their answers, by tool and arguments."""

    answers: dict[str, deque[tuple[str, bool]]] = field(default_factory=lambda: defaultdict(deque))

    @classmethod
    def of(cls, calls: Sequence[tuple[str, dict[str, Any], str, bool]]) -> RecordedCalls:
        """From (name, arguments, content, is_error) in the order the run made them."""
        recorded = cls()
        for name, arguments, content, is_error in calls:
            recorded.answers[_key(name, arguments)].append((content, is_error))
        return recorded

    def answer(self, call: ToolUseBlock) -> ToolResultBlock:
        """What the recorded run's same call answered, or a refusal."""
        waiting = self.answers.get(_key(call.name, dict(call.input)))
        if not waiting:
            return ToolResultBlock(
                tool_use_id=call.id, content=REFUSED.format(name=call.name), is_error=True
            )
        content, is_error = waiting.popleft()
        return ToolResultBlock(tool_use_id=call.id, content=content, is_error=is_error)
