"""`/permissions` in Slack: the tools the asker always allows in this conversation (an
admin: everyone's), a Revoke button each, seen only by the person who asked.

The list is the slash command's own answer, which Slack shows to the requester only. Slack
sends a press of such a message without the message, so after a press the list is redrawn
from the database for the presser, with the revoked grant's line in its place, and replaces
the original through the press's `response_url`. What is said is shared with Telegram
(`adapters.chat.permission_list`).
"""

from __future__ import annotations

import logging
from typing import Any

from adapters.chat import item_list, permission_list
from adapters.chat.access import refusal
from adapters.slack.confirm import literal
from adapters.slack.deps import IngressDeps
from adapters.slack.item_list import ListPress, section
from adapters.slack.place import chat_key, in_dm, person, sender_of
from bot.vocabulary.envelope import Sender

log = logging.getLogger(__name__)
ACTION = "parley_permission_revoke"
HEADER_BLOCK = "parley_permissions"


async def on_permissions(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/permissions: the list, answered privately; a stranger is told why not."""
    user = str(command.get("user_id", ""))
    if not await deps.gate.lets_in(person(user), in_dm(command)):
        await ack(refusal(person(user)))
        return
    chat = chat_key(str(command.get("team_id", "")), str(command.get("channel_id", "")))
    shown = await permission_list.listing(deps.grants, chat, sender_of(user, "", deps.settings))
    if shown is None:
        await ack(permission_list.EMPTY)
        return
    await ack(text=literal(shown.text), blocks=blocks(shown))


def blocks(shown: item_list.Listing, revoked: str | None = None) -> list[Any]:
    """A section per line, a Revoke button beside each grant; `revoked`, a line saying what
    was just revoked, at the end."""
    header, *lines = shown.lines
    made: list[Any] = [{**section(f"*{literal(header)}*"), "block_id": HEADER_BLOCK}]
    for number, line in zip([*shown.buttons, None], lines, strict=False):
        block = section(literal(line))
        if number is not None:
            block["block_id"] = f"grant:{number}"
            block["accessory"] = {
                "type": "button",
                "text": {"type": "plain_text", "text": permission_list.button_label(number)},
                "action_id": ACTION,
                "value": str(number),
            }
        made.append(block)
    if revoked is not None:
        made.append(section(literal(revoked)))
    return made


async def on_press(ack: Any, body: dict[str, Any], respond: Any, deps: IngressDeps) -> None:
    """A Revoke button: checked and done at once, the answer sent after Slack got its ack."""
    await ack()
    press = ListPress.of(body)
    chat = chat_key(press.team, press.channel)
    presser = sender_of(press.user, "", deps.settings)
    grant_id = item_list.parse_id(press.value)
    listed = grant_id is not None and press.block_id == f"grant:{grant_id}"
    answer = await permission_list.revoke(deps.grants, grant_id, chat, presser, listed_here=listed)
    deps.later(_answer(deps, respond, answer, chat, presser))


async def _answer(
    deps: IngressDeps,
    respond: Any,
    answer: permission_list.RevokeAnswer,
    chat: str,
    presser: Sender,
) -> None:
    """The list redrawn without the revoked grant, replacing the original; a note to the
    presser when the press changed nothing."""
    try:
        if answer.line is not None:
            empty = item_list.Listing([permission_list.OWN_HEADER], [])
            shown = await permission_list.listing(deps.grants, chat, presser) or empty
            redrawn = blocks(shown, revoked=answer.line)
            text = "\n".join(str(b["text"]["text"]) for b in redrawn)
            await respond(text=text, blocks=redrawn, replace_original=True)
        if answer.alert:
            await respond(
                text=literal(answer.text), response_type="ephemeral", replace_original=False
            )
    except Exception:  # the press is done; only showing it failed
        log.warning("could not answer a press of a Revoke button", exc_info=True)
