"""`/memory` in Slack: what the bot remembers here, a Forget button each, seen only by the
person who asked; `/memory search WORDS`, those the words are about, found by meaning, best
first; `/forget N`; `/memory digest on|off` (`adapters.chat.digest_commands`).

In a DM (a channel id starting with `D`) that is the person's own memories, anywhere else the
channel's. Either way the list is the slash command's own answer, which Slack shows to the
requester only, so nobody reads a person's memories over their shoulder. Each memory's
section carries its number and whose list it is in its block_id, since Slack sends a press of
an ephemeral message without the message: the list is redrawn from the database after a
press, with the forgotten memory's line in its place, and replaces the original through the
press's `response_url`. Whose memories a DM's list holds comes from that block_id and must be
the presser's; a channel's may be forgotten by anyone let in. A search's sections carry its
words too (base64url), so the list a press redraws is that search again. What is said is shared with
Telegram (`adapters.chat.memory_list`), escaped with `literal` so a memory shows as written.
"""

from __future__ import annotations

import base64
import logging
import re
from typing import Any

from adapters.chat import digest_commands, item_list, memory_list
from adapters.slack.confirm import literal
from adapters.slack.deps import IngressDeps
from adapters.slack.item_list import ListPress, let_in, section
from adapters.slack.place import chat_key, person, sender_of
from bot.memory.scope import is_private, scope_of

log = logging.getLogger(__name__)
ACTION = "parley_memory_forget"
HEADER_BLOCK = "parley_memory"
# `memory:{id}:{user}[:{words}]`: a memory's section, in the list `user` asked for (the words
# of a search, base64url).
_BLOCK = re.compile(r"memory:([1-9][0-9]{0,17}):([A-Z0-9]{1,32})(?::([A-Za-z0-9_-]{1,200}))?")
_LINE = re.compile(r"#([1-9][0-9]{0,17}) ")


def scope_in(team: str, channel: str, user: str) -> str:
    """The memories a list in `channel` holds: in a DM, `user`'s own."""
    kind = "private" if channel.startswith("D") else "channel"
    return scope_of(kind, person(user), chat_key(team, channel))


async def on_memory(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/memory: the list, answered privately; a stranger is told why not, every time."""
    asker = await let_in(ack, command, deps)
    if asker is None:
        return
    scope = scope_in(asker.team, asker.channel, asker.user)
    if (switch := digest_commands.asked_digest(asker.text)) is not None:
        who = person(asker.user)
        may_change = is_private(scope) or deps.gate.is_admin(who)
        said = await digest_commands.switched(
            deps.recall, deps.settings, scope, switch, may_change=may_change, by=who
        )
        await ack(literal(said))
        return
    try:
        words = memory_list.asked_for(asker.text)
    except ValueError as usage:
        await ack(literal(str(usage)))
        return
    shown = await _shown(deps, scope, words)
    if isinstance(shown, str):
        await ack(literal(shown))
        return
    await ack(text=literal(shown.text), blocks=blocks(shown, asker.user, words=words))


async def on_forget(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/forget N: answered privately, with the rights of a Forget button."""
    asker = await let_in(ack, command, deps)
    if asker is None:
        return
    said = await memory_list.forget_numbered(
        deps.recall.memories, deps.gate, scope_in(asker.team, asker.channel, asker.user),
        asker.text, sender_of(asker.user, "", deps.settings),
    )  # fmt: skip
    await ack(literal(said))


async def _shown(deps: IngressDeps, scope: str, words: str | None) -> item_list.Listing | str:
    """The newest memories (`words` None), or those `words` are about; or what to say."""
    if words is not None:
        return await memory_list.found(deps.recall, scope, words)
    return await memory_list.listing(deps.recall.memories, scope) or memory_list.EMPTY


def blocks(
    shown: item_list.Listing, user: str, forgotten: int | None = None, words: str | None = None
) -> list[Any]:
    """A section per line, a Forget button beside each memory; `forgotten`'s line, if given,
    goes where its number puts it in the newest-first list, last in a search's."""
    header, *lines = shown.lines
    entries = [(_number(line), line) for line in lines]
    if forgotten is not None:
        entries.append((forgotten, memory_list.forgotten_line(forgotten)))
    if words is None:
        entries.sort(key=lambda entry: -1 if entry[0] is None else -entry[0])  # "more" last
    search = "" if words is None else ":" + _encoded(words)
    made: list[Any] = [{**section(f"*{literal(header)}*"), "block_id": HEADER_BLOCK}]
    for memory_id, line in entries:
        block = section(literal(line))
        if memory_id is not None and memory_id in shown.buttons:
            block["block_id"] = f"memory:{memory_id}:{user}{search}"
            block["accessory"] = {
                "type": "button",
                "text": {"type": "plain_text", "text": memory_list.button_label(memory_id)},
                "action_id": ACTION,
                "value": str(memory_id),
            }
        made.append(block)
    return made


async def on_press(ack: Any, body: dict[str, Any], respond: Any, deps: IngressDeps) -> None:
    """A Forget button: checked and done at once, the answer sent after Slack got its ack."""
    await ack()
    press = ListPress.of(body)
    presser, channel, team = press.user, press.channel, press.team
    memory_id = item_list.parse_id(press.value)
    block = _BLOCK.fullmatch(press.block_id)
    listed_here = block is not None and memory_id == int(block[1])
    if channel.startswith("D") and block is None:  # whose list it is cannot be known
        memory_id = None
    scope = scope_in(team, channel, block[2] if block else presser)
    answer = await memory_list.forget(
        deps.recall.memories,
        deps.gate,
        scope,
        memory_id,
        sender_of(presser, "", deps.settings),
        listed_here=listed_here,
    )
    words = _decoded(block[3]) if block and block[3] else None
    deps.later(_answer(deps, respond, answer, scope, presser, words))


async def _answer(
    deps: IngressDeps, respond: Any, answer: memory_list.ForgetAnswer, scope: str, user: str,
    words: str | None,
) -> None:  # fmt: skip
    """The list redrawn with the memory forgotten (the same search, for a search's), replacing
    the original; a note to the presser when the press changed nothing."""
    try:
        if answer.memory_id is not None and answer.line is not None:
            shown = await _shown(deps, scope, words)
            if isinstance(shown, str):  # nothing left to list
                shown = item_list.Listing([memory_list.header(is_private(scope))], [])
            redrawn = blocks(shown, user, forgotten=answer.memory_id, words=words)
            text = "\n".join(_text(block) for block in redrawn)
            await respond(text=text, blocks=redrawn, replace_original=True)
        if answer.alert:
            await respond(
                text=literal(answer.text), response_type="ephemeral", replace_original=False
            )
    except Exception:  # the press is done; only showing it failed
        log.warning("could not answer a press of a memory's Forget button", exc_info=True)


def _encoded(words: str) -> str:
    return base64.urlsafe_b64encode(words[:100].encode()).decode().rstrip("=")


def _decoded(encoded: str) -> str | None:
    """A search's words from a block_id, None if they are not what `_encoded` made."""
    try:
        return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    except ValueError:
        return None


def _number(line: str) -> int | None:
    """The memory a line of the list is about (`#12 …`), None for the "more" line."""
    match = _LINE.match(line)
    return int(match[1]) if match else None


def _text(block: dict[str, Any]) -> str:
    return str((block.get("text") or {}).get("text", ""))
