"""Pairing: a stranger who writes in private gets a code; an admin's approval makes them a user.

Under PARLEY_DM_POLICY=pairing a stranger's private message is answered with a short code
(`CODE_LENGTH` characters of an alphabet without look-alikes, from `secrets`) and a sentence
saying to give it to an admin. The code lives `PARLEY_PAIRING_CODE_TTL` (an hour), an
account (one Telegram bot, one Slack workspace) has at most `MOST_PENDING` codes waiting, a
stranger who asks again gets the code they were given, and answers to one stranger are
limited (`ASKS`) so that nobody makes the bot repeat itself at will.

An admin approves with `/pair CODE` in any chat, or `parley pair approve CODE`: the code is
read strictly (ASCII of the alphabet alone: `isdigit()` would take other scripts' digits),
taken from Redis, which makes it single use, and the person written to SQL
(`bot.store.pairings`) with who approved them. Wrong codes are limited per admin and overall,
in Redis, so no number of processes multiplies the guesses. The paired person is told through
their session's mailbox (a `paired` command), so the worker's paced egress says it, from
wherever the approval came.
"""

from __future__ import annotations

import logging
import math
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.redis.pairing_codes import PairingCodes, Waiting
from bot.store.pairings import Paired, PairedPeople
from bot.vocabulary.envelope import Envelope, Sender

log = logging.getLogger(__name__)
ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0 or O, no 1 or I: read out, typed again
CODE_LENGTH = 8
EXAMPLE = "K7QX2MPA"
MOST_PENDING = 3
ASKS = 5  # answers to one stranger per ASK_WINDOW, then silence
ASK_WINDOW = 3600.0
WRONG_PER_ADMIN = 5  # wrong codes one admin may try per GUESS_WINDOW
WRONG_OVERALL = 20  # wrong codes all admins together may try per GUESS_WINDOW
GUESS_WINDOW = 900.0
CLI = "cli"  # who approved, for `parley pair approve`
PAIRED_COMMAND = "paired"  # the session command that tells a person they are in
PERSON = re.compile(r"[a-z]{1,16}:[A-Za-z0-9_.@:+-]{1,180}")

GIVE = (
    "I only talk with people an admin let in. To be let in, give this code to an admin of "
    "this bot: {code}\nThey approve it with /pair {code}. The code works for {lifetime}."
)
FULL = "Too many people are waiting for an admin right now; write to me again later."
NOT_A_CODE = "That is not a pairing code: a code is {n} letters and digits, like {example}."
WRONG = (
    "No pairing code {code} is waiting: it is wrong, expired (codes last {lifetime}), or "
    "used already. Ask the person to write to me again for a new one."
)
TOO_MANY = "Too many wrong codes; try again in {wait}."
APPROVED = "Paired {person}: they may talk to me now, and I told them so."
WELCOME = "You are in: an admin approved your code. Ask me anything."
NOT_A_PERSON = "Say whom to unpair by their id, like tg:123 or slack:U012AB3CD."
UNPAIRED = "Unpaired {person}: they are a stranger again."
NOT_PAIRED = "{person} is not paired (people in PARLEY_ALLOWED_USERS stay there)."
NO_PAIRING = "Pairing is not available here."
NOT_RECORDED = (
    "The code was right, but I could not record the pairing (the database did not answer). "
    "Ask {person} to write to me again for a new code."
)


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def read_code(said: str) -> str | None:
    """The code in what an admin typed (spaces and one dash allowed, any case), or None."""
    text = said.strip().replace("-", "", 1).replace(" ", "")
    if not text.isascii() or len(text) != CODE_LENGTH:
        return None
    code = text.upper()
    return code if all(char in ALPHABET for char in code) else None


def read_person(said: str) -> str | None:
    """A person id as an admin typed it (`tg:123`), ASCII only, or None."""
    text = said.strip()
    return text if text.isascii() and PERSON.fullmatch(text) else None


def duration(seconds: float) -> str:
    """`1 hour`, `1 hour 30 minutes`, `20 minutes`, `5 seconds`: how long, as a sentence says
    it, rounded up to what it names."""
    if seconds < 60:
        n = max(1, math.ceil(seconds))
        return f"{n} second{'s' if n > 1 else ''}"
    hours, minutes = divmod(math.ceil(seconds / 60 - 1e-9), 60)
    said = [
        f"{n} {unit}{'s' if n > 1 else ''}"
        for n, unit in ((hours, "hour"), (minutes, "minute"))
        if n
    ]
    return " ".join(said)


@dataclass(frozen=True)
class PrivateChat:
    """A private chat with the bot, as pairing needs it: the bot's account on its platform
    (`account`, made by the platform's place), and where its person is told they are in."""

    account: str
    platform: str
    session: str
    reply_to: dict[str, Any]


@dataclass(frozen=True)
class Pairing:
    codes: PairingCodes
    paired: PairedPeople
    submit: Callable[[Envelope], Awaitable[Any]]  # the mailbox's: tells a paired person
    lifetime: float  # PARLEY_PAIRING_CODE_TTL, seconds

    @classmethod
    def of(
        cls,
        redis: Redis,
        engine: AsyncEngine,
        submit: Callable[[Envelope], Awaitable[Any]],
        lifetime: float,
    ) -> Pairing:
        """Pairing on this Redis and database, codes living `lifetime` seconds."""
        codes = PairingCodes(redis, lifetime, MOST_PENDING)
        return cls(codes, PairedPeople(engine), submit, lifetime)

    async def is_paired(self, person: str) -> bool:
        return await self.paired.is_paired(person)

    async def ask(self, person: str, chat: PrivateChat) -> str | None:
        """What to tell a stranger who wrote in `chat`: their code, or why none; None once
        they asked more than `ASKS` times this window (silence)."""
        if await self.codes.spend([(f"asks:{chat.account}:{person}", ASKS)], ASK_WINDOW):
            return None
        waiting = Waiting(person, chat.platform, chat.account, chat.session, chat.reply_to)
        for _ in range(3):  # a clash with a waiting code is one in a trillion; try again
            issued = await self.codes.issue(new_code(), waiting)
            if issued.outcome == "full":
                log.info("no pairing code for %s: %s has too many waiting", person, chat.account)
                return FULL
            if issued.outcome != "clash":
                if issued.outcome == "new":
                    log.info("gave %s a pairing code on %s", person, chat.account)
                return GIVE.format(code=issued.code, lifetime=duration(self.lifetime))
        return FULL

    async def approve(self, said: str, by: str) -> str:
        """`/pair CODE` by the admin `by` (or `CLI`): the answer to show them."""
        code = read_code(said)
        if code is None:
            return NOT_A_CODE.format(n=CODE_LENGTH, example=EXAMPLE)
        budgets = [(f"wrong:{by}", WRONG_PER_ADMIN), ("wrong", WRONG_OVERALL)]
        wait = await self.codes.spend(budgets, GUESS_WINDOW)
        if wait:
            log.warning("pairing codes from %s refused: too many wrong ones", by)
            return TOO_MANY.format(wait=duration(wait))
        waiting = await self.codes.take(code)
        if waiting is None:
            log.warning("%s tried a pairing code that is not waiting", by)
            return WRONG.format(code=code, lifetime=duration(self.lifetime))
        await self.codes.refund([name for name, _ in budgets])
        try:
            await self.pair(waiting, by)
        except (SQLAlchemyError, OSError):  # the code is spent: a new one is a message away
            log.exception("could not record that %s paired %s", by, waiting.person)
            return NOT_RECORDED.format(person=waiting.person)
        return APPROVED.format(person=waiting.person)

    async def pair(self, waiting: Waiting, by: str) -> Paired:
        """Make `waiting`'s person a user, and tell them in their private chat."""
        paired = await self.paired.add(waiting.person, waiting.platform, by)
        log.info("%s paired %s", by, waiting.person)
        await self.submit(welcome(waiting))
        return paired

    async def revoke(self, said: str, by: str) -> str:
        """`/unpair PERSON` by the admin `by`: the answer to show them."""
        person = read_person(said)
        if person is None:
            return NOT_A_PERSON
        if not await self.paired.remove(person):
            return NOT_PAIRED.format(person=person)
        log.info("%s unpaired %s", by, person)
        return UNPAIRED.format(person=person)


def welcome(waiting: Waiting) -> Envelope:
    """The command that tells a paired person they are in, in their private chat; its id is
    the code's, so one approval tells them once."""
    return Envelope(
        id=f"pair:{waiting.hash[:32]}",
        session=waiting.session,
        kind="command",
        text=PAIRED_COMMAND,
        sender=Sender(id=waiting.person, paired=True),
        platform=waiting.platform,
        chat_kind="private",
        reply_to=waiting.reply_to,
    )
