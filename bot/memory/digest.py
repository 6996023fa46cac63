"""A day's digest for each person and group chat: what was said and decided, from the record.

Once a day is over (in its person's time zone, the deployment's for those who chose none and
for groups), each scope whose people wrote that day
(`bot.memory.scope`: a person's private chats, or a group chat with its topics and threads)
gets one digest, written by a model (`PARLEY_DIGEST_MODEL`, the default model unless set)
from that day's messages in the record and nothing else, within `PARLEY_DIGEST_MAX_TOKENS`
(a longer day is read from its latest messages). It is kept as a memory dated by its day
(`bot.store.digests`), begins with the day, and is embedded like any memory, so recall and
`/memory search` find it; a day with nothing worth keeping gets none.

A worker's background pass writes them (`worker.loops`), a claim in Redis making sure one
worker alone writes a scope's day; the unique index on a scope's day keeps a second one out
whatever happens. A model that fails is asked again an hour later, within the days looked
back on; nothing is retried in a loop. A scope whose person or admins turned digests off
(`Digests.switch`) is left out.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from redis.asyncio import Redis

from bot.config.settings import ConfigError, Settings
from bot.llm.base import ModelRequest, Provider, SystemPart
from bot.llm.errors import ProviderError
from bot.llm.retry import RetryPolicy, Sleep, written
from bot.llm.served import Served
from bot.memory.recall import Recall
from bot.memory.scope import is_private, scope_of
from bot.redis.keys import DIGEST_CLAIM_PREFIX
from bot.store.digests import Digests, Said, Spoken
from bot.store.memory import MAX_TEXT, Memory
from bot.store.people import People
from bot.telemetry import metrics
from bot.vocabulary.messages import Message, TextBlock

log = logging.getLogger(__name__)
LOOKBACK_DAYS = 2  # the finished days looked at: yesterday, and the day before
OUTPUT_TOKENS = 300  # what a digest may write: a few lines, cut to a memory's size
LINE_CHARS = 600  # of one message, in what the model reads
CLAIM_S = (LOOKBACK_DAYS + 1) * 86_400  # a scope's day is written once: past its lookback
RETRY_S = 3_600  # a model that failed is asked again after this long
NOTHING = "NOTHING"
DIGESTER = (
    "You write the digest of one day of a chat's record, for the assistant to remember "
    "later. Keep only what the record says: what people said, asked, decided and planned, "
    "with names, numbers and dates. Never add, guess or infer anything it does not say. At "
    "most 80 words, as short notes, in the language of the record, with no preamble. If "
    f"nothing in it is worth remembering, answer {NOTHING} alone."
)


@dataclass(frozen=True)
class Writer:
    """The model that writes digests, and what one may take."""

    provider: Provider
    retry: RetryPolicy
    model: str
    max_tokens: int  # the record read and the digest written, together
    zone: ZoneInfo  # the deployment's: the days of those who chose none, and of groups
    sleep: Sleep = field(default=asyncio.sleep)

    def request(self, day: date, said: Sequence[Said], zone: ZoneInfo) -> ModelRequest:
        """The model call for `day`'s record (its times in `zone`), within `max_tokens`."""
        heading = f"The record of {day:%A} {day.isoformat()}, times in {zone.key}:\n\n"
        room = (self.max_tokens - OUTPUT_TOKENS) * 4 - len(DIGESTER) - len(heading)
        return ModelRequest(
            model=self.model,
            system=[SystemPart(DIGESTER)],
            messages=[
                Message(role="user", content=[TextBlock(text=heading + record(said, zone, room))])
            ],
            max_tokens=OUTPUT_TOKENS,
        )


def digest_model(settings: Settings, served: Served) -> str | None:
    """The model that writes digests, None when they are off; ConfigError for one this
    deployment does not serve."""
    wanted = settings.digest_model
    if wanted == "off":
        return None
    if wanted is None:
        return served.default
    if (name := served.name(wanted)) is None:
        raise ConfigError(f"PARLEY_DIGEST_MODEL: {wanted!r} is not a model this deployment serves")
    return name


def record(said: Sequence[Said], zone: ZoneInfo, room: int) -> str:
    """The day's messages as lines, the latest that fit in `room` characters, and how many
    earlier ones were left out."""
    lines = [f"[{s.at.astimezone(zone):%H:%M}] {_who(s)}: {s.text[:LINE_CHARS]}" for s in said]
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        used += len(line) + 1
        if used > room:
            break
        kept.append(line)
    left_out = len(lines) - len(kept)
    head = [f"(the day's first {left_out} messages are left out)"] if left_out else []
    return "\n".join([*head, *reversed(kept)])


def _who(said: Said) -> str:
    return "assistant" if said.role == "assistant" else said.sender or "someone"


def finished_days(now: datetime, zone: ZoneInfo) -> list[date]:
    """The days looked at, over in `zone` at `now`: yesterday first."""
    today = now.astimezone(zone).date()
    return [today - timedelta(days=back) for back in range(1, LOOKBACK_DAYS + 1)]


def bounds(day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """When `day` begins and ends in `zone`, in UTC."""
    start = datetime.combine(day, time(), zone)
    end = datetime.combine(day + timedelta(days=1), time(), zone)
    return start.astimezone(UTC), end.astimezone(UTC)


def scoped(spoken: Sequence[Spoken]) -> dict[str, set[str]]:
    """The sessions of each scope people wrote in."""
    scopes: dict[str, set[str]] = defaultdict(set)
    for row in spoken:
        scopes[scope_of(row.chat_kind, row.sender, row.session)].add(row.session)
    return dict(scopes)


def _claim_key(scope: str, day: date) -> str:
    return f"{DIGEST_CLAIM_PREFIX}{scope}:{day.isoformat()}"


def digest_text(day: date, written_text: str) -> str:
    """A digest as kept: its day first, on one line, cut to a memory's size."""
    text = f"{day.isoformat()}: {' '.join(written_text.split())}"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1].rsplit(" ", 1)[0] + "…"


@dataclass(frozen=True)
class DailyDigests:
    """Writes the digests due (see the module docstring)."""

    digests: Digests
    recall: Recall
    people: People  # whose zones make their days
    writer: Writer
    redis: Redis

    @classmethod
    def configured(
        cls, settings: Settings, recall: Recall, provider: Provider, retry: RetryPolicy,
        redis: Redis,
    ) -> DailyDigests | None:  # fmt: skip
        """A worker's digests, on the database `recall` reads, with the models it calls;
        None when `PARLEY_DIGEST_MODEL` is off."""
        model = digest_model(settings, Served.of(settings))
        if model is None:
            return None
        zone = ZoneInfo(settings.timezone)
        writer = Writer(provider, retry, model, settings.digest_max_tokens, zone)
        engine = recall.memories.engine
        return cls(Digests(engine), recall, People(engine), writer, redis)

    async def write_due(self, now: datetime | None = None) -> int:
        """Write the digests due: of each scope people wrote in lately, the finished days
        looked at in its zone (its person's, or the deployment's) that hold messages and
        have no digest yet; how many were written."""
        now = now or datetime.now(UTC)
        since = now - timedelta(days=LOOKBACK_DAYS + 2)  # every zone's days looked at
        scopes = scoped(await self.digests.spoken(since, now))
        off = await self.digests.off(scopes)
        zones = await self.people.zones(scope for scope in scopes if is_private(scope))
        done = 0
        for scope, sessions in sorted(scopes.items()):
            if scope in off:
                continue
            zone = zones.get(scope, self.writer.zone)
            for day in finished_days(now, zone):
                if await self.digests.written(scope, day):
                    continue
                said = await self.digests.said(sorted(sessions), *bounds(day, zone))
                if said and await self._claim(scope, day):  # else another worker writes it
                    done += await self._write(scope, day, said, zone) is not None
        return done

    async def _claim(self, scope: str, day: date) -> bool:
        return bool(await self.redis.set(_claim_key(scope, day), "1", nx=True, ex=CLAIM_S))

    async def _write(
        self, scope: str, day: date, said: Sequence[Said], zone: ZoneInfo
    ) -> Memory | None:
        """`scope`'s digest of `day`, from what was `said`; None when the model failed or
        found nothing to keep."""
        try:
            answer = await written(
                self.writer.provider, self.writer.request(day, said, zone), self.writer.retry,
                self.writer.sleep,
            )  # fmt: skip
        except ProviderError as exc:
            metrics.DIGESTS.labels("failed").inc()
            log.warning("could not write %s's digest of %s: %s", scope, day, exc)
            # asked again in an hour, not before: the claim is kept that much longer
            await self.redis.set(_claim_key(scope, day), "1", ex=RETRY_S)
            return None
        metrics.DIGEST_TOKENS.labels("input").inc(answer.usage.prompt_tokens)
        metrics.DIGEST_TOKENS.labels("output").inc(answer.usage.output_tokens)
        if not answer.text or answer.text.strip(" .").upper() == NOTHING:
            metrics.DIGESTS.labels("nothing").inc()
            return None
        sources = {line.session for line in said}
        memory = await self.digests.keep(scope, day, digest_text(day, answer.text), sources)
        if memory is not None:
            metrics.DIGESTS.labels("written").inc()
            await self.recall.kept(memory)
        return memory
