"""The model's thinking in a reply's transcript: a quote before the text, its latest part
when it is long, taken back with a retried call, and nothing where the platform shows none."""

from __future__ import annotations

from adapters.chat.transcript import Transcript
from adapters.telegram.render import folded, render
from bot.vocabulary import events as ev
from bot.vocabulary.run_config import reasoning_in, reasoning_of


def fed(*events: ev.AgentEvent, limit: int = 1500) -> Transcript:
    transcript = Transcript()
    transcript.thought_limit = limit
    for event in events:
        transcript.apply(event)
    return transcript


def test_the_thinking_is_a_quote_before_the_text() -> None:
    shown = fed(ev.ThinkingDelta(text="First this.\n\nThen that."), ev.TextDelta(text="Done."))
    assert shown.body() == "> 💭 First this.\n>\n> Then that.\n\nDone."
    assert fed(ev.ThinkingDelta(text="quiet"), limit=0).body() == ""


def test_a_long_thinking_shows_its_latest_part_and_a_retry_takes_it_back() -> None:
    long = fed(ev.ThinkingDelta(text="a" * 100 + "THE END"), limit=20)
    assert long.thought() == "> 💭 …" + ("a" * 100 + "THE END")[-20:]
    retried = fed(
        ev.ThinkingDelta(text="old call"),
        ev.Iteration(number=2),
        ev.ThinkingDelta(text="half"),
        ev.TextReset(reason="retried"),
        ev.ThinkingDelta(text="new"),
    )
    assert retried.thought() == "> 💭 old call\n>\n> new"


def test_telegram_folds_the_quote_it_starts_with() -> None:
    [chunk] = render(fed(ev.ThinkingDelta(text="Hmm."), ev.TextDelta(text="> a quote")).body())
    quotes = [e for e in folded(chunk).entities if "blockquote" in e["type"]]
    thought, answer = quotes
    assert (thought["type"], thought["offset"]) == ("expandable_blockquote", 0)
    assert answer["type"] == "blockquote"  # the answer's own quote stays open


def test_how_a_turn_reasons() -> None:
    assert reasoning_in("private", None, "stream") == "stream"
    assert reasoning_in("group", None, "stream") == "hidden"  # a group reads nothing by default
    assert reasoning_in("group", "on", "off") == "on"  # unless its admin chose
    assert reasoning_in("topic", None, "off") == "off"
    assert reasoning_of("hidden") == "hidden" and reasoning_of("loud") is None
