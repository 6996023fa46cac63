"""A chat's settings on SQLite and PostgreSQL: a topic's instruction before its chat's,
cleared back to it; tools switched off per chat, twice changing nothing; the activation."""

from __future__ import annotations

from bot.store.chats import ChatSettings
from bot.store.database import Database
from bot.store.turn_facts import TurnReads
from bot.vocabulary.chat_settings import ChatRules
from bot.vocabulary.chats import chat_of


async def rules(db: Database, session: str) -> ChatRules:
    """What a turn in `session` reads of its chat's settings."""
    return (await TurnReads(db.engine).read("tg:1", chat_of(session), session, "tg:1")).rules


async def test_a_topic_has_its_own_instruction_or_its_chats(db: Database) -> None:
    chats = ChatSettings(db.engine)
    assert await rules(db, "tg:-100") == ChatRules()
    await chats.set_instruction("tg:-100", "answer in French")
    assert (await rules(db, "tg:-100:7")).instruction == "answer in French"
    await chats.set_instruction("tg:-100:7", "answer in German")
    assert (await rules(db, "tg:-100:7")).instruction == "answer in German"
    assert (await rules(db, "tg:-100")).instruction == "answer in French"
    assert (await rules(db, "tg:-200")).instruction is None
    await chats.set_instruction("tg:-100:7", None)
    assert (await rules(db, "tg:-100:7")).instruction == "answer in French"
    assert await chats.instruction("tg:-100:7") is None


async def test_tools_are_switched_off_per_chat(db: Database) -> None:
    chats = ChatSettings(db.engine)
    await chats.switch("slack:T:C1", "web_fetch", on=False, by="slack:U1")
    await chats.switch("slack:T:C1", "web_fetch", on=False, by="slack:U1")
    assert (await rules(db, "slack:T:C1:171.1")).tools_off == {"web_fetch"}
    assert await chats.tools_off("slack:T:C2") == frozenset()
    await chats.switch("slack:T:C1", "web_fetch", on=True, by="slack:U1")
    assert await chats.tools_off("slack:T:C1") == frozenset()


async def test_the_activation_is_kept_beside_the_instruction(db: Database) -> None:
    chats = ChatSettings(db.engine)
    assert await chats.activation("tg:-100") is None
    await chats.set_instruction("tg:-100", "be brief")
    await chats.set_activation("tg:-100", "always")
    assert await chats.activation("tg:-100") == "always"
    assert (await rules(db, "tg:-100")).instruction == "be brief"
    await chats.set_activation("tg:-100", None)
    assert await chats.activation("tg:-100") is None
