"""Telegram updates in: each becomes an envelope in the session's mailbox, or a quick answer.

One router per kind of update, combined here in the order they are tried: `/tasks`, `/memory`
and `/permissions` with their buttons, commands, then messages, then the approval buttons.
Handlers only decide and submit; the agent runs in a worker. What they need comes as aiogram
workflow data (`deps.IngressDeps`), so no router imports another or this module. An update is
confirmed to Telegram (the next getUpdates offset, or the webhook's 200) only after
its handler returned, so a crash or a Redis outage before that makes Telegram deliver it again,
and the mailbox's dedup on the update id answers a repeated delivery once.
"""

from __future__ import annotations

from aiogram import Dispatcher, Router

from adapters.telegram import (
    commands,
    memory_list,
    messages,
    permission_list,
    presses,
    task_list,
)
from adapters.telegram.deps import IngressDeps


def router() -> Router:
    """Every handler of Parley's, in the order they are tried."""
    ingress = Router(name="parley")
    ingress.include_routers(
        task_list.router(),
        memory_list.router(),
        permission_list.router(),
        commands.router(),
        messages.router(),
        presses.router(),
    )
    return ingress


def dispatcher(deps: IngressDeps) -> Dispatcher:
    """The dispatcher that feeds updates to the routers, with `deps` for every handler."""
    fed = Dispatcher(deps=deps)
    fed.include_router(router())
    return fed
