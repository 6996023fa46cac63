"""`/memory` on every platform: what the list of remembered things says (the newest, or with
`/memory search WORDS` those the words are about, found by meaning), what its Forget buttons
carry, the answer to a press of one, and `/forget N`.

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
from bot.memory.recall import Recall
from bot.memory.scope import is_private
from bot.memory.tools import NUMBER
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
USAGE = (
    "/memory lists what I remember here; /memory search WORDS finds what the words are about; "
    "/forget N forgets memory #N; /memory digest on or off keeps a daily digest here, or not."
)
SEARCH_USAGE = "Say what to look for: /memory search WORDS (e.g. /memory search my dog)."
FORGET_USAGE = "Say which memory to forget by its number: /forget 12 (the numbers are in /memory)."
FOUND = 10  # memories a search shows, best first
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


def asked_for(args: str) -> str | None:
    """The words of `/memory search WORDS` ("" when none were given), or None for the list;
    raises ValueError for anything else after `/memory`."""
    first, _, rest = args.strip().partition(" ")
    if not first:
        return None
    if first.lower() != "search":
        raise ValueError(USAGE)
    return rest.strip()


async def found(recall: Recall, scope: str, words: str) -> Listing | str:
    """The memories of `scope` that `words` are about, best first, or what to say instead."""
    if not words:
        return SEARCH_USAGE
    matches = await recall.search(scope, words, FOUND)
    if not matches:
        return f"Nothing I remember here is about {words[:80]!r}."
    return listed(matches, len(matches), is_private(scope), f"About {words[:80]!r} (best first):")


async def forget_numbered(
    memories: Memories, gate: Gate, scope: str, args: str, presser: Sender
) -> str:
    """`/forget N`: memory #N of `scope` forgotten for `presser`, as its button would."""
    number = NUMBER.fullmatch(args.strip())
    if number is None:
        return FORGET_USAGE
    said = await forget(memories, gate, scope, int(number[1]), presser, listed_here=False)
    return said.text


def listed(newest: list[Memory], total: int, private: bool, title: str | None = None) -> Listing:
    """The list of `newest` (newest first, or as `title` says) out of `total`: it stops at
    `TEXT_LIMIT` characters and says how many more there are."""
    title = title or header(private)
    lines, size = [title], len(title)
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
