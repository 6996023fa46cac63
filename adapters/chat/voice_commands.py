"""`/voice`: whether a person's replies also come as a voice note, the same on every platform.

The choice is the person's own, in the chat where they make it (`bot.vocabulary.voice`), in
a group too: it changes only the replies to them. Unchosen, PARLEY_VOICE_REPLIES decides.
Where no speech endpoint is named (PARLEY_SPEECH_MODEL), nothing is kept and the person is
told, rather than left waiting for a voice note that never comes.
"""

from __future__ import annotations

from bot.mailbox.inbox import Mailbox
from bot.vocabulary.chats import chat_of
from bot.vocabulary.voice import VOICE_MODES, VoiceMode, option, voice_mode

SAID: dict[VoiceMode, str] = {
    "off": "I answer you in text",
    "on": "I answer you in text and with a voice note",
    "spoken": "I answer you with a voice note too when you send me one, else in text",
}
HOW = "Say /voice on, /voice off or /voice spoken (a voice note only when you spoke) to change it."
NOT_SET_UP = "Voice replies aren't set up here: I answer in text."


async def answer(
    mailbox: Mailbox, session: str, person: str, said: str, *, default: VoiceMode, speaks: bool
) -> str:
    """What `/voice [on | off | spoken]` says to `person` in `session`'s chat, and their
    choice kept when it is one (`default`: the deployment's; `speaks`: a speech endpoint is
    named)."""
    if not speaks:
        return NOT_SET_UP
    chat, name = chat_of(session), option(person)
    wanted = said.strip().lower()
    if not wanted:
        current = voice_mode(await mailbox.option(chat, name), default)
        return f"Here {SAID[current]}. {HOW}"
    mode = next((mode for mode in VOICE_MODES if mode == wanted), None)
    if mode is None:
        return f"There is no voice setting {wanted[:40]!r}: say on, off or spoken."
    # Kept even when it is the default: the person's word holds if the deployment's changes.
    await mailbox.set_option(chat, name, mode)
    return f"From now on {SAID[mode]}."
