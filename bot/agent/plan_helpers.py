"""The steps of a plan that run as helpers: when they may, the `delegate` calls Parley makes
for them, and their answers read back as the steps' results.

Steps that are ready at the same time need nothing from each other (a step is ready once the
steps it depends on are done), so where the turn may start helpers, two or more of them go to
helpers at once instead of one after another in the conversation. The calls are Parley's,
not the model's, but they are ordinary tool calls of the turn (`bot.agent.tool_step`): the
policy and approvals apply, the trace and the platforms show them, their helpers' tokens are
the turn's. Each call's id is derived from the turn and the step, never drawn at random, and
kept with the step: a turn resumed after an approval or a crash makes the same call again and
so finds the same helper (`bot.vocabulary.helpers`), running or finished.

A helper sees nothing of the conversation but its task, so the task carries what it needs,
within bounds: the step, the person's request, and what the steps before found.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from bot.agent.tool_step import ToolStep
from bot.vocabulary import events as ev
from bot.vocabulary.helpers import TOOL, depth_of
from bot.vocabulary.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from bot.vocabulary.state import ContextMark, TurnProgress

FAILED = "FAILED:"  # how a step's account begins when the step could not be done
REQUEST_CHARS = 4000  # of the person's request, in a helper's task
FOUND_CHARS = 4000  # of what the steps before found, in a helper's task
HELPER_HEAD = "[helper run "  # the line a helper's answer begins with (`bot.session.helpers`)
TASK = (
    "{title}\n\n"
    "This is step {id} of a plan made to answer the request below; other steps are done "
    "elsewhere. Do only this step, with the tools you have. Answer with what you found or "
    "did, complete enough to be used by someone who sees only your answer. If the step "
    f"cannot be done, begin your answer with {FAILED} and say why.\n\n"
    "The request:\n{request}"
)
NO_REQUEST = "(not at hand: the step's title says what is needed)"
NO_RESULT = "the helper's call ended without a result"


def offered(tools: ToolStep, depth: int) -> bool:
    """Whether this turn may start helpers: `delegate` is among its tools (its run's, less
    those switched off in its chat), its session is less than `depth` helpers deep
    (PARLEY_DELEGATE_DEPTH), and the policy does not refuse it to this person."""
    tool = tools.registry.get(TOOL)
    if tool is None or depth_of(tools.ctx.session_key) >= depth:
        return False
    return tools.policy.decide(tool, TOOL, {"task": ""}, tools.caller) != "deny"


def call_id(turn: TurnProgress, step: ev.PlanStep) -> str:
    """The id of the call that runs `step` as a helper: the same for the same turn and step
    in any process, and one the model APIs take (letters, digits, `_`)."""
    start = turn.start.model_dump() if turn.start is not None else None
    turn_key = json.dumps([turn.envelope_ids, start], sort_keys=True)
    digest = hashlib.sha256(turn_key.encode()).hexdigest()[:20]
    return f"plan_{digest}_{step.id}"


def calls(group: Sequence[ev.PlanStep], plan: Sequence[ev.PlanStep], request: str) -> Message:
    """The message in which the turn hands each step of `group` to a helper."""
    content = [
        ToolUseBlock(id=step.call_id, name=TOOL, input={"task": task(step, plan, request)})
        for step in group
    ]
    return Message(role="assistant", content=list(content))


def task(step: ev.PlanStep, plan: Sequence[ev.PlanStep], request: str) -> str:
    """What a helper is asked: the step first (its status line shows the start), then the
    request and what the steps before found, each cut to its bound."""
    said = TASK.format(title=step.title, id=step.id, request=_cut(request, REQUEST_CHARS))
    return said + _found(step, plan)


def _found(step: ev.PlanStep, plan: Sequence[ev.PlanStep]) -> str:
    """The results of the steps done so far, those `step` depends on first."""
    done = [s for s in plan if s.status == "done" and s.result]
    done.sort(key=lambda s: s.id not in step.depends_on)
    lines: list[str] = []
    room = FOUND_CHARS
    for earlier in done:
        line = f"- Step {earlier.id}, {earlier.title}: {earlier.result}"
        if len(line) > room:
            break
        lines.append(line)
        room -= len(line)
    return "\n\nWhat the steps before found:\n" + "\n".join(lines) if lines else ""


def request_of(messages: Sequence[Message], start: ContextMark | None, until: str) -> str:
    """The person's words that began the turn: the text of its first message from its mark,
    up to the block `until` (the plan's own instruction, which follows them)."""
    first = next((m for m in messages if start is not None and m.id == start.message), None)
    if first is None or start is None:  # folded away by compaction
        return NO_REQUEST
    words: list[str] = []
    for block in first.content[start.blocks :]:
        if isinstance(block, TextBlock):
            if block.text == until:
                break
            words.append(block.text)
    return "\n".join(words) or NO_REQUEST


def results(messages: Sequence[Message], ids: Sequence[str]) -> dict[str, ToolResultBlock]:
    """The results of the calls `ids` in the context, from its latest messages back."""
    wanted, found = set(ids), dict[str, ToolResultBlock]()
    for message in reversed(messages):
        for block in message.tool_results:
            if block.tool_use_id in wanted:
                found.setdefault(block.tool_use_id, block)
        if len(found) == len(wanted):
            break
    return found


def answer_of(result: ToolResultBlock | None) -> tuple[str, bool]:
    """A helper's call result as its step's account, and whether the call failed (the
    helper's own FAILED is read as for any step)."""
    if result is None:
        return NO_RESULT, True
    text = result.content
    if text.startswith(HELPER_HEAD):
        text = text.partition("\n")[2]
    return text, result.is_error


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"
