"""Reading `when`: every form, every refusal with its message, crontab's weekdays, the
minimum interval, and run times across daylight saving changes in two zones."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from bot.config.settings import Settings
from bot.vocabulary.schedule import (
    Schedule,
    WhenError,
    check_frequency,
    cron_trigger,
    duration_words,
    parse_when,
)

LISBON = zoneinfo.ZoneInfo("Europe/Lisbon")
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)  # a Wednesday; Lisbon is UTC+1 (WEST)


def runs(schedule: Schedule, after: datetime, count: int = 3) -> list[str]:
    return [f"{run:%a %Y-%m-%d %H:%M %Z}" for run in schedule.next_runs(after, count)]


def utc(run: datetime) -> str:
    return f"{run.astimezone(UTC):%Y-%m-%d %H:%M}"


@pytest.mark.parametrize(
    ("when", "kind", "spec"),
    [
        ("2026-12-01T09:00", "once", "2026-12-01T09:00:00+00:00"),  # Lisbon is WET in December
        ("2026-07-01T09:00", "once", "2026-07-01T08:00:00+00:00"),  # and WEST in July
        ("2026-07-01T09:00+05:00", "once", "2026-07-01T04:00:00+00:00"),
        ("2026-07-01T09:00Z", "once", "2026-07-01T09:00:00+00:00"),
        ("in 90 seconds", "once", "2026-06-10T12:01:30+00:00"),
        ("in 1 hour and 30 minutes", "once", "2026-06-10T13:30:00+00:00"),
        ("In 2 hours, 5 minutes", "once", "2026-06-10T14:05:00+00:00"),
        ("in an hour", "once", "2026-06-10T13:00:00+00:00"),
        ("in 1.5 days", "once", "2026-06-12T00:00:00+00:00"),
        ("0 9 * * 1-5", "cron", "0 9 * * 1-5"),
        ("  0   9 * *   1-5 ", "cron", "0 9 * * 1-5"),
        ("every 30 minutes", "interval", "1800"),
        ("every minute", "interval", "60"),
        ("every 2 hours", "interval", "7200"),
    ],
)
def test_every_form_of_when(when: str, kind: str, spec: str) -> None:
    schedule = parse_when(when, LISBON, NOW)
    assert (schedule.kind, schedule.spec, schedule.zone) == (kind, spec, "Europe/Lisbon")
    assert schedule.anchor == NOW


def test_a_delay_and_an_interval_count_from_now() -> None:
    assert runs(parse_when("in 90 seconds", LISBON, NOW), NOW) == ["Wed 2026-06-10 13:01 WEST"]
    assert runs(parse_when("every 30 minutes", LISBON, NOW), NOW) == [
        "Wed 2026-06-10 13:30 WEST",
        "Wed 2026-06-10 14:00 WEST",
        "Wed 2026-06-10 14:30 WEST",
    ]
    assert runs(parse_when("0 9 * * 1-5", LISBON, NOW), NOW) == [
        "Thu 2026-06-11 09:00 WEST",
        "Fri 2026-06-12 09:00 WEST",
        "Mon 2026-06-15 09:00 WEST",
    ]


@pytest.mark.parametrize(
    ("when", "message"),
    [
        (
            "2026-06-10T12:59",
            "2026-06-10 12:59 WEST has already passed; give a time in the future",
        ),
        ("2020-01-01T00:00Z", "2020-01-01 00:00 WET has already passed"),
        (
            "in 5 fortnights",
            "Unknown unit 'fortnights': use seconds, minutes, hours, days or weeks.",
        ),
        ("every 3 lightyears", "Unknown unit 'lightyears'"),
        ("in ٣ minutes", "Cannot read the duration '٣ minutes'"),
        ("in １ minute", "Cannot read the duration '１ minute'"),
        ("2026-12-0١T09:00", "Cannot read when="),
        ("", "`when` must be 1 to 200 characters."),
        ("   ", "`when` must be 1 to 200 characters."),
        ("in " + "1" * 198, "`when` must be 1 to 200 characters."),
        ("0 9 * * * *", "A cron expression has five fields (minute hour day month weekday)"),
        ("0 9 * * 8", "Cannot read the day-of-week field '8' of the cron expression."),
        ("0 9 * * 1-5/0", "Cannot read the day-of-week field '1-5/0'"),
        ("60 9 * * *", "Cannot read the cron expression '60 9 * * *'"),
        ("0 0 31 2 *", "The cron expression '0 0 31 2 *' never comes (e.g. 31 February)."),
        ("nonsense", "Cannot read when='nonsense'. Use an ISO 8601 date-time"),
        ("every weekday at 9", "use a cron expression such as '0 9 * * 1-5'"),
        ("in 0 seconds", "The duration must be at least one second."),
        ("in 999999 weeks", "The duration may be at most ten years."),
        ("every 999999 weeks", "The duration may be at most ten years."),
        ("in", "Cannot read when='in'"),
    ],
)
def test_refusals_say_what_would_work(when: str, message: str) -> None:
    with pytest.raises(WhenError) as refused:
        parse_when(when, LISBON, NOW)
    assert message in str(refused.value)


def test_a_time_beyond_the_calendar_is_refused_not_crashed_on() -> None:
    with pytest.raises(WhenError, match="too far in the future"):
        parse_when("9999-12-31T23:59", NEW_YORK, NOW)  # 10000-01-01 in UTC


def test_when_of_exactly_200_characters_is_read() -> None:
    assert parse_when("in 1 hour" + "," * 191, LISBON, NOW).kind == "once"  # 200 characters
    with pytest.raises(WhenError, match="1 to 200"):
        parse_when("in 1 hour" + "," * 192, LISBON, NOW)


@pytest.mark.parametrize(
    ("field", "days"),
    [
        ("1-5", ["Mon", "Tue", "Wed", "Thu", "Fri"]),
        ("0", ["Sun"]),
        ("7", ["Sun"]),
        ("*/2", ["Sun", "Tue", "Thu", "Sat"]),
        ("fri-sun", ["Fri", "Sat", "Sun"]),
        ("5-0", ["Fri", "Sat", "Sun"]),
        ("mon,wed", ["Mon", "Wed"]),
        ("6,0", ["Sat", "Sun"]),
        ("*", ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]),
    ],
)
def test_weekdays_are_numbered_as_crontab_numbers_them(field: str, days: list[str]) -> None:
    schedule = parse_when(f"0 9 * * {field}", LISBON, NOW)
    assert {f"{run:%a}" for run in schedule.next_runs(NOW, 7)} == set(days)


def test_the_default_minimum_interval_refuses_every_minute() -> None:
    minimum = Settings(_env_file=None).task_min_interval
    assert minimum == 300
    for when in ("every minute", "*/1 * * * *", "every 4 minutes"):
        with pytest.raises(WhenError) as refused:
            check_frequency(parse_when(when, LISBON, NOW), NOW, minimum)
        assert "tasks may run at most every 5 minutes" in str(refused.value)
    with pytest.raises(WhenError, match="That runs every 1 minute;"):
        check_frequency(parse_when("* 9 * * *", LISBON, NOW), NOW, minimum)
    for when in ("every 30 minutes", "every 5 minutes", "*/5 * * * *", "0 9 * * *", "in 1 minute"):
        check_frequency(parse_when(when, LISBON, NOW), NOW, minimum)


# Lisbon: clocks go back 02:00 WEST -> 01:00 WET on Sun 2026-10-25, forward 01:00 -> 02:00 on
# Sun 2026-03-29. New York: back 02:00 EDT -> 01:00 EST on Sun 2026-11-01, forward 02:00 ->
# 03:00 on Sun 2026-03-08.
DST = [
    (LISBON, datetime(2026, 10, 23, tzinfo=UTC), ["08:00", "08:00", "09:00", "09:00"]),
    (LISBON, datetime(2026, 3, 27, tzinfo=UTC), ["09:00", "09:00", "08:00", "08:00"]),
    (NEW_YORK, datetime(2026, 10, 30, tzinfo=UTC), ["13:00", "13:00", "14:00", "14:00"]),
    (NEW_YORK, datetime(2026, 3, 6, tzinfo=UTC), ["14:00", "14:00", "13:00", "13:00"]),
]


@pytest.mark.parametrize(("zone", "after", "utc_hours"), DST)
def test_a_daily_cron_stays_at_nine_local_across_a_dst_change(
    zone: zoneinfo.ZoneInfo, after: datetime, utc_hours: list[str]
) -> None:
    schedule = parse_when("0 9 * * *", zone, after)
    days = schedule.next_runs(after, 4)
    assert [f"{run:%H:%M}" for run in days] == ["09:00"] * 4
    assert [f"{run.astimezone(UTC):%H:%M}" for run in days] == utc_hours


@pytest.mark.parametrize(("zone", "after", "utc_hours"), DST)
def test_an_interval_keeps_real_hours_across_a_dst_change(
    zone: zoneinfo.ZoneInfo, after: datetime, utc_hours: list[str]
) -> None:
    schedule = parse_when("every 6 hours", zone, after)
    times = [run.astimezone(UTC) for run in schedule.next_runs(after, 12)]
    assert {b - a for a, b in pairwise(times)} == {timedelta(hours=6)}
    assert [f"{run.astimezone(UTC):%H:%M}" for run in times[:4]] == [
        "06:00",
        "12:00",
        "18:00",
        "00:00",
    ]


@pytest.mark.parametrize(
    ("zone", "after", "expected"),
    [
        # the hour that happens twice: each wall-clock time runs once, at its first occurrence
        (LISBON, datetime(2026, 10, 24, 22, tzinfo=UTC), ["23:00", "00:00", "02:00", "03:00"]),
        (NEW_YORK, datetime(2026, 11, 1, 2, tzinfo=UTC), ["03:00", "04:00", "05:00", "07:00"]),
        # the hour that is skipped: its run is when the clock has moved on, no run twice
        (NEW_YORK, datetime(2026, 3, 8, 4, tzinfo=UTC), ["05:00", "06:00", "07:00", "08:00"]),
    ],
)
def test_an_hourly_cron_moves_on_through_a_dst_change(
    zone: zoneinfo.ZoneInfo, after: datetime, expected: list[str]
) -> None:
    times = parse_when("0 * * * *", zone, after).next_runs(after, 4)
    assert [f"{run.astimezone(UTC):%H:%M}" for run in times] == expected


def test_a_cron_time_in_the_fold_runs_once_a_day_and_never_goes_back() -> None:
    """APScheduler 3's own cron trigger returns 01:30 again and again here."""
    after = datetime(2026, 10, 31, 20, tzinfo=UTC)
    times = parse_when("30 1 * * *", NEW_YORK, after).next_runs(after, 4)
    assert [utc(run) for run in times] == [
        "2026-11-01 05:30",  # 01:30 EDT, the first of the two
        "2026-11-02 06:30",
        "2026-11-03 06:30",
        "2026-11-04 06:30",
    ]
    trigger = cron_trigger("*/20 1 * * *", LISBON)
    previous, now, fired = None, datetime(2026, 10, 24, 23, tzinfo=UTC), []
    for _ in range(8):
        upcoming = trigger.get_next_fire_time(previous, now)
        assert upcoming is not None
        fired.append(upcoming.astimezone(UTC))
        previous, now = upcoming, upcoming
    assert fired == sorted(set(fired))


def test_a_cron_time_in_the_gap_runs_once_when_the_clock_has_moved_on() -> None:
    after = datetime(2026, 3, 7, tzinfo=UTC)
    times = parse_when("30 2 * * *", NEW_YORK, after).next_runs(after, 3)
    assert [f"{run:%Y-%m-%d %H:%M %Z}" for run in times] == [
        "2026-03-07 02:30 EST",
        "2026-03-08 03:30 EDT",
        "2026-03-09 02:30 EDT",
    ]


def test_a_one_off_time_in_the_fold_or_the_gap_resolves_to_a_clear_time() -> None:
    fold = parse_when("2026-10-25T01:30", LISBON, NOW)  # 01:30 happens twice: the first
    assert runs(fold, NOW) == ["Sun 2026-10-25 01:30 WEST"]
    assert fold.spec == "2026-10-25T00:30:00+00:00"
    gap = parse_when("2026-03-08T02:30", NEW_YORK, datetime(2026, 3, 1, tzinfo=UTC))
    assert runs(gap, datetime(2026, 3, 1, tzinfo=UTC)) == ["Sun 2026-03-08 03:30 EDT"]
    assert gap.spec == "2026-03-08T07:30:00+00:00"


def test_a_schedule_kept_and_read_back_gives_the_same_runs() -> None:
    """The book keeps kind, spec, zone and anchor; an interval counts from its anchor."""
    made = parse_when("every 45 minutes", LISBON, NOW)
    later = NOW + timedelta(hours=5, minutes=7)
    again = Schedule(kind=made.kind, spec=made.spec, zone=made.zone, anchor=made.anchor)
    assert again.next_runs(later, 2) == made.next_runs(later, 2)
    assert [utc(run) for run in again.next_runs(later, 2)] == [
        "2026-06-10 17:15",
        "2026-06-10 18:00",
    ]


def test_a_one_off_run_has_no_runs_after_it() -> None:
    schedule = parse_when("in 10 minutes", LISBON, NOW)
    assert schedule.next_runs(NOW + timedelta(minutes=10), 3) == []
    assert schedule.shortest_gap(NOW) is None


def test_describe_and_duration_words() -> None:
    assert parse_when("in 5 minutes", LISBON, NOW).describe() == "once"
    assert parse_when("0 9 * * 1-5", LISBON, NOW).describe() == "cron 0 9 * * 1-5"
    assert parse_when("every 90 minutes", LISBON, NOW).describe() == "every 1 hour 30 minutes"
    assert parse_when("every day", LISBON, NOW).describe() == "every 1 day"
    assert duration_words(0) == "0 seconds"
    assert duration_words(1) == "1 second"
    assert duration_words(5400) == "1 hour 30 minutes"
    assert duration_words(694861) == "1 week 1 day 1 hour 1 minute 1 second"
    assert duration_words(2 * 86400 + 2) == "2 days 2 seconds"
