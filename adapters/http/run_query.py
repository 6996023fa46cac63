"""The query of the runs' list and charts, read strictly: a window of time and what a run must
be to count. A parameter the endpoint does not know, one given twice, or a value outside its
choices is a 400 that names the parameter, never a filter silently ignored.

    start, end   ISO 8601 times in ASCII (UTC when no zone is given); the last day by default
    outcome      ok | failed | stopped | timed_out | step_limit | looped | given_up | waiting
                 | skipped (the run's status, `bot.store.outcome.RunStatus`; ok is `completed`)
    platform     telegram | slack | http | console
    model        the model's name as the run recorded it
    trigger      message | api | decision | expiry | resume | scheduled | skipped
    q            a piece of the session's title (or key), in any case
    mode         react | plan_execute: the mode the run ran in
    prompt       the hash of its system prompt's parts (`config.prompt.hash`)
    tools        the hash of the tools it was offered (`config.tools_hash`)
    runs         these runs alone: their ids (32 hex characters each), comma-separated, at
                 most MAX_CHOSEN; without `start` and `end` the window is then the one from
                 the first of them to start to the last (`spanned`), so that a link to
                 chosen runs shows them whenever it is opened
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from aiohttp import web

from adapters.web.input import refusal
from bot.store.outcome import RunStatus
from bot.store.traces import Match, Traces
from bot.vocabulary.events import Trigger
from bot.vocabulary.ran_with import HASH_LENGTH
from bot.vocabulary.run_config import MODES

WHEN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]{5,15})?(Z|[+-][0-9]{2}:?[0-9]{2})?")
DEFAULT_WINDOW = timedelta(days=1)
WINDOW = ("start", "end")
FILTERS = ("outcome", "platform", "model", "trigger", "q", "mode", "prompt", "tools", "runs")
OUTCOMES = {"ok" if s == RunStatus.COMPLETED else str(s): str(s) for s in RunStatus}
PLATFORMS = ("telegram", "slack", "http", "console")
TRIGGERS = tuple(Trigger)
MAX_TEXT = 200  # a model's name and a title are at most this long in the record
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
HASH = re.compile(f"[0-9a-f]{{{HASH_LENGTH}}}")
RUN_ID = re.compile(r"[0-9a-f]{32}")
MAX_CHOSEN = 200  # run ids in `runs=`: a page's address holds them all


@dataclass(frozen=True)
class RunQuery:
    start: datetime
    end: datetime
    match: Match
    windowed: bool = True  # False when neither start nor end was given


def bad(message: str) -> web.HTTPException:
    return refusal(web.HTTPBadRequest, message)


def only(request: web.Request, known: Iterable[str]) -> None:
    """A 400 for a parameter outside `known`, or one given more than once."""
    allowed = set(known)
    for name in request.query:
        if name not in allowed:
            raise bad(f"unknown query parameter {name!r}; this endpoint takes {sorted(allowed)}")
        if len(request.query.getall(name)) > 1:
            raise bad(f"{name} is given more than once")


def when(request: web.Request, name: str, default: datetime) -> datetime:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        if not WHEN.fullmatch(raw):
            raise ValueError
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise bad(f"{name} must be an ISO 8601 time, e.g. 2026-11-24T09:00:00Z") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def window(request: web.Request) -> tuple[datetime, datetime]:
    """`start` and `end` (the last day unless given); start must come first."""
    end = when(request, "end", datetime.now(UTC))
    start = when(request, "start", end - DEFAULT_WINDOW)
    if start >= end:
        raise bad("start must be before end")
    return start, end


def choice(request: web.Request, name: str, choices: Iterable[str]) -> str | None:
    raw = request.query.get(name)
    if raw is not None and raw not in choices:
        raise bad(f"{name} must be one of {', '.join(choices)}")
    return raw


def text(request: web.Request, name: str) -> str | None:
    raw = request.query.get(name)
    if raw is not None and (not 1 <= len(raw) <= MAX_TEXT or CONTROL.search(raw)):
        raise bad(f"{name} must be 1 to {MAX_TEXT} characters, none of them control characters")
    return raw


def hashed(request: web.Request, name: str) -> str | None:
    raw = request.query.get(name)
    if raw is not None and not HASH.fullmatch(raw):
        raise bad(f"{name} must be a hash of {HASH_LENGTH} lowercase hexadecimal characters")
    return raw


def chosen(request: web.Request) -> tuple[str, ...] | None:
    """`runs=`: run ids, each once, in the order given."""
    raw = request.query.get("runs")
    if raw is None:
        return None
    ids = raw.split(",")
    if not 1 <= len(ids) <= MAX_CHOSEN or not all(RUN_ID.fullmatch(i) for i in ids):
        raise bad(
            f"runs must be 1 to {MAX_CHOSEN} run ids of 32 lowercase hexadecimal characters, "
            "separated by commas"
        )
    return tuple(dict.fromkeys(ids))


def run_query(request: web.Request, *, more: Iterable[str] = ()) -> RunQuery:
    """The window and the filters; `more` names the endpoint's own other parameters."""
    only(request, (*WINDOW, *FILTERS, *more))
    start, end = window(request)
    outcome = choice(request, "outcome", OUTCOMES)
    match = Match(
        status=None if outcome is None else OUTCOMES[outcome],
        platform=choice(request, "platform", PLATFORMS),
        model=text(request, "model"),
        trigger=choice(request, "trigger", TRIGGERS),
        text=text(request, "q"),
        mode=choice(request, "mode", MODES),
        prompt=hashed(request, "prompt"),
        tools=hashed(request, "tools"),
        runs=chosen(request),
    )
    windowed = any(name in request.query for name in WINDOW)
    return RunQuery(start, end, match, windowed)


async def spanned(query: RunQuery, traces: Traces) -> RunQuery:
    """The query whose runs are chosen by id and whose window was not given: its window
    from the second the first of them started to the second after the last one did (the
    last day still when none of them is recorded)."""
    if query.windowed or query.match.runs is None:
        return query
    found = await traces.span(query.match.runs)
    if found is None:
        return query
    first, last = found
    start = first.replace(microsecond=0)
    return replace(query, start=start, end=last.replace(microsecond=0) + timedelta(seconds=1))
