"""Approval prompts: exact arguments, opaque 64-byte-safe buttons, and the settled text."""

from __future__ import annotations

import json

from adapters.telegram import confirm
from bot.vocabulary.events import PendingCall


def _pre_blocks(prompt: confirm.Prompt) -> list[str]:
    units = prompt.text.encode("utf-16-le")
    return [
        units[e["offset"] * 2 : (e["offset"] + e["length"]) * 2].decode("utf-16-le")
        for e in prompt.entities
        if e["type"] == "pre"
    ]


def test_prompt_shows_each_calls_exact_arguments_in_a_code_block() -> None:
    calls = [
        PendingCall(call_id="a", name="shell", arguments={"command": "rm -rf /tmp/x ✨"}),
        PendingCall(call_id="b", name="email", arguments={"to": "ann@example.com", "n": 2}),
    ]
    prompt = confirm.prompt(calls, expires_in=600)
    blocks = _pre_blocks(prompt)
    assert [json.loads(b) for b in blocks] == [c.arguments for c in calls]
    assert prompt.text.startswith("🔐 Allow shell, email?")
    assert prompt.text.endswith("This request expires in 10 min.")


def test_huge_arguments_are_cut_with_a_note() -> None:
    calls = [PendingCall(call_id="a", name="write", arguments={"text": "x" * 10_000})]
    prompt = confirm.prompt(calls, expires_in=60)
    assert len(prompt.text) < 4_096
    assert "more characters)" in prompt.text


def test_buttons_carry_only_an_opaque_id_within_64_bytes() -> None:
    markup = confirm.keyboard("A" * 32, can_remember=True)
    data = [b.callback_data or "" for row in markup.inline_keyboard for b in row]
    assert len(data) == 3
    assert all(len(d.encode()) <= 64 for d in data)
    assert [confirm.parse(d) for d in data] == [
        ("A" * 32, "approve"),
        ("A" * 32, "deny"),
        ("A" * 32, "remember"),
    ]
    assert len(confirm.keyboard("x", can_remember=False).inline_keyboard) == 1


def test_foreign_or_forged_callback_data_is_not_ours() -> None:
    for data in (None, "", "cf:abc", "cf:abc:z", "cf:" + "a" * 40 + ":y", "cf:a b:y", "x:abc:y"):
        assert confirm.parse(data) is None


def test_settled_prompt_keeps_the_arguments_and_says_who_decided() -> None:
    calls = [PendingCall(call_id="a", name="shell", arguments={"command": "ls"})]
    prompt = confirm.prompt(calls, expires_in=600)
    done = confirm.with_outcome(prompt, "approved", "Ann")
    assert done.text.endswith("✅ Approved by Ann")
    assert "expires in" not in done.text
    assert _pre_blocks(done) == _pre_blocks(prompt)
    expired = confirm.with_outcome(prompt, "expired")
    assert "Expired" in expired.text and "Approved" not in expired.text


PROGRAM = 'import os\n\nfor name in os.listdir("."):\n    print(f"{name!r} \\n")\n'


def test_a_program_is_shown_as_the_program_with_the_other_arguments_as_json() -> None:
    calls = [PendingCall(call_id="a", name="run_python", arguments={"code": PROGRAM, "n": 1})]
    prompt = confirm.prompt(calls, expires_in=600)
    assert _pre_blocks(prompt) == ['{\n  "n": 1\n}', PROGRAM]
    pres = [e for e in prompt.entities if e["type"] == "pre"]
    assert [e.get("language") for e in pres] == ["json", "python"]
    assert "\ncode:\n" + PROGRAM in prompt.text
