"""Presses of the approval buttons in Slack: acknowledged at once, shown to everyone.

The decision itself is shared by every platform (`adapters.chat.decisions`) and is queued before
Slack gets its answer; here is only how Slack shows it, in the background: an ephemeral note
for a press that changed nothing, and the prompt updated to say what was decided and by whom.
A press on an `ask_user` prompt is answered the same way (`adapters.chat.questions`), and the
prompt is drawn again: the answer so far, the next question's options, or who answered.
"""

from __future__ import annotations

from typing import Any

from adapters.chat.decisions import Press, PromptState, decide
from adapters.chat.questions import QuestionAnswer, QuestionPress, answer_press
from adapters.slack import ask, confirm
from adapters.slack.deps import IngressDeps
from adapters.slack.place import PLATFORM, sender_of, user_of


async def on_press(ack: Any, body: dict[str, Any], deps: IngressDeps) -> None:
    await ack()
    action = body["actions"][0]
    choice = confirm.ACTIONS[action["action_id"]]
    confirmation_id = str(action.get("value", ""))
    user = str(body["user"]["id"])
    who = sender_of(user, body["user"].get("name", ""), deps.settings)
    answer = await decide(
        Press(confirmation_id, choice, who, PLATFORM), deps.confirmations, deps.mailbox
    )
    container = body.get("container", {})
    if answer.alert:
        deps.note(
            _team(body), container.get("channel_id"), user, answer.text, container.get("thread_ts")
        )
    if answer.prompt is not None:
        _show_outcome(deps, body, answer.prompt)


async def on_answer_press(ack: Any, body: dict[str, Any], deps: IngressDeps) -> None:
    await ack()
    action = body["actions"][0]
    user = str(body["user"]["id"])
    container = body.get("container", {})
    parsed = ask.parse(str(action.get("action_id", "")), str(action.get("value", "")))
    if parsed is None:
        text = "This button no longer works."
        deps.note(_team(body), container.get("channel_id"), user, text, container.get("thread_ts"))
        return
    who = sender_of(user, body["user"].get("name", ""), deps.settings)
    press = QuestionPress(*parsed, person=who, platform=PLATFORM)
    answer = await answer_press(press, deps.confirmations, deps.mailbox)
    deps.note(
        _team(body), container.get("channel_id"), user, answer.text, container.get("thread_ts")
    )
    if answer.shown is not None:
        _show_answers(deps, body, answer)


def _show_answers(deps: IngressDeps, body: dict[str, Any], answer: QuestionAnswer) -> None:
    assert answer.shown is not None
    container = body.get("container", {})
    by = _mention(answer.shown.decided_by or "")
    deps.later(
        deps.calls.quietly(
            "chat.update",
            _team(body),
            channel=container.get("channel_id"),
            ts=container.get("message_ts"),
            text=ask.summary(answer.shown),
            blocks=ask.blocks(answer.shown, by),
        )
    )


def _show_outcome(deps: IngressDeps, body: dict[str, Any], state: PromptState) -> None:
    message = body.get("message") or {}
    container = body.get("container", {})
    by = _mention(state.decided_by)
    deps.later(
        deps.calls.quietly(
            "chat.update",
            _team(body),
            channel=container.get("channel_id"),
            ts=container.get("message_ts"),
            text=confirm.outcome(state.status, by),
            blocks=confirm.with_outcome(message.get("blocks", []), state.status, by),
        )
    )


def _team(body: dict[str, Any]) -> str:
    return str((body.get("team") or {}).get("id") or body["user"].get("team_id", ""))


def _mention(decided_by: str) -> str:
    """`slack:U1` as Slack shows a person; other platforms' ids as they are."""
    user = user_of(decided_by)
    return f"<@{user}>" if user is not None else decided_by
