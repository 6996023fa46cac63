"""What a turn is: who asked, where, how it runs, with which model, what it remembers and
what it may run without asking, decided in one place from the envelopes that make it, and
returned as one request for the agent (or none: the turn has nothing left to do, or a
scheduled run's task spent its day's tokens, `bot.tasks.spend`)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from bot.agent.deps import TurnRequest
from bot.agent.prompt import Bootstrap
from bot.config.settings import Settings
from bot.llm.served import served_model
from bot.mailbox.inbox import Mailbox
from bot.mailbox.saved_state import TurnOptions
from bot.people.preferences import ModelChoices
from bot.session.commands import notice
from bot.session.decisions import Decisions
from bot.session.deps import SessionStores
from bot.session.reads import prepared, read_for
from bot.skills.library import Skills
from bot.tasks.book import TaskBook
from bot.tasks.spend import TaskSpend, cap_of, capped_text
from bot.tools.base import ToolContext
from bot.tools.untrusted import mark
from bot.tools.workspace_paths import workspace_of
from bot.vocabulary.envelope import Envelope, task_of_run
from bot.vocabulary.helpers import root_of
from bot.vocabulary.preferences import Preferences
from bot.vocabulary.run_config import MODES, RunConfig, kept_schema, kept_tools, reasoning_of
from bot.vocabulary.state import SessionState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Turns:
    settings: Settings
    mailbox: Mailbox
    decisions: Decisions
    stores: SessionStores | None
    skills: Skills | None = None  # looked at again before each turn, when they may have changed
    bootstrap: Bootstrap | None = None  # likewise

    async def request(
        self, group: list[Envelope], state: SessionState, options: TurnOptions, *, resumed: bool
    ) -> TurnRequest | None:
        """The request for the turn `group` makes: a new message, a decision on calls that
        wait, or (`resumed`) the turn a dead worker began; None when there is nothing to
        run (a decision that came too late, a scheduled run whose task was called off).
        `options`: what people chose with commands, read with the state
        (`StateStore.load_for_turn`)."""
        head = group[0]
        goes_on = head.is_decision or resumed
        asker = _asker(head, state) if goes_on else head
        reads, _ = await asyncio.gather(  # at once: the person waits for them
            read_for(asker, self.stores), self._folders()
        )
        config = run_config(head, state, options, goes_on=goes_on)
        ctx = tool_context(asker, self.settings, reads.preferences)
        model = config.model or options.model or preferred_model(ctx, self.settings)
        if head.quiet and not config.model:  # a check-in runs on the cheaper model, if served
            model = checkin_model(self.settings) or model
        ids = tuple(envelope.id for envelope in group)
        request = TurnRequest(ctx, envelope_ids=ids, model=model, config=config)
        if head.is_decision and not resumed:
            decided = await self.decisions.decide(head, state, ctx.user.id)
            if decided is None:
                return None  # decided too late: the turn has moved on
            if decided.granted:
                reads = reads.granting(decided.granted)
            request = TurnRequest(
                ctx, decisions=decided.decisions, deny_note=decided.note, envelope_ids=ids,
                model=model, config=config, answers=decided.answers,
            )  # fmt: skip
        elif not resumed:
            if head.kind == "scheduled" and await self._called_off(head):
                return None  # it waited behind the message that cancelled its task
            typed = await self.decisions.typed(group, state)
            if typed is not None and typed.whole:  # the asker's reply answers their question
                request = TurnRequest(
                    ctx, decisions={}, answers=typed.answers, envelope_ids=ids, model=model,
                    config=config,
                )  # fmt: skip
            else:
                await self.decisions.decline_pending(state, head.sender.id)
                text = "\n".join(envelope.text for envelope in group if envelope.text)
                text = with_context(text, group)
                files = tuple(ref for envelope in group for ref in envelope.attachments)
                request = TurnRequest(
                    ctx, text=text, attachments=files, envelope_ids=ids, model=model,
                    config=config, answers=typed.answers if typed is not None else None,
                )  # fmt: skip
        recall = self.stores.recall if self.stores is not None else None
        return await prepared(request, state, reads, recall)

    async def _folders(self) -> None:
        """The skills and the bootstrap files as they are now: a skill added, edited or
        removed, or the persona edited, shows in the next turn, without a restart."""
        if self.skills is not None:
            await self.skills.current()
        if self.bootstrap is not None:
            await self.bootstrap.current()

    async def _called_off(self, head: Envelope) -> bool:
        """Its task was cancelled while it waited, or spent its day's tokens."""
        if self.stores is None:
            return False
        if await self.stores.tasks.called_off(head.id):
            return True
        deployment = self.settings.task_tokens_per_day
        return await over_cap(self.stores.tasks, self.mailbox, head, deployment)


async def over_cap(book: TaskBook, mailbox: Mailbox, head: Envelope, deployment: int) -> bool:
    """Whether the scheduled run `head` is over its task's daily cap, and so does not run.
    The first such run of the day has its chat told, by a notice queued right behind it (a
    session command: one message, no model call). While the database is away it runs."""
    task_id = task_of_run(head.id)
    if task_id is None:
        return False
    try:
        task = await book.get(task_id)
    except Exception:
        log.warning("could not read the cap of the task of %s", head.id, exc_info=True)
        return False
    cap = cap_of(task, deployment) if task is not None else None
    if task is None or cap is None:
        return False
    spend = TaskSpend(mailbox.redis)
    if await spend.spent(task.id) < cap:
        return False
    log.info("dropped %s: task %d spent its %d tokens of today", head.id, task.id, cap)
    if await spend.first_telling(task.id):
        await mailbox.submit(notice(head, capped_text(task, cap)))
    return True


def checkin_model(settings: Settings) -> str | None:
    """PARLEY_CHECKIN_MODEL as the deployment serves it, or None (the usual model)."""
    wanted = settings.checkin_model
    return served_model(settings, wanted) if wanted else None


def with_context(text: str, group: list[Envelope]) -> str:
    """The messages' text below what their platform said about where the person is (the
    newest of it), marked as outside data: a channel's name is anybody's to choose."""
    context = next((e.context for e in reversed(group) if e.context), "")
    return f"{mark('platform-context', context)}\n\n{text}" if context else text


def _asker(head: Envelope, state: SessionState) -> Envelope:
    """The envelope as the person who asked: a decision or a resumed turn goes on as them,
    whoever pressed the button."""
    turn = state.turn
    if turn is None or not turn.person:
        return head
    return head.model_copy(update={"sender": turn.person, "chat_kind": turn.chat_kind})


def tool_context(head: Envelope, settings: Settings, preferences: Preferences) -> ToolContext:
    """What the turn's tools know: the chat, the person and what they chose, and the
    session's workspace; of the settings only the default time zone, and of the database
    nothing (a tool that needs a store is built with it). A helper works in its parent's
    workspace (`root_of`): what it writes there is its parent's to read, and goes with it."""
    return ToolContext(
        session_key=head.session,
        user=head.sender,
        platform=head.seen_on or head.platform,  # a replay: as its recorded run was
        chat_kind=head.chat_kind,
        reply_to=head.reply_to,
        preferences=preferences,
        default_timezone=settings.timezone,
        workspace=workspace_of(settings.workspace_dir, root_of(head.session)),
    )


def preferred_model(ctx: ToolContext, settings: Settings) -> str | None:
    """The model the person prefers, if they still may (the operator may have changed
    PARLEY_USER_MODELS since; an admin, as their sender was stamped, may prefer any) and
    this deployment serves it; else None, and the chat's or the default model answers."""
    wanted, models = ctx.preferences.model, ModelChoices.of(settings)
    if wanted is None:
        return None
    return models.served(wanted) if models.may_prefer(wanted, ctx.user.is_admin) else None


def run_config(
    head: Envelope, state: SessionState, options: TurnOptions, *, goes_on: bool
) -> RunConfig:
    """How the turn is to run: as its message asked (an API run), as the turn it `goes_on`
    with was asked to, else as its chat chose (`chat_config`)."""
    if head.run is not None:
        return head.run
    if goes_on and state.turn is not None:  # as it began, whatever the chat chose since
        return state.turn.config or RunConfig()
    return chat_config(options)


def chat_config(options: TurnOptions) -> RunConfig:
    """The chat's choices as a run's config: its mode (`/mode`), its reasoning
    (`/reasoning`), and a web chat's tools and output schema, which then restrict and check
    the turn exactly as an API run's config does (the agent reads only the config). They
    were checked when chosen; one that is no longer a valid config (Redis edited by hand) is
    left out with a warning rather than failing every turn of the chat."""
    mode = options.mode if options.mode in MODES else "react"
    reasoning = reasoning_of(options.reasoning)
    try:
        tools, schema = kept_tools(options.tools), kept_schema(options.output_schema)
        return RunConfig(mode=mode, reasoning=reasoning, tools=tools, output_schema=schema)
    except ValueError as exc:  # a ValidationError is one too
        log.warning("the chat's tools or output schema are left out: %s", exc)
        return RunConfig(mode=mode, reasoning=reasoning)
