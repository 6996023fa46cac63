"""What Slack's listeners are given: one typed object, handed to them by bolt.

A middleware puts it in bolt's context under `deps` (`provide`), and bolt passes context
entries to every listener that names them, so the listeners in `ingress`, `commands` and
`presses` import this module and never each other. Its methods are what more than one
listener does: run cosmetic work after Slack got its answer, tell one person something.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from redis.asyncio import Redis
from slack_bolt.context.async_context import AsyncBoltContext

from adapters.chat.access import Gate
from adapters.chat.intake import Intake
from adapters.chat.setting_commands import ChatChoices
from adapters.chat.tool_list import ToolCatalog
from adapters.slack.client import SlackCalls
from bot.config.settings import Settings
from bot.files.intake import Intake as FileIntake
from bot.mailbox.inbox import Mailbox
from bot.memory.recall import Recall
from bot.redis.confirmations import Confirmations
from bot.store.archive import Archive
from bot.store.chats import ChatSettings
from bot.store.grants import Grants
from bot.store.people import People
from bot.tasks.book import TaskBook


@dataclass
class IngressDeps(ChatChoices):
    settings: Settings
    calls: SlackCalls
    gate: Gate
    redis: Redis
    mailbox: Mailbox
    confirmations: Confirmations
    archive: Archive
    tasks: TaskBook
    recall: Recall  # the memories, found by meaning with the configured model
    people: People
    grants: Grants
    chats: ChatSettings
    tools: ToolCatalog
    files: FileIntake
    background: set[asyncio.Task[Any]] = field(default_factory=set)

    @cached_property
    def intake(self) -> Intake:
        """What a message for the bot goes through before its session's mailbox."""
        return Intake(self.gate, self.mailbox, self.files)

    def later(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run cosmetic work after Slack got its answer; kept referenced until it ends."""
        task = asyncio.create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def note(
        self, team: str, channel: str | None, user: str, text: str, thread_ts: str | None
    ) -> None:
        """An ephemeral answer only `user` sees, in the thread they wrote in, sent later."""
        self.later(
            self.calls.quietly(
                "chat.postEphemeral",
                team,
                channel=channel,
                user=user,
                text=text,
                thread_ts=thread_ts,
            )
        )

    async def stop(self) -> None:
        """Cancel the cosmetic work still running (the web app is shutting down)."""
        for task in list(self.background):
            task.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)


def provider(deps: IngressDeps) -> Callable[..., Awaitable[None]]:
    """A bolt middleware that hands `deps` to every listener (as its `deps` argument)."""

    async def provide(context: AsyncBoltContext, next_: Callable[[], Awaitable[None]]) -> None:
        context["deps"] = deps
        await next_()

    return provide
