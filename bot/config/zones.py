"""Time zones by their IANA names, and nothing else a zoneinfo directory holds."""

from __future__ import annotations

import functools
import zoneinfo


def known_zone(name: str) -> zoneinfo.ZoneInfo:
    """The IANA zone `name`. Only the zone database's names are taken: `ZoneInfo` alone
    also opens what lies beside them (`Europe` is a directory, `zone.tab` no zone file) and
    fails with errors that show the machine's paths."""
    if name not in _zone_names():
        raise ValueError(f"unknown IANA time zone {name[:64]!r} (e.g. Europe/Berlin)")
    return zoneinfo.ZoneInfo(name)


# Files in a zoneinfo directory that name no place: the machine's own zone (which another
# machine reads differently), a POSIX default, and tzdata's placeholder.
NOT_PLACES = frozenset({"localtime", "posixrules", "Factory"})


@functools.cache
def _zone_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) - NOT_PLACES
