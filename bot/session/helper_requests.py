"""What a helper posts for the person, shown in its parent's chat: its approval requests
(asked in the parent's reply while the parent's `delegate` call waits, its clock held) and
its files; and the request a stopped helper waited on, withdrawn.

A helper answers into a stream of its own (`bot.session.helpers`), which no chat shows, so
its parent passes on what the person must see there. A request is marked to be shown in the
parent's chat (`Confirmations.show_in`: the prompt's platform, and the helper's task it names)
before its prompt is posted, so that its expiry and reminder reach that prompt. A parent that
reads the helper's stream again from its start (resumed after a crash) passes on the same
things again: a reply posts a prompt or a file once, and a request decided since is not
asked again.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from bot.agent.deadline import Deadline
from bot.redis.confirmations import Confirmations
from bot.session.egress import Egress
from bot.session.live import LiveTurn
from bot.session.record import quietly
from bot.store.history import History
from bot.tools.base import ToolContext
from bot.vocabulary import events as ev

WITHDRAWN_BY = "stopped"  # who decided a request its stopped helper waited on, for the audit


async def pass_on(
    parent: Parent,
    news: list[ev.ConfirmationRequired | ev.FileSent],
    waiting: Waiting,
    task: str,
    files: dict[str, str | None],
) -> float | None:
    """Show in the parent's reply what the helper posted for the person (`news`, emptied):
    its files (a reply posts each file once, so a resumed parent reading them again posts
    nothing twice), with what became of each in `files` (by name, for the parent's model:
    the helper's own was told only that they were handed on), and its approval requests.
    When the last request asked now expires (Unix time), if one was."""
    until = None
    for event in news:
        if isinstance(event, ev.FileSent):
            files[event.file.name] = await parent.live.post(event)
        elif (expires := await waiting.ask(parent, event, task)) is not None:
            until = expires
    news.clear()
    return until


@dataclass(frozen=True)
class Parent:
    """The turn a helper works for: its call's context, and the turn as it runs here."""

    ctx: ToolContext
    live: LiveTurn


class Waiting:
    """A helper's approval request, asked in its parent's chat, while a person decides it:
    the parent's clock is held meanwhile (the time is the person's, not the agent's)."""

    def __init__(self, confirmations: Confirmations, clock: Deadline) -> None:
        self.confirmations = confirmations
        self.clock = clock
        self.person: str | None = None  # the request a person decides now
        self._hold = contextlib.ExitStack()

    def __enter__(self) -> Waiting:
        return self

    def __exit__(self, *exc: object) -> None:
        self._hold.close()

    async def ask(self, parent: Parent, event: ev.ConfirmationRequired, task: str) -> float | None:
        """Post the helper's request `event` in the parent's reply, naming the helper; when it
        expires (Unix time), or None when it was decided already (a parent resumed after a
        crash reads the helper's stream again from its start)."""
        if event.confirmation_id is None:
            return None
        shown = await self.confirmations.show_in(event.confirmation_id, parent.ctx.platform, task)
        if shown is None:
            return None
        await parent.live.show(event.model_copy(update={"helper": task}))
        if self.person is None:
            self._hold.enter_context(self.clock.held())
        self.person = shown.id
        return shown.expires_at

    async def check(self) -> None:
        """Let the parent's clock run again once the request is decided (or expired)."""
        if self.person is None:
            return
        now = await self.confirmations.get(self.person)
        if now is None or now.status != "pending" or now.expires_at <= time.time():
            self.person = None
            self._hold.close()


async def withdraw(
    confirmations: Confirmations, history: History, egress: Egress, session: str
) -> None:
    """Withdraw the request the stopped helper `session` waits on, if one waits: its prompt
    says why, and no later press runs the call for a helper that is gone."""
    asked = await confirmations.asking(session)
    if asked is None:
        return
    if await confirmations.decide(asked.id, "withdrawn", WITHDRAWN_BY, is_admin=True) != "ok":
        return
    if (withdrawn := await confirmations.get(asked.id)) is not None:
        await quietly("audit", withdrawn, history.decided)
        await quietly("show the withdrawn request", withdrawn, egress.expired)
