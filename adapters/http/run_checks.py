"""Whether this deployment can make runs the way a `RunConfig` asks: checked when an API run
or a task is asked for, or a web chat's settings are chosen, so a run never starts with a
model, tool or setting it cannot have."""

from __future__ import annotations

from adapters.web.services import Services
from bot.llm.served import Served
from bot.vocabulary.run_config import RunConfig


async def config_problems(
    services: Services, config: RunConfig, under: str = "config."
) -> tuple[RunConfig, list[str]]:
    """The config with its model named as the provider serves it, and what is wrong with it,
    each problem naming its field after `under` (a web chat's settings are fields of their
    own body, `under` "")."""
    served = Served.of(services.settings)
    problems: list[str] = []
    model = config.model
    if model is not None and (model := served.name(model)) is None:
        problems.append(f"{under}model: this deployment's API does not serve {config.model!r}")
    resolved = model or served.default
    claude = served.ref(resolved).provider == "anthropic"
    if config.temperature is not None and config.temperature > 1 and claude:
        problems.append(f"{under}temperature: Anthropic's models take 0 to 1 ({resolved})")
    if config.tools is not None:
        known = {t.name for t in services.tools.own}
        for status in (await services.tools.servers()).values():
            known.update(status.tools)
        problems += [f"{under}tools: no tool {n!r}" for n in config.tools if n not in known]
    return config.model_copy(update={"model": model}), problems
