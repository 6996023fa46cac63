"""PARLEY_TASKS read into tasks: a run config comes along, its model checked at start-up."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.config.settings import ConfigError, Settings
from bot.config.values import ConfiguredTask
from bot.vocabulary.run_config import RunConfig
from worker.scheduler import configured_tasks

NOW = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


def settings_with(config: RunConfig) -> Settings:
    task = ConfiguredTask(
        name="digest", when="every 2 hours", session="tg:12", prompt="Post it", config=config
    )
    return Settings(model="claude-test", anthropic_api_key="key", tasks=[task])


def test_a_configured_task_brings_its_run_config() -> None:
    schema = {"type": "object"}
    (task,) = configured_tasks(settings_with(RunConfig(output_schema=schema)), NOW)
    assert task.config == RunConfig(output_schema=schema) and task.name == "digest"


def test_a_model_the_deployment_does_not_serve_is_a_one_line_error() -> None:
    with pytest.raises(ConfigError) as caught:
        configured_tasks(settings_with(RunConfig(model="gpt-4o")), NOW)
    assert str(caught.value) == (
        "PARLEY_TASKS: task 'digest': this deployment's API does not serve 'gpt-4o'"
    )
