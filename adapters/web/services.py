"""The web process's shared services: what the HTTP API and every platform's ingress use,
built once by `parley web` (the worker's counterpart is `bot.session.deps.RunnerDeps`).

Wherever it is passed or kept it is called `services`; a platform's own `deps` is the typed
object its listeners are given (`adapters.telegram.deps`, `adapters.slack.deps`), made from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from redis.asyncio import Redis

from adapters.chat.tool_list import ToolCatalog
from bot.config.settings import Settings
from bot.files.intake import Intake
from bot.mailbox.inbox import Mailbox
from bot.memory.recall import Recall
from bot.people.pairing import Pairing
from bot.redis.confirmations import Confirmations
from bot.store.archive import Archive
from bot.store.chats import ChatSettings
from bot.store.grants import Grants
from bot.store.people import People
from bot.store.traces import Traces
from bot.tasks.book import TaskBook
from bot.tasks.model import Target


@dataclass(frozen=True)
class Services:
    settings: Settings
    redis: Redis
    mailbox: Mailbox
    confirmations: Confirmations
    archive: Archive
    tasks: TaskBook
    recall: Recall  # the memories, found by meaning with the configured model
    people: People
    grants: Grants
    chats: ChatSettings  # what each chat's admins chose for everyone in it
    traces: Traces
    tools: ToolCatalog
    files: Intake  # the files people send, checked and stored
    # Where a task for a session key is answered, or a ValueError saying why nowhere
    # (`adapters.platforms.targets.answered_target`): given, so the HTTP API imports no platform.
    target_of: Callable[[str], Target]
    # A new connection of its own for the event streams' reader (`adapters.http.streams`),
    # made as every other one is, TLS and Sentinel included (`worker.redis_connections`).
    stream_reader: Callable[[], Redis]
    pairing: Pairing | None = None  # strangers' codes and the people paired (PARLEY_DM_POLICY)
