"""`/memory digest [on | off]`: said to anyone, switched by the person in private and by an
admin in a group, on a real database; a deployment without digests says so."""

from __future__ import annotations

from adapters.chat.digest_commands import (
    ADMINS_ONLY,
    NONE_HERE,
    USAGE,
    answer,
    asked_digest,
)
from bot.store.database import Database
from bot.store.digests import Digests
from tests.support.databases import each_database, opened  # noqa: F401 (fixtures)

ANN, GROUP = "tg:1", "chat:tg:-100500"


def test_the_command_is_told_from_the_list_and_search() -> None:
    assert asked_digest("digest") == ""
    assert asked_digest("  Digest OFF ") == "off"
    assert asked_digest("") is None
    assert asked_digest("search my dog") is None


async def test_a_person_switches_their_own_and_only_admins_a_groups(db: Database) -> None:
    digests = Digests(db.engine)

    async def said(scope: str, words: str, *, may_change: bool = True) -> str:
        return await answer(digests, scope, words, enabled=True, may_change=may_change, by=ANN)

    assert (await said(ANN, "")).startswith("The daily digest about you is on.")
    assert "keep no daily digest about you" in await said(ANN, "off")
    assert await digests.off([ANN, GROUP]) == {ANN}
    assert (await said(ANN, "")).startswith("The daily digest about you is off.")
    assert await said(GROUP, "off", may_change=False) == ADMINS_ONLY
    assert await digests.off([GROUP]) == set()
    assert "again" in await said(ANN, "on")
    assert await digests.off([ANN]) == set()
    assert await said(ANN, "maybe") == USAGE
    assert (await said(GROUP, "")).startswith("The daily digest of this chat is on.")


async def test_a_deployment_without_digests_says_so(db: Database) -> None:
    digests = Digests(db.engine)
    said = await answer(digests, ANN, "off", enabled=False, may_change=True, by=ANN)
    assert said == NONE_HERE
    assert await digests.off([ANN]) == set()
