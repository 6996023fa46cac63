"""Whether a person's replies in a chat also come as a voice note.

- `off` (the default unless PARLEY_VOICE_REPLIES says otherwise): text alone.
- `on`: every reply to them is also said aloud, as a voice note below its text.
- `spoken`: only a reply to a message they spoke (a voice note, transcribed).

The choice is each person's in each chat (`/voice`), kept among the chat's options under the
person's id (`option`), so one person's choice never makes another's replies talk. The text
is always shown: the voice note goes with it, never instead of it.
"""

from __future__ import annotations

from typing import Literal

VoiceMode = Literal["off", "on", "spoken"]
VOICE_MODES: tuple[VoiceMode, ...] = ("off", "on", "spoken")


def option(person: str) -> str:
    """The chat option that holds `person`'s choice."""
    return f"voice:{person}"


def voice_mode(chosen: str | None, default: VoiceMode) -> VoiceMode:
    """The person's choice when it is one of `VOICE_MODES`, else the deployment's default."""
    return next((mode for mode in VOICE_MODES if mode == chosen), default)


def answers_aloud(mode: VoiceMode, spoke: bool) -> bool:
    """Whether a reply goes out as a voice note too, in `mode`, to a message the person
    `spoke` or typed."""
    return mode == "on" or (mode == "spoken" and spoke)
