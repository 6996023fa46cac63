"""A chat's settings as a turn's config (`chat_config`): its mode and reasoning, and a web
chat's tools and output schema as the JSON they are kept as; a kept value that is not one a
run could have (Redis edited by hand) is left out rather than failing the chat's turns."""

from __future__ import annotations

import json

import pytest

from bot.mailbox.saved_state import TurnOptions
from bot.session.turn import chat_config
from bot.vocabulary.run_config import RunConfig

SCHEMA = {"type": "object", "required": ["answer"]}


def test_a_chats_settings_are_its_turns_config() -> None:
    options = TurnOptions(
        "claude-x", "plan_execute", "on", '["calculator", "current_time"]', json.dumps(SCHEMA)
    )
    assert chat_config(options) == RunConfig(
        mode="plan_execute", reasoning="on", tools=("calculator", "current_time"),
        output_schema=SCHEMA,
    )  # fmt: skip
    assert chat_config(TurnOptions()) == RunConfig()
    assert chat_config(TurnOptions(tools="[]")).tools == ()  # none: a turn that uses no tool


@pytest.mark.parametrize(
    ("tools", "schema"),
    [
        ('"calculator"', None),
        ("[1]", None),
        ("[", None),
        (None, '{"type": 5}'),
        (None, "[]"),
        (None, '{"pattern": "(?=a)"}'),
    ],
)
def test_a_kept_value_no_run_could_have_is_left_out(
    tools: str | None, schema: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    config = chat_config(TurnOptions(None, "plan_execute", "off", tools, schema))
    assert config == RunConfig(mode="plan_execute", reasoning="off")
    assert "left out" in caplog.text
