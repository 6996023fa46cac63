"""Grants ("Always allow") on SQLite and PostgreSQL: per person and chat, idempotent, and
revoked only within the chat (and person) they are asked for."""

from __future__ import annotations

import pytest

from bot.store.database import Database
from bot.store.grants import Grants

ANN, BOB, ADA = "tg:1", "tg:2", "tg:9"
GROUP, OTHER = "tg:-100", "tg:-200"


@pytest.fixture
def grants(db: Database) -> Grants:
    return Grants(db.engine)


async def test_a_grant_is_for_one_person_in_one_chat(grants: Grants) -> None:
    await grants.add(ANN, GROUP, ["run_python", "write_file"], ANN)
    await grants.add(ANN, GROUP, ["run_python"], ADA)  # again: the first grant stays
    assert await grants.tools_of(ANN, GROUP) == ["run_python", "write_file"]
    assert await grants.tools_of(BOB, GROUP) == []
    assert await grants.tools_of(ANN, OTHER) == []
    (first, second) = await grants.in_chat(GROUP)
    assert (first.tool, first.granted_by, second.tool) == ("run_python", ANN, "write_file")
    await grants.add(BOB, GROUP, ["launch"], ADA)
    assert [g.person for g in await grants.in_chat(GROUP)] == [ANN, ANN, BOB]
    assert [g.tool for g in await grants.in_chat(GROUP, BOB)] == ["launch"]
    await grants.add(ANN, OTHER, [], ANN)  # nothing to add
    assert [g.chat for g in await grants.of_person(ANN)] == [GROUP, GROUP]


async def test_revoking_stays_within_its_chat_and_person(grants: Grants) -> None:
    await grants.add(ANN, GROUP, ["run_python"], ANN)
    (grant,) = await grants.in_chat(GROUP)
    assert await grants.revoke(grant.id, chat=OTHER) is None
    assert await grants.revoke(grant.id, chat=GROUP, person=BOB) is None
    assert await grants.get(grant.id) == grant
    revoked = await grants.revoke(grant.id, chat=GROUP, person=ANN)
    assert revoked == grant
    assert await grants.revoke(grant.id, chat=GROUP) is None  # already gone
    assert await grants.tools_of(ANN, GROUP) == []
    assert await grants.get(grant.id) is None
