"""What the database tells a turn before it runs: what its person chose (their model among
it), what they always allow in the chat, what their conversation remembers, and what the
chat's admins chose for everyone in it (its instruction, its tools switched off). A database
that cannot be read costs the turn these extras, never the turn itself."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from bot.agent.deps import TurnRequest
from bot.memory.prompt import within_budget
from bot.memory.recall import Recall
from bot.memory.scope import memory_scope, scope_of
from bot.session.deps import SessionStores
from bot.vocabulary.chat_settings import ChatRules
from bot.vocabulary.chats import chat_of
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.messages import TextBlock
from bot.vocabulary.preferences import Preferences
from bot.vocabulary.state import SessionState

log = logging.getLogger(__name__)
T = TypeVar("T")
RELEVANT = 10  # memories matching the message, at most
RECENT = 10  # the newest memories, at most
FOLLOWING = 3  # memories that go with a new message, at most
MemoryCount = tuple[int, str]  # how many memories a scope has, and their version


@dataclass(frozen=True)
class TurnReads:
    """What the database tells a turn before it runs: what its person chose, what they
    always allow in the chat (None if it could not be read), how many memories the
    turn's scope has, with their version (None if they could not be read), and the chat's
    rules (none if they could not be read: a chat's switched-off tool is then offered, as
    the operator's policy still decides every call)."""

    preferences: Preferences = field(default_factory=Preferences)
    allowed: tuple[str, ...] | None = None
    memories: MemoryCount | None = None
    chat: ChatRules = field(default_factory=ChatRules)

    def granting(self, tools: Iterable[str]) -> TurnReads:
        """These reads with `tools` allowed from now on (an "Always allow" just kept)."""
        if self.allowed is None:
            return self
        return dataclasses.replace(self, allowed=tuple(sorted({*self.allowed, *tools})))


async def read_for(asker: Envelope, stores: SessionStores | None) -> TurnReads:
    """Everything the turn reads from the database, in one statement (`TurnReads` of
    `bot.store.turn_facts`): the turn's first event waits for it. A read that fails costs
    the turn its extras, never the turn: the defaults, no grants, no memories.

    The grants are read for every run, so a grant revoked with /permissions is gone from the
    next run on, also in a turn that was waiting for an approval."""
    if stores is None:
        return TurnReads()
    person = asker.sender.id
    scope = scope_of(asker.chat_kind, person, asker.session)
    reading = stores.reads.read(person, chat_of(asker.session), asker.session, scope)
    facts = await _softly(f"read what the turn of {person} in {asker.session} needs", reading)
    if facts is None:
        return TurnReads()
    return TurnReads(facts.preferences, facts.allowed, facts.memories, facts.rules)


async def _softly(what: str, reading: Awaitable[T]) -> T | None:
    try:
        return await reading
    except Exception:
        log.warning("could not %s", what, exc_info=True)
        return None


async def prepared(
    request: TurnRequest, state: SessionState, reads: TurnReads, recall: Recall | None
) -> TurnRequest:
    """`request` with what the database adds to it: the scope's memories (chosen again only
    when they changed), the tools its person always allows in its chat, and its chat's rules."""
    remembered = await with_memory(request, state, reads.memories, recall)
    ruled = dataclasses.replace(remembered, chat_rules=reads.chat)
    if reads.allowed is None:
        return ruled
    return dataclasses.replace(ruled, allowed=reads.allowed)


def _last_said(state: SessionState) -> str:
    """What the person said last, for a turn resumed or decided on without a new message."""
    for message in reversed(state.messages):
        if message.role == "user":
            said = [b.text for b in message.content if isinstance(b, TextBlock)]
            if said:
                return "\n".join(said)
    return ""


async def with_memory(
    request: TurnRequest,
    state: SessionState,
    counted: MemoryCount | None,
    recall: Recall | None,
) -> TurnRequest:
    """`request` with its scope's memories, given their count and version as the turn's
    set-up read them (`bot.store.turn_facts`); without them if they could not be read (None)
    or cannot be now, since a turn is worth more than what it would remember.

    They are chosen again only when the scope's memories changed (a memory saved or
    forgotten, or a new scope after /new); otherwise the turn carries the same ones as the
    last, so the system prompt, and the provider's cache of the conversation behind it,
    stay the same from one message to the next. A memory that stands out for a new message
    and is not among them goes with the message instead (`request.recalled`), at the cost of
    embedding it, only when the scope holds more than they show. A scope without memories
    costs a turn one read, the count, and a new session most often has none."""
    if recall is None or counted is None:
        return request
    scope = memory_scope(request.ctx)
    count, version = counted[0], f"{scope}@{counted[1]}"
    try:
        if version != state.memory_version and count == 0:
            state.memory, state.memory_version = [], version  # nothing to choose from
        elif version != state.memory_version:
            query = request.text if request.text is not None else _last_said(state)
            relevant = await recall.search(scope, query, RELEVANT)
            recent = await recall.memories.recent(scope, RECENT, digests=False)
            state.memory, state.memory_version = within_budget(relevant, recent), version
        recalled = await _standing_out(request, state, count, recall, scope)
    except Exception:
        log.warning("could not read the memories of %s", scope, exc_info=True)
        return request
    return dataclasses.replace(request, memory=tuple(state.memory), recalled=recalled)


async def _standing_out(
    request: TurnRequest, state: SessionState, count: int, recall: Recall, scope: str
) -> tuple[str, ...]:
    """The memories that stand out for a new message and the system prompt does not hold
    (`bot.memory.prompt`); none when it holds them all."""
    if request.text is None or count <= len(state.memory):
        return ()
    shown = set(state.memory)
    found = await recall.standing_out(scope, request.text, FOLLOWING)
    return tuple(line for memory in found if (line := memory.line()) not in shown)
