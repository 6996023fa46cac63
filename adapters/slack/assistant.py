"""Slack's assistant threads: prompts to start with, a title from the first message, and the
channel the person is looking at beside the thread, for the model to know.

A thread in the assistant pane starts with `assistant_thread_started`: Parley offers the
operator's suggested prompts (PARLEY_SLACK_SUGGESTED_PROMPTS) and remembers the thread, with
the channel the person had open (`assistant_thread.context.channel_id`), in Redis for a
bounded time; `assistant_thread_context_changed` brings the channel they moved to. The
thread's first message names it (assistant.threads.setTitle, its first line, trimmed), once.
Each message of the thread carries the channel in its envelope's `context`, which the model
reads marked as untrusted data (`bot.session.turn.with_context`).

These are plain listeners rather than bolt's `Assistant` middleware: the middleware keeps the
context in the metadata of the bot's first reply and reads it back with
conversations.replies (another scope, a call per message), and would take the threads'
messages away from the intake every other message goes through.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.deps import IngressDeps
from adapters.slack.place import Place
from bot.redis import keys
from bot.redis.results import done

KEEP = 30 * 86_400  # as long as a thread the bot took part in is remembered
TITLE_MOST = 80  # characters of the first line that name the thread
PROMPTS_TITLE = "Try asking"


def _thread(event: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """The thread's DM, its ts and the channel in view, read strictly; None if unreadable."""
    thread = event.get("assistant_thread")
    if not isinstance(thread, dict):
        return None
    channel, ts = thread.get("channel_id"), thread.get("thread_ts")
    if not isinstance(channel, str) or not isinstance(ts, str) or not channel or not ts:
        return None
    context = thread.get("context")
    viewing = context.get("channel_id") if isinstance(context, dict) else None
    return channel, ts, viewing if isinstance(viewing, str) and viewing else None


async def on_thread_started(
    event: dict[str, Any], context: AsyncBoltContext, deps: IngressDeps
) -> None:
    """A new thread in the assistant pane: remember it, and offer the prompts to start with."""
    found = _thread(event)
    if found is None:
        return
    channel, ts, viewing = found
    team = str(context.team_id or "")
    await _remember(deps, Place(team=team, channel=channel, thread_ts=ts, is_im=True), viewing)
    prompts = [prompt.model_dump() for prompt in deps.settings.slack_suggested_prompts]
    if prompts:
        deps.later(
            deps.calls.quietly(
                "assistant.threads.setSuggestedPrompts",
                team,
                channel_id=channel,
                thread_ts=ts,
                title=PROMPTS_TITLE,
                prompts=prompts,
            )
        )


async def on_context_changed(
    event: dict[str, Any], context: AsyncBoltContext, deps: IngressDeps
) -> None:
    """The person opened another channel beside the thread: its messages say so from now."""
    found = _thread(event)
    if found is None:
        return
    channel, ts, viewing = found
    place = Place(team=str(context.team_id or ""), channel=channel, thread_ts=ts, is_im=True)
    await _remember(deps, place, viewing)


async def _remember(deps: IngressDeps, place: Place, viewing: str | None) -> None:
    name = keys.slack_assistant(place.session)
    async with deps.redis.pipeline(transaction=True) as pipe:
        pipe.hset(name, "viewing", viewing or "")
        pipe.expire(name, KEEP)
        await pipe.execute()


async def context_of(deps: IngressDeps, place: Place) -> str | None:
    """What a message in `place` says about where the person is: "" in an assistant thread
    with no channel in view, None outside assistant threads."""
    if not place.is_im or place.thread_ts is None:
        return None
    viewing = await done(deps.redis.hget(keys.slack_assistant(place.session), "viewing"))
    if viewing is None:
        return None
    channel = viewing.decode() if isinstance(viewing, bytes) else str(viewing)
    return f"The person is looking at the Slack channel <#{channel}>." if channel else ""


async def title_once(deps: IngressDeps, place: Place, text: str) -> None:
    """Name an assistant thread after its first message (after the first that has text)."""
    title = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not title:
        return
    if len(title) > TITLE_MOST:
        title = title[: TITLE_MOST - 1].rstrip() + "…"
    name = keys.slack_assistant(place.session)
    if not await done(deps.redis.hsetnx(name, "titled", "1")):
        return
    await deps.redis.expire(name, KEEP)
    deps.later(
        deps.calls.quietly(
            "assistant.threads.setTitle",
            place.team,
            channel_id=place.channel,
            thread_ts=place.thread_ts,
            title=title,
        )
    )
