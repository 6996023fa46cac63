"""When a task runs: the `when` a person (or the model for them) gives, read strictly.

`when` is one of four forms, read in a time zone:

- an ISO 8601 date-time, `2026-12-01T09:00` (local to the zone unless it carries an offset);
- a delay in words, `in 90 seconds`, `in 2 hours`, `in 1 hour and 30 minutes`;
- a five-field cron expression, `0 9 * * 1-5` (weekdays as crontab numbers them: 0 or 7 is
  Sunday);
- an interval, `every 30 minutes`, `every 2 hours`.

APScheduler's triggers compute the run times, so daylight saving time is the library's and
`zoneinfo`'s business. One correction is ours: APScheduler 3 numbers weekdays from Monday = 0,
crontab from Sunday = 0, so a cron day-of-week field is rewritten as day names first.
"""

from __future__ import annotations

import copy
import re
import zoneinfo
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Literal

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger
from pydantic import BaseModel, ConfigDict

Kind = Literal["once", "cron", "interval"]
MAX_WHEN = 200
MAX_RUNS_CHECKED = 24  # next runs a cron expression's shortest gap is measured over
MAX_SECONDS = 10 * 366 * 86400  # the longest delay or interval: ten years

_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip
# ASCII digits only: `\d` would take "٣" too.
_PART = re.compile(r"(?:(?P<n>[0-9]{1,6}(?:\.[0-9]{1,3})?)|an?)\s*(?P<unit>[a-z]+)")
_JOINERS = re.compile(r"\s*(?:,|\band\b)\s*|\s+")
_CRON_FIELD = re.compile(r"[0-9A-Za-z*/,\-]{1,60}")
_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


class WhenError(ValueError):
    """A `when` that cannot be read, or a time that cannot be scheduled; the message says
    what would work, for the model to pass on or correct."""


class Schedule(BaseModel):
    """A parsed `when`. `spec` is the normalised form kept in the database: the UTC time of a
    one-off run, the cron expression, or the interval in seconds; `anchor` is when an
    interval counts from, so every scheduler computes the same run times."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    spec: str
    zone: str
    anchor: datetime

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.zone)

    def trigger(self) -> BaseTrigger:
        """The APScheduler trigger that fires this schedule."""
        if self.kind == "once":
            return DateTrigger(run_date=datetime.fromisoformat(self.spec), timezone=self.tz)
        if self.kind == "interval":
            return IntervalTrigger(seconds=int(self.spec), start_date=self.anchor, timezone=self.tz)
        return cron_trigger(self.spec, self.tz)

    def next_runs(self, after: datetime, count: int = 3) -> list[datetime]:
        """The next `count` run times strictly after `after`, in the schedule's zone."""
        trigger, runs = self.trigger(), list[datetime]()
        previous: datetime | None = None
        moment = after
        while len(runs) < count:
            upcoming = trigger.get_next_fire_time(previous, moment)
            if upcoming is None:
                break
            if upcoming > after:  # shown as the zone's clock shows it (through UTC: normalised)
                runs.append(upcoming.astimezone(UTC).astimezone(self.tz))
            previous = upcoming
            moment = upcoming.astimezone(UTC) + timedelta(microseconds=1)
        return runs

    def shortest_gap(self, after: datetime) -> timedelta | None:
        """The shortest time between two runs (None for a one-off)."""
        if self.kind == "once":
            return None
        if self.kind == "interval":
            return timedelta(seconds=int(self.spec))
        runs = self.next_runs(after, MAX_RUNS_CHECKED)
        gaps = [later - earlier for earlier, later in pairwise(runs)]
        return min(gaps) if gaps else None

    def describe(self) -> str:
        """How the schedule reads to a person: `once`, `cron 0 9 * * 1-5`, `every 30 minutes`."""
        if self.kind == "once":
            return "once"
        if self.kind == "interval":
            return f"every {duration_words(int(self.spec))}"
        return f"cron {self.spec}"


def parse_when(when: str, zone: zoneinfo.ZoneInfo, now: datetime) -> Schedule:
    """`when` read in `zone` at `now` (aware); raises `WhenError` with what would work."""
    text = " ".join(when.strip().split())
    if not text or len(text) > MAX_WHEN:
        raise WhenError(f"`when` must be 1 to {MAX_WHEN} characters.")
    lowered = text.lower()
    anchor = now.astimezone(UTC)
    if lowered.startswith("in "):
        run = now + timedelta(seconds=seconds_of(lowered[3:]))
        return Schedule(
            kind="once", spec=run.astimezone(UTC).isoformat(), zone=zone.key, anchor=anchor
        )
    if lowered.startswith("every "):
        try:
            seconds = seconds_of(lowered[6:], bare_unit=True)
        except WhenError as exc:
            if not str(exc).startswith(("Cannot read", "Unknown unit")):
                raise
            raise WhenError(
                f"{exc} For days of the week or times of day ('every weekday at 9'), "
                "use a cron expression such as '0 9 * * 1-5'."
            ) from None
        return Schedule(kind="interval", spec=str(seconds), zone=zone.key, anchor=anchor)
    fields = text.split(" ")
    if len(fields) == 5 and all(_CRON_FIELD.fullmatch(f) for f in fields):
        schedule = Schedule(kind="cron", spec=text, zone=zone.key, anchor=anchor)
        if not schedule.next_runs(now, 1):  # cron_trigger raised if it cannot be read
            raise WhenError(f"The cron expression {text!r} never comes (e.g. 31 February).")
        return schedule
    if len(fields) == 6 and all(_CRON_FIELD.fullmatch(f) for f in fields):
        raise WhenError(
            "A cron expression has five fields (minute hour day month weekday), "
            "e.g. '0 9 * * 1-5'; seconds cannot be given."
        )
    return _once_at(text, zone, now)


def check_frequency(schedule: Schedule, now: datetime, minimum: float) -> None:
    """Refuse a schedule that runs more often than every `minimum` seconds
    (PARLEY_TASK_MIN_INTERVAL): every run is a turn of the model, paid for."""
    gap = schedule.shortest_gap(now)
    if gap is not None and gap.total_seconds() < minimum:
        raise WhenError(
            f"That runs every {duration_words(round(gap.total_seconds()))}; tasks may run at "
            f"most every {duration_words(round(minimum))}."
        )


def _once_at(text: str, zone: zoneinfo.ZoneInfo, now: datetime) -> Schedule:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise WhenError(
            f"Cannot read when={text!r}. Use an ISO 8601 date-time (2026-12-01T09:00), "
            "'in 20 minutes', a cron expression ('0 9 * * 1-5') or 'every 2 hours'."
        ) from None
    if moment.tzinfo is None:  # a time that occurs twice is the first; one skipped, later
        moment = moment.replace(tzinfo=zone)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise WhenError(f"{text!r} is too far in the future.") from None
    if moment <= now:
        shown = moment.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")
        raise WhenError(f"{shown} has already passed; give a time in the future.")
    return Schedule(
        kind="once",
        spec=moment.astimezone(UTC).isoformat(),
        zone=zone.key,
        anchor=now.astimezone(UTC),
    )


def seconds_of(text: str, *, bare_unit: bool = False) -> int:
    """`1 hour and 30 minutes` → 5400. With `bare_unit`, `minute` alone means one minute
    (`every minute`)."""
    parts = [p for p in _JOINERS.split(text.strip()) if p]
    if bare_unit and len(parts) == 1 and parts[0] in _UNITS:
        return _UNITS[parts[0]]
    total = 0.0
    rest = " ".join(parts)
    position = 0
    for match in _PART.finditer(rest):
        if rest[position : match.start()].strip():
            break
        unit = _UNITS.get(match["unit"])
        if unit is None:
            raise WhenError(
                f"Unknown unit {match['unit']!r}: use seconds, minutes, hours, days or weeks."
            )
        total += float(match["n"] or 1) * unit
        position = match.end()
    if position == 0 or rest[position:].strip():
        raise WhenError(
            f"Cannot read the duration {text!r}; write it like '90 seconds' or "
            "'2 hours 30 minutes'."
        )
    if total < 1:
        raise WhenError("The duration must be at least one second.")
    if total > MAX_SECONDS:
        raise WhenError("The duration may be at most ten years.")
    return round(total)


def duration_words(seconds: int) -> str:
    """5400 → `1 hour 30 minutes`; the largest units first, zeros left out."""
    words = []
    for name, size in (
        ("week", 604800),
        ("day", 86400),
        ("hour", 3600),
        ("minute", 60),
        ("second", 1),
    ):
        count, seconds = divmod(seconds, size)
        if count:
            words.append(f"{count} {name}{'s' if count != 1 else ''}")
    return " ".join(words) or "0 seconds"


def cron_trigger(spec: str, zone: zoneinfo.ZoneInfo) -> CronTrigger:
    """A crontab expression as APScheduler reads it, weekdays as crontab numbers them."""
    minute, hour, day, month, weekday = spec.split(" ")
    weekdays = crontab_weekdays(weekday)
    try:
        return WallClockCronTrigger(
            minute=minute, hour=hour, day=day, month=month, day_of_week=weekdays, timezone=zone
        )
    except ValueError as exc:
        raise WhenError(f"Cannot read the cron expression {spec!r}: {exc}.") from None


class WallClockCronTrigger(CronTrigger):  # type: ignore[misc]
    """A cron trigger that matches the local wall clock and always moves forward.

    APScheduler 3's own cron trigger loses its way in the hour a clock goes back (a DST
    fold): it returns the same run again, or an earlier one, forever, so "0 * * * *" in
    Europe/Lisbon would never get past 01:00 on the last Sunday of October. Here the
    expression is matched against local wall-clock times (a trigger in UTC, which has no
    DST, does that), and each matching time is placed in the zone: a time that occurs twice
    runs at its first occurrence only, a time the clock skips runs when the clock has moved
    on (02:30 on a spring-forward night runs at 03:30)."""

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        after = now.astimezone(UTC)  # the first run at or after `now`, or the one after the last
        if previous_fire_time is not None:
            after = previous_fire_time.astimezone(UTC) + timedelta(microseconds=1)
        wall_trigger = copy.copy(self)
        wall_trigger.timezone = UTC
        local = after.astimezone(self.timezone)
        wall = local.replace(tzinfo=UTC, fold=0)
        while True:
            match: datetime | None = CronTrigger.get_next_fire_time(wall_trigger, None, wall)
            if match is None:
                return None
            instant = match.replace(tzinfo=self.timezone).astimezone(UTC)  # fold 0: first
            if instant >= after:
                return instant.astimezone(self.timezone)
            wall = match + timedelta(microseconds=1)


def crontab_weekdays(field: str) -> str:
    """A crontab day-of-week field (`1-5`, `0,6`, `*/2`, `mon-fri`) as APScheduler 3 reads
    it: `*` stays, anything else becomes the list of day names it means."""
    if field == "*":
        return field
    days: set[int] = set()
    for item in field.lower().split(","):
        days |= _weekday_item(item, field)
    return ",".join(_DAY_NAMES[d] for d in sorted(days))


def _weekday_item(item: str, field: str) -> set[int]:
    body, _, step_text = item.partition("/")
    step = _weekday_number(step_text, field, is_step=True) if step_text else 1
    if body == "*":
        first, last = 0, 6
    elif "-" in body:
        start, _, end = body.partition("-")
        first, last = _weekday_number(start, field), _weekday_number(end, field)
    else:
        first = last = _weekday_number(body, field)
        if step_text:
            last = 6
    if last == 0 and first > 0:  # `5-0` or `mon-sun`: up to Sunday at the end
        last = 7
    if first > last or step < 1:
        raise WhenError(f"Cannot read the day-of-week field {field!r} of the cron expression.")
    return {d % 7 for d in range(first, last + 1, step)}


def _weekday_number(text: str, field: str, *, is_step: bool = False) -> int:
    if text in _DAY_NAMES and not is_step:
        return _DAY_NAMES.index(text)
    if re.fullmatch(r"[0-9]", text) and (is_step or int(text) <= 7):
        return int(text)  # 7 is Sunday as 0 is; taken modulo 7 once the range is made
    raise WhenError(f"Cannot read the day-of-week field {field!r} of the cron expression.")
