"""What becomes of a message that arrives while its person's turn runs in the chat.

- `steer` (the default): it joins the running turn at the next model boundary, after the
  model call or the tool batch under way, so "no, the other file" changes course at once; the
  person is shown it was taken in.
- `queue`: it waits for the turn to end and starts the next one.
- `interrupt`: the running turn stops where it is (what it said so far kept) and the message
  starts the next one.

A chat chooses with `/steer` (its `steer` option, among the chat's options like its mode);
`PARLEY_STEER_MODE` is the deployment's default. Only a plain message of the person whose
turn runs steers it; anyone else's waits its turn.
"""

from __future__ import annotations

from typing import Literal

SteerMode = Literal["steer", "queue", "interrupt"]
STEER_MODES: tuple[SteerMode, ...] = ("steer", "queue", "interrupt")
OPTION = "steer"  # the chat option that holds a chat's choice


def steer_mode(chosen: str | None, default: SteerMode) -> SteerMode:
    """The chat's choice when it is one of `STEER_MODES`, else the deployment's default."""
    return next((mode for mode in STEER_MODES if mode == chosen), default)
