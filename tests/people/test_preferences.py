"""The rules of preferences, the same for the tool, the chat commands and the API; what the
prompt says of them; which model a turn is answered with."""

from __future__ import annotations

import pytest

from bot.agent.prompt import preferred
from bot.config.settings import Settings
from bot.people.preferences import chosen_model, clean
from bot.session.turn import preferred_model
from bot.tools.base import ToolContext
from bot.vocabulary.envelope import Sender
from bot.vocabulary.preferences import Preferences

SETTINGS = Settings(_env_file=None, model="claude-sonnet-4-5", user_models=["claude-haiku-4-5"])
ANN = Sender(id="tg:1", name="Ann")
ADA = Sender(id="tg:9", name="Ada", is_admin=True)


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ("Portuguese", "Portuguese"),
        ("  Brazilian   Portuguese ", "Brazilian Portuguese"),
        ("português", "português"),
        ("日本語", "日本語"),
        ("pt-BR", "pt-BR"),
        ("", None),
    ],
)
def test_a_language_is_a_name_or_a_tag(value: str, kept: str | None) -> None:
    assert clean("language", value) == kept


@pytest.mark.parametrize("value", ["English2", "<b>French</b>", "٣", "-German", "x" * 65])
def test_anything_else_is_no_language(value: str) -> None:
    with pytest.raises(ValueError, match="A language is its name or tag"):
        clean("language", value)


def test_an_instruction_is_short_plain_text() -> None:
    assert clean("instruction", " answer\n briefly ") == "answer briefly"
    with pytest.raises(ValueError, match="at most 500 characters"):
        clean("instruction", "x" * 501)
    with pytest.raises(ValueError, match="without control characters"):
        clean("instruction", "be brief\u200b\x1b[31m")


def test_a_time_zone_is_an_iana_name() -> None:
    assert clean("timezone", "Asia/Tokyo") == "Asia/Tokyo"
    with pytest.raises(ValueError, match="unknown IANA time zone"):
        clean("timezone", "Europe")


def test_people_choose_among_the_operators_models_and_admins_any_served() -> None:
    assert chosen_model(SETTINGS, ANN, "claude-haiku-4-5") == "claude-haiku-4-5"
    with pytest.raises(ValueError, match="You may choose: claude-haiku-4-5"):
        chosen_model(SETTINGS, ANN, "claude-opus-4-1")
    assert chosen_model(SETTINGS, ADA, "claude-opus-4-1") == "claude-opus-4-1"
    with pytest.raises(ValueError, match="does not serve gpt-4o"):
        chosen_model(SETTINGS, ADA, "gpt-4o")  # another provider's
    with pytest.raises(ValueError, match="Only an admin may choose"):
        chosen_model(Settings(_env_file=None), ANN, "claude-haiku-4-5")


def test_an_admin_is_whom_their_sender_says() -> None:
    """The platform stamps `is_admin` when the message comes in (from PARLEY_ADMINS), the
    scheduler when a task fires; past that, the list is not read again."""
    listed = Settings(_env_file=None, admins=[ANN.id])
    with pytest.raises(ValueError, match="Only an admin may choose"):
        chosen_model(listed, ANN, "claude-opus-4-1")
    stamped = ANN.model_copy(update={"is_admin": True})
    assert chosen_model(listed, stamped, "claude-opus-4-1") == "claude-opus-4-1"
    opus = context(ANN, Preferences(model="claude-opus-4-1"))
    assert preferred_model(opus, listed) is None
    assert preferred_model(context(stamped, opus.preferences), listed) == "claude-opus-4-1"


def context(person: Sender, chosen: Preferences) -> ToolContext:
    return ToolContext("tg:1", person, preferences=chosen)


def test_a_preferred_model_applies_while_it_is_allowed() -> None:
    haiku = Preferences(model="claude-haiku-4-5")
    assert preferred_model(context(ANN, haiku), SETTINGS) == "claude-haiku-4-5"
    assert preferred_model(context(ANN, Preferences()), SETTINGS) is None
    no_longer = Settings(_env_file=None, model="claude-sonnet-4-5")
    assert preferred_model(context(ANN, haiku), no_longer) is None  # the list changed
    assert preferred_model(context(ADA, haiku), no_longer) == "claude-haiku-4-5"


def test_the_prompt_carries_the_persons_language_and_instruction() -> None:
    said = preferred(context(ANN, Preferences(language="Portuguese", instruction="be brief")))
    assert "Answer Ann in Portuguese, unless they ask for another language." in said
    assert 'Ann asked you to follow this in every answer to them: "be brief"' in said
    assert preferred(context(ANN, Preferences())) == ""
