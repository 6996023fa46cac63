"""People's preferences on SQLite and PostgreSQL: read in one go, set and cleared one by
one, a zone this machine no longer knows read as unset."""

from __future__ import annotations

from sqlalchemy import update

from bot.store.database import Database
from bot.store.people import PEOPLE, People
from bot.vocabulary.preferences import Preferences


async def test_preferences_are_set_and_cleared_one_by_one(db: Database) -> None:
    people = People(db.engine)
    assert await people.preferences("tg:1") == Preferences()
    now = await people.set("tg:1", {"language": "Portuguese", "instruction": "be brief"})
    assert now == Preferences(language="Portuguese", instruction="be brief")
    now = await people.set("tg:1", {"timezone": "Asia/Tokyo", "instruction": None})
    assert now == Preferences(timezone="Asia/Tokyo", language="Portuguese")
    assert await people.timezone("tg:1") == "Asia/Tokyo"
    assert await people.preferences("tg:2") == Preferences()
    async with db.engine.begin() as connection:
        await connection.execute(update(PEOPLE).values(timezone="Mars/Olympus"))
    assert (await people.preferences("tg:1")).timezone is None
