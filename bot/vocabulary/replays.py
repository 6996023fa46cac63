"""Where an evaluation's replays run: sessions of their own, apart from every person's.

An evaluation (`bot.lab`) replays each chosen run in one of a few lanes, a session each
(`lab:{evaluation}:{lane}`): a lane's mailbox runs its replays one after the other, so the
lanes are what bounds how many run at once, with no other coordinator. A lane's session is
started over before each replay (`bot.session.turn`). The record keeps their runs (trigger
`replay`), and the deployment's own figures leave them out (`bot.store.traces.Match`,
`bot.store.archive`).
"""

from __future__ import annotations

LANES = "lab:"
PLATFORM = "lab"


def lane_session(evaluation: str, lane: int) -> str:
    return f"{LANES}{evaluation}:{lane}"


def evaluation_of(session: str) -> str | None:
    """The evaluation whose lane `session` is, or None for anyone else's session."""
    if not session.startswith(LANES):
        return None
    evaluation, _, _ = session.removeprefix(LANES).partition(":")
    return evaluation or None
