"""Approval prompts in Slack: valid Block Kit, exact arguments, opaque button values."""

from __future__ import annotations

import html
import json
from typing import Any

from slack_sdk.models.blocks import Block

from adapters.slack import confirm
from adapters.slack.ingress import clean
from bot.vocabulary.events import PendingCall


def valid(blocks: list[dict[str, Any]]) -> None:
    """slack_sdk's own models check Block Kit's limits (text lengths, element counts)."""
    assert len(blocks) <= 50
    for raw in blocks:
        block = Block.parse(raw)
        assert block is not None
        block.validate_json()


def test_the_prompt_shows_exact_arguments_and_buttons_carry_only_the_id() -> None:
    calls = [PendingCall(call_id="c1", name="launch", arguments={"target": "rocket ✨", "n": 3})]
    blocks = confirm.prompt(calls, 600, "abc123", can_remember=True, requester="U0ANN")
    valid(blocks)
    text = str(blocks)
    assert '"target": "rocket ✨"' in text and "<@U0ANN>" in text and "10 min" in text
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    assert {e["action_id"]: e["value"] for e in actions["elements"]} == {
        "parley_approve": "abc123",
        "parley_deny": "abc123",
        "parley_remember": "abc123",
    }


def test_huge_arguments_are_cut_to_fit_a_section_and_remember_can_be_left_out() -> None:
    calls = [PendingCall(call_id="c1", name="write", arguments={"text": "x" * 10_000})]
    blocks = confirm.prompt(calls, 60, "id", can_remember=False, requester="")
    valid(blocks)
    assert "more characters" in str(blocks)
    assert "parley_remember" not in str(blocks)


def test_settled_prompts_lose_their_buttons_and_say_who_decided() -> None:
    calls = [PendingCall(call_id="c1", name="launch", arguments={})]
    blocks = confirm.prompt(calls, 60, "id", can_remember=True, requester="U1")
    once = confirm.with_outcome(blocks, "approved", "<@U1>")
    valid(once)
    assert not [b for b in once if b["type"] in ("actions", "context")]
    assert "✅ Approved by <@U1>" in str(once)
    twice = confirm.with_outcome(once, "expired")  # a late settle replaces, never stacks, outcomes
    assert "Approved" not in str(twice) and str(twice).count("Expired") == 1


def test_the_bots_mention_and_slack_escapes_are_removed_from_the_text() -> None:
    assert clean("<@U0BOT> what is 1 &lt; 2 &amp;&amp; 3 &gt; 2?", "U0BOT") == (
        "what is 1 < 2 && 3 > 2?"
    )
    assert clean("hey <@U0BOT|parley>, help <@U0ANN>", "U0BOT") == "hey , help <@U0ANN>"


def test_arguments_that_look_like_markup_show_as_written_and_never_act() -> None:
    """mrkdwn reads `&`, `<` and `>` as markup: `<!channel>` would notify everyone."""
    arguments = {"html": "<b>x</b> & <!channel> <https://example.com|click>"}
    calls = [PendingCall(call_id="c1", name="post<&>", arguments=arguments)]
    blocks = confirm.prompt(calls, 60, "id", can_remember=False, requester="U0ANN")
    valid(blocks)
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    shown = "\n".join(sections)
    assert "<!channel>" not in shown and "<b>" not in shown and "<https" not in shown
    assert html.unescape(shown).count(json.dumps(arguments["html"])) == 1
    assert "post<&>" in html.unescape(confirm.summary(calls))
    assert "<@U0ANN>" in str(blocks)  # Parley's own mention still is one


def test_arguments_full_of_escapes_are_cut_to_fit_a_section() -> None:
    calls = [PendingCall(call_id="c1", name="write", arguments={"text": "<&>" * 5_000})]
    blocks = confirm.prompt(calls, 60, "id", can_remember=False, requester="")
    valid(blocks)
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    (arguments,) = [text for text in sections if "```" in text]
    assert len(arguments) <= 3_000 and "more characters" in arguments
    body = arguments.split("```\n")[1].split("\n…")[0]
    assert html.unescape(body).startswith('{\n  "text": "<&><&>')


PROGRAM = 'print("```")  # <!channel> & more\nprint(1 < 2)\n'


def test_a_program_is_shown_exactly_in_a_preformatted_block() -> None:
    """Not mrkdwn: the "```" and the markup-like text in the program show as written."""
    calls = [PendingCall(call_id="c1", name="run_python", arguments={"code": PROGRAM})]
    blocks = confirm.prompt(calls, 60, "id", can_remember=False, requester="U0ANN")
    valid(blocks)
    (rich,) = [b for b in blocks if b["type"] == "rich_text"]
    preformatted = rich["elements"][1]
    assert preformatted["type"] == "rich_text_preformatted"
    assert preformatted["elements"] == [{"type": "text", "text": PROGRAM}]
    assert "<!channel>" not in str([b for b in blocks if b["type"] == "section"])
    settled = confirm.with_outcome(blocks, "approved", "<@U1>")
    assert rich in settled  # a decided prompt still shows what was run


def test_calls_beyond_a_messages_blocks_are_counted_not_dropped_silently() -> None:
    calls = [
        PendingCall(call_id=f"c{i}", name="run_python", arguments={"code": f"print({i})\n"})
        for i in range(30)
    ]
    blocks = confirm.prompt(calls, 60, "id", can_remember=False, requester="")
    valid(blocks)
    assert "… and 8 more calls, not shown here." in str(blocks)
