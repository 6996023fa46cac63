"""The models a deployment serves, by name or alias, and the API that serves each.

`PARLEY_MODEL` is the default; `PARLEY_MODELS` lists the others a chat (`/model`), a person's
preference, an HTTP session or an API run may name, each as `name` or `alias=name`, a name
written `anthropic:NAME` or `openai:NAME` where its words do not say which API serves it;
`PARLEY_FALLBACK_MODELS` is the chain a turn goes on with when a model stays overloaded, rate
limited or out of reach (`bot.agent.model_call`). Without `PARLEY_MODELS` any model is
served that the default's API serves, or another API the deployment has a key or an
endpoint for. A model is known everywhere
else by its name without the API's prefix (what the API is sent, what the record and the
metrics show); this is where such a name finds its API again.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.config.settings import ConfigError, Settings
from bot.llm.registry import ModelRef, check_provider, resolve_model


@dataclass(frozen=True)
class Served:
    """See the module docstring."""

    default: str
    refs: dict[str, ModelRef]  # every model the settings name, by its name
    aliases: dict[str, str]  # alias -> name
    listed: bool  # PARLEY_MODELS is set: only the models it names (and the default)
    fallbacks: tuple[str, ...]
    settings: Settings

    @classmethod
    def of(cls, settings: Settings) -> Served:
        """The deployment's models; ConfigError naming the variable of one no API serves."""
        default = _resolved("PARLEY_MODEL", settings.model)
        refs = {default.model: default}
        aliases: dict[str, str] = {}
        for item in settings.models:
            alias, _, spec = item.rpartition("=")
            ref = _resolved("PARLEY_MODELS", spec.strip())
            refs.setdefault(ref.model, ref)
            if alias.strip():
                aliases[alias.strip()] = ref.model
        fallbacks = []
        for item in settings.fallback_models:
            ref = refs.get(aliases.get(item, item)) or _resolved("PARLEY_FALLBACK_MODELS", item)
            refs.setdefault(ref.model, ref)
            fallbacks.append(ref.model)
        listed = bool(settings.models)
        return cls(default.model, refs, aliases, listed, tuple(fallbacks), settings)

    def check(self) -> None:
        """A ConfigError naming the key that a model the settings name needs and lacks."""
        for ref in self.refs.values():
            check_provider(self.settings, ref)

    def name(self, wanted: str) -> str | None:
        """The model `wanted` names (a name or an alias), if this deployment serves it."""
        wanted = self.aliases.get(wanted, wanted)
        if wanted in self.refs:
            return wanted
        try:
            ref = resolve_model(wanted)
        except ConfigError:
            return None
        if ref.model in self.refs:
            return ref.model if self.refs[ref.model] == ref else None
        if self.listed:
            return None
        if ref.provider == self.refs[self.default].provider:
            return ref.model  # the default's API: the deployment runs on it
        try:
            check_provider(self.settings, ref)
        except ConfigError:
            return None
        return ref.model

    def ref(self, name: str) -> ModelRef:
        """The API that serves the model `name` (as `name` gives it)."""
        return self.refs.get(name) or resolve_model(name)

    def names(self) -> list[str]:
        """The models this deployment names, as the record and the metrics show them."""
        return list(self.refs)

    def sentence(self) -> str:
        """The models one may name here, for a person who named another."""
        if not self.listed:
            return f"The default is {self.default}."
        named = [f"{alias} ({name})" for alias, name in self.aliases.items()]
        rest = [name for name in self.refs if name not in self.aliases.values()]
        return "You may name: " + ", ".join(rest + named) + "."


def served_model(settings: Settings, wanted: str) -> str | None:
    """The model `wanted` names, if this deployment serves it (`Served.name`)."""
    return Served.of(settings).name(wanted)


def _resolved(variable: str, spec: str) -> ModelRef:
    try:
        return resolve_model(spec)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("PARLEY_MODEL:", f"{variable}:", 1)) from None
