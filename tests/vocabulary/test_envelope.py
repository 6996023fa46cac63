"""Envelopes wait in Redis across worker upgrades, so each shape ever queued must still read;
the ids Parley makes for them are its dedup keys."""

from __future__ import annotations

import json

from bot.vocabulary.envelope import (
    Envelope,
    Sender,
    decision_id,
    expiry_id,
    task_of_run,
    task_run_id,
)


def test_an_expiry_queued_by_an_older_worker_is_still_an_expiry() -> None:
    old = {
        "id": "expire:c1",
        "session": "tg:1",
        "kind": "decision",
        "sender": {"id": "parley:timeout", "name": "", "is_admin": False},
        "confirmation_id": "c1",
        "approve": False,
    }
    envelope = Envelope.model_validate_json(json.dumps(old))
    assert envelope.kind == "expiry" and envelope.is_decision and not envelope.is_plain


def test_an_expiry_and_a_decision_keep_their_kinds_through_redis() -> None:
    for kind, sender in (("expiry", "timeout"), ("decision", "tg:7")):
        envelope = Envelope(id="d1", session="tg:1", kind=kind, sender=Sender(id=sender))
        again = Envelope.model_validate_json(envelope.model_dump_json())
        assert again.kind == kind and again.is_decision


def test_a_message_is_no_decision() -> None:
    envelope = Envelope(id="m1", session="tg:1", text="hi", sender=Sender(id="tg:7"))
    assert not envelope.is_decision and envelope.is_plain


def test_a_task_run_id_names_its_task_and_nothing_else_does() -> None:
    run = task_run_id(42, 1_790_000_000.4)
    assert run == "task:42:1790000000"
    assert task_of_run(run) == 42
    for other in (decision_id("c1"), expiry_id("c1"), "task:42", "task:٤٢:1", "task:x:1"):
        assert task_of_run(other) is None, other
