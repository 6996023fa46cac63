"""The configuration a run runs with (`bot.vocabulary.ran_with`), read off the loop's own
parts once the run's config, its chat's tools switched off and its retries are applied to
them (`bot.agent.loop._configured`), so what is recorded is what the model was given."""

from __future__ import annotations

import json

from bot.agent.deps import AgentDeps, TurnRequest
from bot.llm.base import ToolSpec
from bot.vocabulary.ran_with import RanWith, short_hash
from bot.vocabulary.run_config import RunConfig


def ran_with(deps: AgentDeps, request: TurnRequest, config: RunConfig, reasoning: str) -> RanWith:
    """What a run with these (configured) `deps` for `request` runs with."""
    specs = sorted(deps.tools.specs, key=lambda spec: spec.name)
    settings = deps.settings
    rules = request.chat_rules
    return RanWith(
        model=config.model or request.model or deps.model,
        mode=config.mode,
        tools=tuple(spec.name for spec in specs),
        tools_hash=short_hash(map(_described, specs)),
        output_schema=config.output_schema,
        timeout=config.timeout or settings.turn_timeout,
        token_budget=config.token_budget,
        max_steps=config.max_steps or settings.max_iterations,
        reasoning=reasoning,
        temperature=config.temperature if config.temperature is not None else settings.temperature,
        top_p=config.top_p if config.top_p is not None else settings.top_p,
        retry_attempts=deps.retry.attempts,
        prompt=deps.prompt.parts(request.ctx, rules.instruction, rules.skills_off),
    )


def _described(spec: ToolSpec) -> str:
    """A tool as the model reads it: a changed description or schema is another tool set."""
    return json.dumps([spec.name, spec.description, spec.input_schema], sort_keys=True)
