"""Paired people on SQLite and PostgreSQL: kept with who approved them, found by id, removed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.store.database import Database
from bot.store.pairings import PairedPeople


async def test_paired_people_are_kept_found_listed_and_removed(db: Database) -> None:
    paired = PairedPeople(db.engine)
    assert not await paired.is_paired("tg:5") and await paired.all() == []
    first = await paired.add("tg:5", "telegram", "tg:9")
    await paired.add("slack:U2", "slack", "cli")
    assert await paired.is_paired("tg:5") and await paired.is_paired("slack:U2")
    assert not await paired.is_paired("tg:6")
    (ann, bob) = await paired.all()
    assert (ann.person, ann.platform, ann.approved_by) == ("tg:5", "telegram", "tg:9")
    assert abs(ann.approved_at - datetime.now(UTC)) < timedelta(minutes=1)
    assert ann.approved_at.tzinfo is not None and ann == first
    assert (bob.person, bob.approved_by) == ("slack:U2", "cli")
    again = await paired.add("tg:5", "telegram", "tg:8")  # approved again: the newer approval
    assert [p.approved_by for p in await paired.all() if p.person == "tg:5"] == ["tg:8"]
    assert again.approved_by == "tg:8"
    assert await paired.remove("tg:5")
    assert not await paired.remove("tg:5")  # gone already
    assert not await paired.is_paired("tg:5")
    assert [p.person for p in await paired.all()] == ["slack:U2"]
