"""Each helper a turn starts has a status line in the reply: running, then done or failed."""

from __future__ import annotations

from adapters.chat.transcript import Transcript
from bot.vocabulary import events as ev


def test_each_helper_has_a_status_line_that_follows_it() -> None:
    shown = Transcript()
    for n in range(2):
        task = {"task": f"look up   thing {n}\nin detail"}
        shown.apply(ev.ToolCallStart(call_id=f"c{n}", name="delegate", arguments=task))
    shown.apply(ev.ToolCallStart(call_id="c9", name="calculator", arguments={"expression": "1"}))
    assert (
        shown.body() == "⏳ Helper: look up thing 0 in detail\n⏳ Helper: look up thing 1 in detail"
    )
    shown.apply(ev.ToolCallResult(call_id="c1", name="delegate", content="no", is_error=True))
    shown.apply(ev.ToolCallResult(call_id="c0", name="delegate", content="42"))
    shown.apply(ev.TextDelta(text="Both done."))
    assert shown.body() == (
        "✅ Helper: look up thing 0 in detail\n❌ Helper: look up thing 1 in detail\n\nBoth done."
    )


def test_a_platform_that_shows_helpers_its_own_way_has_no_status_lines() -> None:
    shown = Transcript()
    shown.helpers_inline = False
    shown.apply(ev.ToolCallStart(call_id="c0", name="delegate", arguments={"task": "look"}))
    shown.apply(ev.TextDelta(text="Looking."))
    assert shown.body() == "Looking."
    shown.helpers_inline = True  # the reply is edited from now on: the line shows again
    assert shown.body() == "⏳ Helper: look\n\nLooking."
