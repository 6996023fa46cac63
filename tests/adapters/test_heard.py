"""What was heard in a person's voice note, shown above the reply: one line, short, its
markdown taken literally (Slack's quote), or a collapsed quote of plain text (Telegram's),
which a long reply's first message makes room for."""

from __future__ import annotations

from adapters.chat.transcript import HEARD_MOST, Transcript, heard_in, quoted
from adapters.telegram.render import TELEGRAM_LIMIT, under_heard, utf16_len
from bot.vocabulary.envelope import Envelope, Sender


def envelope(heard: str) -> Envelope:
    return Envelope(id=f"e{len(heard)}", session="tg:1", heard=heard, sender=Sender(id="tg:1"))


def test_heard_is_one_short_line_of_every_message() -> None:
    said = [envelope("Hello\n  there."), envelope(""), envelope("Second *note*")]
    assert heard_in(said) == "Hello there. … Second *note*"
    long = heard_in([envelope("word " * 1000)])
    assert len(long) == HEARD_MOST and long.endswith("word…")


def test_markdown_in_what_was_heard_is_taken_literally() -> None:
    assert quoted("a *b* <c> [d](e) `f` #1") == r"> 🎤 a \*b\* \<c\> \[d\]\(e\) \`f\` \#1"
    transcript = Transcript("hi")
    transcript.done = "Answer."
    assert transcript.body() == "> 🎤 hi\n\nAnswer."
    transcript.heard_inline = False
    assert transcript.body() == "Answer."


def test_telegram_quotes_it_collapsed_above_the_first_message() -> None:
    first, *rest = under_heard("🎶 *not bold*", "**Bold** answer.")
    assert rest == []
    assert first.text == "🎤 🎶 *not bold*\n\nBold answer."
    length = utf16_len("🎤 🎶 *not bold*")
    quote = {"type": "expandable_blockquote", "offset": 0, "length": length}
    shift = length + 2
    assert first.entities == [quote, {"type": "bold", "offset": shift, "length": 4}]
    chunks = under_heard("x" * 900, "word " * 2000)
    assert len(chunks) > 1 and all(utf16_len(c.text) <= TELEGRAM_LIMIT for c in chunks)
    [alone] = under_heard("", "plain")
    assert (alone.text, alone.entities) == ("plain", [])
    assert under_heard("x", "") == []  # nothing is shown before the answer starts
