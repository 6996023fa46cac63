"""`/preferences` on every platform: show what the person chose, set one preference, or
reset them, in the same words on Telegram and Slack.

`/preferences` shows all four with the defaults that apply where nothing is chosen;
`/preferences language Portuguese`, `… instruction answer briefly`, `… model NAME`,
`… timezone Europe/Lisbon` set one; `… reset` clears them all and `… reset language` one.
Values follow the rules of the `set_preferences` tool and the API
(`bot.people.preferences`), and apply from the person's next message, in every chat.
"""

from __future__ import annotations

from bot.config.settings import Settings
from bot.people.preferences import chosen_model, clean
from bot.store.people import People
from bot.vocabulary.envelope import Sender
from bot.vocabulary.preferences import NAMES, Name, Preferences

USAGE = (
    "Change one with /preferences language Portuguese, /preferences instruction answer "
    "briefly, /preferences model NAME or /preferences timezone Europe/Lisbon; "
    "/preferences reset clears them all, /preferences reset language one."
)
LABELS = {"timezone": "Time zone", "language": "Language", "model": "Model",
          "instruction": "Instruction"}  # fmt: skip
ALIASES = {"tz": "timezone", "time_zone": "timezone", "lang": "language"}


def shown(chosen: Preferences, settings: Settings) -> str:
    """All four, and what applies where nothing is chosen."""
    lines = [
        "Your preferences (they follow you in every chat):",
        f"• Language: {chosen.language or 'not set (I answer in the language you write in)'}",
        f"• Instruction: {chosen.instruction or 'none'}",
        f"• Model: {chosen.model or f'not set (the chat’s, or {settings.model})'}",
        f"• Time zone: {chosen.timezone or f'not set ({settings.timezone})'}",
        "",
        USAGE,
    ]
    return "\n".join(lines)


async def answer(people: People, settings: Settings, person: Sender, args: str) -> str:
    """The answer to `/preferences args` from `person`, after doing what it asks."""
    what, _, value = args.strip().partition(" ")
    what = ALIASES.get(what.lower(), what.lower())
    if not what:
        return shown(await people.preferences(person.id), settings)
    if what == "reset":
        return await _reset(people, person, value.strip().lower())
    if what not in NAMES:
        return f"I know no preference {what[:40]!r}. {USAGE}"
    name: Name = what
    if not value.strip():
        return f"Say what to set it to; /preferences reset {name} clears it."
    try:
        kept = clean(name, value)
        if name == "model" and kept is not None:
            kept = chosen_model(settings, person, kept)
    except ValueError as exc:
        return str(exc)
    await people.set(person.id, {name: kept})
    return f"{LABELS[name]} set to {kept}. It applies from your next message, in every chat."


async def _reset(people: People, person: Sender, which: str) -> str:
    which = ALIASES.get(which, which)
    if which and which not in NAMES:
        return f"I know no preference {which[:40]!r}. {USAGE}"
    names: list[Name] = [which] if which else list(NAMES)
    await people.set(person.id, dict.fromkeys(names))
    if which:
        return f"{LABELS[which]} reset: the default applies from your next message."
    return "All your preferences are reset to the defaults."
