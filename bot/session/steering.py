"""The messages that join a running turn, read from its session's inbox (`bot.vocabulary.
steering`, `bot.agent.joining`).

A turn's envelopes stay at the head of the inbox until it is committed, so what waits
behind it starts at the group's length. Those that join are the plain messages of the turn's
person right behind it, in order, up to the first that is anything else (another person's
message, a command, a button press): that one and all after it wait for their own turns, so
the order of the inbox is the order of answers. They join the group itself, which the runner
commits, so the turn's envelopes are committed together (MAX_GROUP of them at most, merged
and joined). A turn steers only when its chat chose `steer` (the default)
and it is its person's own message: not an API run, a scheduled task's, a decision's, a
replay or a helper's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.mailbox.inbox import Mailbox
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.helpers import is_helper
from bot.vocabulary.steering import SteerMode

MAX_GROUP = 20  # a turn's envelopes at most, those that joined it included


@dataclass
class InboxJoining:
    mailbox: Mailbox
    session: str
    group: list[Envelope]  # the turn's envelopes, the runner's own list: joined ones go in it
    limit: int = MAX_GROUP

    @classmethod
    def of(cls, mailbox: Mailbox, group: list[Envelope], mode: SteerMode) -> InboxJoining | None:
        """The joining for the turn `group` makes, if it steers."""
        head = group[0]
        steers = mode == "steer" and head.is_plain and head.replay_of is None
        if not steers or is_helper(head.session):
            return None
        return cls(mailbox, head.session, group)

    async def take(self) -> Sequence[Envelope]:
        room = self.limit - len(self.group)
        if room <= 0:
            return []
        waiting = await self.mailbox.peek(self.session, room, start=len(self.group))
        person = self.group[0].sender.id
        joined: list[Envelope] = []
        for envelope in waiting:
            if not envelope.is_plain or envelope.sender.id != person:
                break
            joined.append(envelope)
        self.group.extend(joined)
        return joined
