"""A person's preferences, and the rules their values follow wherever they are set (the
tool, the chat commands, the operators' API), so each is refused the same way everywhere.

They follow the person across chats and platforms and are applied to every turn that is
theirs: the time zone to the time stamps and schedules, the language and the standing
instruction to the system prompt, the model to the model call when the chat has no model of
its own. Nothing here touches the database (`bot.store.people` keeps them) or SQLAlchemy:
the tool contract imports this module, and a worker's start-up is measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.config.settings import Settings
from bot.config.zones import known_zone
from bot.llm.served import Served
from bot.vocabulary.envelope import Sender
from bot.vocabulary.preferences import Name

MAX_LANGUAGE = 64
MAX_INSTRUCTION = 500
MAX_MODEL = 200
# A language's name in any script ("Portuguese", "português", "日本語", "Brazilian
# Portuguese") or a BCP 47 tag ("pt-BR", "zh-Hant"): letters, spaces, hyphens, apostrophes.
_LANGUAGE = re.compile(r"[^\W\d_](?:[^\W\d_]|[ '-])*")
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]*")


def clean(name: Name, value: str) -> str | None:
    """`value` as kept for `name`, None for an empty one (which clears the preference).
    Raises ValueError with a sentence the person can act on."""
    text = " ".join(value.split())
    if not text:
        return None
    if name == "timezone":
        return known_zone(text).key
    if name == "language":
        if len(text) > MAX_LANGUAGE or not _LANGUAGE.fullmatch(text):
            raise ValueError(
                f"A language is its name or tag in letters, at most {MAX_LANGUAGE} characters "
                "(e.g. Portuguese, português, pt-BR)."
            )
        return text
    if name == "instruction":
        if len(text) > MAX_INSTRUCTION:
            raise ValueError(f"An instruction is at most {MAX_INSTRUCTION} characters.")
        if any(not c.isprintable() for c in text):
            raise ValueError("An instruction is plain text, without control characters.")
        return text
    if len(text) > MAX_MODEL or not _MODEL.fullmatch(text):
        raise ValueError("A model is named as the provider names it, e.g. claude-sonnet-4-5.")
    return text


@dataclass(frozen=True)
class ModelChoices:
    """The models people may choose (PARLEY_USER_MODELS; an admin any) of those this
    deployment serves (`bot.llm.served`): all the settings that choosing a model needs, so that
    what checks a choice (the preference tool) is built with these and nothing more. An
    admin is whoever's `Sender` says so, as stamped where their message came in."""

    allowed: tuple[str, ...]
    models: Served  # what this deployment serves: a choice must be one of them

    @classmethod
    def of(cls, settings: Settings) -> ModelChoices:
        return cls(tuple(settings.user_models), Served.of(settings))

    def may_prefer(self, model: str, is_admin: bool) -> bool:
        """Whether a person may choose `model`: one the operator lists, and for an admin any
        model (the provider is checked where it is chosen)."""
        return is_admin or model in self.allowed

    def sentence(self) -> str:
        """The models people may choose, as a sentence."""
        if not self.allowed:
            return "Only an admin may choose a model here."
        return "You may choose: " + ", ".join(self.allowed) + "."

    def served(self, wanted: str) -> str | None:
        """The model `wanted` names, if this deployment serves it."""
        return self.models.name(wanted)

    def chosen(self, person: Sender, wanted: str) -> str:
        """The model `wanted` names, if `person` may choose it and this deployment serves
        it; else ValueError with a sentence that says what they may choose."""
        if not self.may_prefer(wanted, person.is_admin):
            raise ValueError(f"{wanted} is not a model you may choose. {self.sentence()}")
        served = self.served(wanted)
        if served is None:
            raise ValueError(f"This deployment's API does not serve {wanted}.")
        return served


def chosen_model(settings: Settings, person: Sender, wanted: str) -> str:
    """`ModelChoices.chosen` under `settings`."""
    return ModelChoices.of(settings).chosen(person, wanted)
