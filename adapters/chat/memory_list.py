"""`/memory` on every platform: what the list of remembered things says, what its Forget
buttons carry, and the answer to a press of one.

Which memories a list shows follows the rule of the tools and the prompt
(`bot.memory.scope.scope_of`): in a private chat the person's own, elsewhere the chat's. A
press is checked again, since a button can be pressed by someone other than who asked for
the list (or forged): a person's memories are forgotten only by that person, a chat's by
anyone allowed to use the bot (the same people who could ask it to forget), admins always.
A memory is forgotten by its number within the list's scope only, so a number from another
scope forgets nothing.

How a list is posted and a press answered is each platform's business; here is only what to
say, so Telegram and Slack say the same. The texts are plain: Slack escapes them with its
`literal`, Telegram sends them without a parse mode, so a memory shows as it was written.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.chat.access import Gate, refusal
from adapters.chat.item_list import ItemButtons, Listing
from bot.memory.scope import is_private
from bot.store.memory import Memories, Memory
from bot.vocabulary.envelope import Sender

PRIVATE_HEADER = "What I remember about you (newest first):"
CHAT_HEADER = "What I remember in this chat (newest first):"
EMPTY = (
    "I remember nothing here yet. Tell me 'remember that …' (e.g. 'remember that I take my "
    "coffee black') and I will keep it."
)
# What one message holds comfortably: Telegram's 4,096 characters and 100 buttons, Slack's
# 50 blocks (a section per memory, the header and the "more" line).
SHOWN = 30
TEXT_LIMIT = 3_500
MALFORMED = "This button is not one I know; send /memory for a fresh list."
NOT_YOURS = "Only the person these memories belong to can forget them."
BUTTONS = ItemButtons("mem:forget:")


@dataclass(frozen=True)
class ForgetAnswer:
    """The answer to a press; `line` replaces the memory's line in the list (and its button
    goes) when the memory is gone, by this press or before it."""

    text: str
    memory_id: int | None = None
    line: str | None = None
    alert: bool = True


async def listing(memories: Memories, scope: str) -> Listing | None:
    """The newest memories of `scope`, None when it has none."""
    newest = await memories.recent(scope, SHOWN)
    if not newest:
        return None
    total = await memories.count(scope) if len(newest) == SHOWN else len(newest)
    return listed(newest, total, is_private(scope))


def listed(newest: list[Memory], total: int, private: bool) -> Listing:
    """The list of `newest` (newest first) out of `total`: it stops at `TEXT_LIMIT`
    characters and says how many more there are."""
    lines, size = [header(private)], len(header(private))
    for memory in newest:
        line = memory.line()
        if size + 1 + len(line) > TEXT_LIMIT:
            break
        lines.append(line)
        size += 1 + len(line)
    shown = newest[: len(lines) - 1]
    if total > len(shown):
        lines.append(f"… and {total - len(shown)} more (ask me to recall them).")
    return Listing(lines, [memory.id for memory in shown])


def header(private: bool) -> str:
    return PRIVATE_HEADER if private else CHAT_HEADER


def button_label(memory_id: int) -> str:
    return f"Forget #{memory_id}"


def forgotten_line(memory_id: int) -> str:
    return f"#{memory_id} forgotten"


async def may_forget(gate: Gate, scope: str, presser: Sender) -> str | None:
    """Why `presser` may not forget `scope`'s memories, None if they may."""
    if is_private(scope):
        return None if presser.id == scope else NOT_YOURS
    return None if await gate.lets_in(presser.id) else refusal(presser.id)


async def forget(
    memories: Memories,
    gate: Gate,
    scope: str,
    memory_id: int | None,
    presser: Sender,
    *,
    listed_here: bool,
) -> ForgetAnswer:
    """Forget memory `memory_id` of `scope` for `presser`; `listed_here` says the list the
    press came from showed it, so its absence means it is already gone rather than never
    here."""
    if memory_id is None:
        return ForgetAnswer(MALFORMED)
    refused = await may_forget(gate, scope, presser)
    if refused is not None:
        return ForgetAnswer(refused)
    if await memories.forget(scope, memory_id):
        return ForgetAnswer(
            f"Forgot #{memory_id}.", memory_id, forgotten_line(memory_id), alert=False
        )
    if listed_here:
        return ForgetAnswer(
            f"Memory #{memory_id} is already gone.", memory_id, forgotten_line(memory_id)
        )
    return ForgetAnswer(f"There is no memory {memory_id} here.")
