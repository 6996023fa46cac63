"""What a reply said aloud says (`bot.session.voice`): the answer without what does not read
aloud, cut at a sentence's end within the bound; and whether the person spoke the message
it answers, from the message or, for a decision's run, from the context."""

from __future__ import annotations

from bot.files.voice import MARK
from bot.session.voice import speakable, spoke
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.messages import Message, TextBlock, ToolResultBlock
from bot.vocabulary.state import SessionState
from bot.vocabulary.voice import answers_aloud, option, voice_mode

ANN = Sender(id="tg:1", name="Ann")


def envelope(heard: str = "", kind: str = "message") -> Envelope:
    return Envelope(id="e1", session="tg:1", sender=ANN, text="hi", heard=heard, kind=kind)


def said(role: str, *texts: str) -> Message:
    return Message(role=role, content=[TextBlock(text=t) for t in texts])


def test_markdown_code_and_addresses_are_not_said() -> None:
    answer = (
        "# Plan\n\nHere is **the fix** and _why_:\n\n```python\nprint('x')\n```\n\n"
        "- see [the docs](https://example.com/docs) or https://example.org/a?b=c\n"
        "- run `make test`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n> quoted ~~not~~ words"
    )
    assert speakable(answer, 1000) == (
        "Plan Here is the fix and why: see the docs or run make test a, b. 1, 2. quoted not words"
    )


def test_a_long_answer_is_cut_at_the_last_sentence_end_within_the_bound() -> None:
    answer = "One sentence here. Two sentences here! Three sentences, and more words follow"
    assert speakable(answer, 45) == "One sentence here. Two sentences here!"
    assert speakable(answer, 20) == "One sentence here."
    assert speakable("word " * 50, 23) == "word word word word"  # no sentence end: at a space
    assert speakable("x" * 50, 10) == "x" * 10
    assert len(speakable(answer, 10_000)) == len(answer)


def test_a_transcript_is_spoken_a_typed_message_is_not() -> None:
    assert spoke([envelope(heard="hello there")], SessionState())
    assert not spoke([envelope()], SessionState())
    asked_aloud = SessionState(
        messages=[
            said("user", f"{MARK}\nwhat is the weather"),
            Message(role="assistant", content=[TextBlock(text="Let me look.")]),
            Message(role="user", content=[ToolResultBlock(tool_use_id="c1", content="ok")]),
        ]
    )
    decision = [envelope(kind="decision")]
    assert spoke(decision, asked_aloud)  # the turn's message, found past the tool's result
    typed_later = SessionState(messages=[*asked_aloud.messages, said("user", "and tomorrow?")])
    assert not spoke(decision, typed_later)


def test_modes() -> None:
    assert voice_mode("spoken", "off") == "spoken"
    assert voice_mode("loud", "on") == "on"
    assert voice_mode(None, "off") == "off"
    assert answers_aloud("on", spoke=False)
    assert answers_aloud("spoken", spoke=True)
    assert not answers_aloud("spoken", spoke=False)
    assert not answers_aloud("off", spoke=True)
    assert option("tg:1") == "voice:tg:1"
