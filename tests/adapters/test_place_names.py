"""The names each platform's place module gives people, chats, sessions and envelopes: the
formats every key in Redis and row in SQL was written with, and the core's chat rule agrees."""

from __future__ import annotations

from adapters.http import place as http
from adapters.places import telegram
from adapters.slack import place as slack
from bot.vocabulary.chats import chat_of


def test_telegram_names() -> None:
    assert telegram.person(42) == "tg:42"
    assert telegram.chat_key(-100123) == "tg:-100123"
    assert telegram.envelope_id(987) == "tg:987"
    topic = telegram.Place(chat_id=-100123, thread_id=7, chat_type="supergroup")
    assert topic.session == "tg:-100123:7"
    assert chat_of(topic.session) == telegram.chat_key(-100123)
    assert telegram.Place(chat_id=42).session == telegram.chat_key(42) == telegram.person(42)


def test_slack_names() -> None:
    assert slack.person("U1") == "slack:U1"
    assert slack.user_of("slack:U1") == "U1"
    assert slack.user_of("tg:1") is None
    assert slack.chat_key("T1", "C1") == "slack:T1:C1"
    thread = slack.Place(team="T1", channel="C1", thread_ts="1700000000.1")
    assert thread.session == "slack:T1:C1:1700000000.1"
    assert chat_of(thread.session) == slack.chat_key("T1", "C1")
    assert thread.envelope_id("1700000001.2") == "slack:T1:C1:1700000001.2"


def test_http_names() -> None:
    made = http.new_session_id()
    assert http.SESSION_ID.fullmatch(made)
    assert http.session_key(made) == f"http:{made}"
    assert http.session_id(http.session_key(made)) == made
    assert http.is_session_key(f"http:{made}") and http.is_ours(f"http:{made}")
    assert not http.is_session_key("http:not-an-id") and http.is_ours("http:not-an-id")
    assert not http.is_session_key(f"tg:{made}") and not http.is_ours("tg:1")
    assert (http.TOKEN_HOLDER, http.LOCAL, http.PUBLIC) == (
        "http:token",
        "http:local",
        "http:public",
    )
