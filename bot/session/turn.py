"""What a turn is: who asked, where, how it runs, with which model, what it remembers and
what it may run without asking, decided in one place from the envelopes that make it, and
returned as one request for the agent (or none: the turn has nothing left to do)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from bot.agent.deps import TurnRequest
from bot.agent.prompt import Bootstrap
from bot.config.settings import Settings
from bot.mailbox.inbox import Mailbox
from bot.mailbox.saved_state import TurnOptions
from bot.people.preferences import ModelChoices
from bot.session.decisions import Decisions
from bot.session.deps import SessionStores
from bot.session.reads import prepared, read_for
from bot.skills.library import Skills
from bot.tools.base import ToolContext
from bot.tools.untrusted import mark
from bot.tools.workspace_paths import workspace_of
from bot.vocabulary.envelope import Envelope
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
        return self.stores is not None and await self.stores.tasks.called_off(head.id)


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
