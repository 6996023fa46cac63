"""Who may talk to the bot, the same on every platform, and what a stranger is told.

The allowlist (PARLEY_ALLOWED_USERS) and the admins (PARLEY_ADMINS) hold person ids with
their platform's prefix (`tg:1`, `slack:U1`), so one gate serves every platform. A stranger
is told why at no model cost, with the id to give the owner, and then not again for
`REFUSAL_MEMORY`: in a group the refusal is seen by everyone, and a stranger who keeps
writing should not make the bot repeat itself. Being added to the allowlist takes effect at
once; the memory only silences refusals.

In private chats PARLEY_DM_POLICY decides (groups keep the rule above): `open` lets anyone
in, `allowlist` the admins, the listed users and the people an admin paired, and `pairing`
the same, while a stranger is given a pairing code instead of the refusal
(`bot.people.pairing`). Unset, it is what the allowlist alone did before it existed:
`allowlist` when PARLEY_ALLOWED_USERS is set, `open` when it is not. Whether someone is paired
is read from SQL (one lookup by primary key, `bot.store.pairings`) only for people the
settings do not let in, or let in only as guests (a paired person is a user, which rules on
`role` see), so an unpairing holds on their next message in every process.

A person let in may still be over their limits (`bot.people.limits`): `take_message` is asked just
before a message is submitted, never for commands or button presses, and says so once per
window, for the same reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property

from redis.asyncio import Redis

from bot.config.settings import Settings
from bot.people.limits import Limits
from bot.people.pairing import Pairing, PrivateChat
from bot.redis import keys
from bot.vocabulary.envelope import MAX_TEXT

log = logging.getLogger(__name__)
REFUSAL = "Sorry, this assistant is private. Ask its owner to add you: your id is {id}."
ONCE = " (I will not repeat this message.)"
REFUSAL_MEMORY = 30 * 86_400
TOO_LONG = "That message is too long for me ({n} characters; the limit is {limit})."


@dataclass(frozen=True)
class Admission:
    """Whether a person is let in; `tell` is the refusal to show, None to stay silent."""

    admitted: bool
    tell: str | None = None
    paired: bool = False  # let in as a user by an admin's approval of their pairing code


def dm_policy(settings: Settings) -> str:
    """PARLEY_DM_POLICY, or what it is when unset: see the module docstring."""
    if settings.dm_policy is not None:
        return settings.dm_policy
    return "allowlist" if settings.allowed_users else "open"


@dataclass(frozen=True)
class Gate:
    settings: Settings
    redis: Redis
    pairing: Pairing | None = None  # None: nobody is paired, no code is given

    def may_use(self, person: str) -> bool:
        """Whether the settings alone let `person` in, as in groups (pairs aside)."""
        return self.settings.may_use(person)

    def is_admin(self, person: str) -> bool:
        return self.settings.is_admin(person)

    def listed(self, person: str, private: bool) -> bool:
        """Whether the settings alone let `person` in, in a private chat or elsewhere."""
        settings = self.settings
        if not private:
            return settings.may_use(person)
        if dm_policy(settings) == "open":
            return True
        return settings.allow_guests or self.is_admin(person) or person in settings.allowed_users

    def _guest(self, person: str) -> bool:
        """Whether `person`, let in, would be a guest (PARLEY_ALLOW_GUESTS, or `open` private
        chats, with a list that does not name them): only then does being paired change
        their role, so only then is it read for someone let in."""
        settings = self.settings
        listed = not settings.allowed_users or person in settings.allowed_users
        return not listed and not self.is_admin(person)

    async def is_paired(self, person: str) -> bool:
        return self.pairing is not None and await self.pairing.is_paired(person)

    async def lets_in(self, person: str, private: bool = False) -> bool:
        """Whether `person` may talk to the bot (in a private chat, if `private`)."""
        return self.listed(person, private) or await self.is_paired(person)

    async def admit(
        self, person: str, where: str, scope: str = "", private: PrivateChat | None = None
    ) -> Admission:
        """Let `person` in, or refuse them: told once, then silently until memory lapses; in
        a private chat (`private`) under the `pairing` policy, given a pairing code instead.

        `scope` narrows the memory where one id is not unique across the platform (a Slack
        user id is per workspace); `where` is only for the log."""
        if self.listed(person, private is not None):
            if self._guest(person) and await self.is_paired(person):
                return Admission(admitted=True, paired=True)  # a user, not a guest
            return Admission(admitted=True)
        if await self.is_paired(person):
            return Admission(admitted=True, paired=True)
        pairing = self.pairing
        if private is not None and pairing is not None and dm_policy(self.settings) == "pairing":
            return Admission(admitted=False, tell=await pairing.ask(person, private))
        first = await self.redis.set(keys.refused(person, scope), "1", nx=True, ex=REFUSAL_MEMORY)
        log.info("refused %s in %s", person, where)
        return Admission(admitted=False, tell=refusal(person) + ONCE if first else None)

    @cached_property
    def limits(self) -> Limits:
        return Limits(self.redis, self.settings)

    async def take_message(self, person: str, message: str) -> Admission:
        """Count `message` (a key unique to it) against `person`'s limits, or refuse it:
        told once per window, then silently until they may write again."""
        over = await self.limits.check(person, message)
        if over is None:
            return Admission(admitted=True)
        log.info("%s is over their %s limit", person, over.kind)
        first = await self.limits.first_telling(over)
        return Admission(admitted=False, tell=over.text if first else None)


def refusal(person: str) -> str:
    """Why a stranger is not answered; a command's answer says it every time."""
    return REFUSAL.format(id=person)


def too_long(text: str) -> str | None:
    """The answer to a message past what the bot reads, or None if it fits."""
    return TOO_LONG.format(n=len(text), limit=MAX_TEXT) if len(text) > MAX_TEXT else None
