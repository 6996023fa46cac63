"""A reply said aloud: once a turn's answer is whole, its text is said by the speech endpoint
(`bot.files.speech`) and posted as a voice note below it, by the reply that showed the text,
before the run's `Completed` event (an API client or the web chat stops reading there).

It goes the way a file a tool made goes (`ReplyStream.post_file`): stored by content, posted
once however often the turn is resumed, after the text has landed, paced with the chat's other
calls. Each platform shows it its own way: Telegram as a voice message, Slack as a file, the
web chat and the API as an audio player (a `file` event whose `voice_seconds` is set).

Whom: the person the turn answers, as they chose in that chat (`/voice`,
`bot.vocabulary.voice`), read once the answer is whole and only where speech is set up. Which
turns: those that answer a person (their message, their decision, their turn carried on
after a crash) with an answer the model finished; never a scheduled run, a helper's, an API
run with its own config or a replay. What is said: the answer without what does not read
aloud (code, links' addresses, Markdown's marks), cut at a sentence's end within
PARLEY_SPEECH_MAX_CHARS. The text stays whole in the chat.

The voice note is kept with the answer's message (`Message.voice`), so the record counts it
among the files its messages carry: it goes when they go (a deleted session, retention).

It costs money, so it counts in the person's daily budget: one token per character said, the
unit speech endpoints are priced by, once per turn. It never costs the turn: a speech
endpoint that fails is logged and counted, and the text stands alone.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.agent.deps import TurnRequest
from bot.config.settings import Settings
from bot.files.speech import NotSaid, Speaker, SpeechService
from bot.files.store import FileStore
from bot.files.voice import MARK
from bot.mailbox.inbox import Mailbox
from bot.people.limits import Limits
from bot.session.egress import ReplyStream
from bot.session.record import trigger
from bot.telemetry import metrics
from bot.vocabulary import events as ev
from bot.vocabulary.chats import chat_of
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.files import FileRef
from bot.vocabulary.messages import TextBlock
from bot.vocabulary.state import SessionState
from bot.vocabulary.voice import VoiceMode, answers_aloud, option, voice_mode

log = logging.getLogger(__name__)

CALL_ID = "voice"  # the `FileSent` event's call id: no tool made it
NAME = "voice-reply.ogg"
ANSWERED = {ev.Trigger.MESSAGE, ev.Trigger.DECISION, ev.Trigger.RESUME}
FINISHED = {ev.FinishReason.END_TURN, ev.FinishReason.MAX_TOKENS}
READ_PER_CHAR = 4  # characters of Markdown read per character said, at most
SENTENCE_END = re.compile(r"[.!?…。！？](?=\s|$)")
_FENCED = re.compile(r"```.*?(```|$)", re.DOTALL)
_PICTURE = re.compile(r"!\[([^\[\]\n]*)\]\([^()\s]*\)")
_LINK = re.compile(r"\[([^\[\]\n]+)\]\([^()\s]*\)")
_ADDRESS = re.compile(r"<?https?://\S+>?")
_LINE_MARK = re.compile(r"^[ \t]{0,3}(#{1,6}\s+|>\s?|[-*+]\s+(\[[ xX]\]\s+)?)", re.MULTILINE)
_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?---[-:| \t]*$", re.MULTILINE)  # a table's rule
_ROW = re.compile(r"^[ \t]*\|(.*)\|[ \t]*$", re.MULTILINE)
# Emphasis marks where they open or close a word (`**bold**.`, `_it_`, `~~gone~~`), not
# between words or inside one (`2 * 3`, `snake_case`).
_EMPHASIS = re.compile(r"(?<!\w)[*_~]+(?=\S)|(?<=\S)[*_~]+(?!\w)")


@dataclass(frozen=True)
class VoiceReplies:
    """What saying replies takes: the chats' choices (`mailbox`), the endpoint (`speaker`),
    where the voice note is stored, the deployment's default, how much is said at most
    (PARLEY_SPEECH_MAX_CHARS), and the budgets the characters count in."""

    mailbox: Mailbox
    speaker: Speaker
    files: FileStore
    default: VoiceMode
    max_chars: int
    limits: Limits | None = None

    async def answer(
        self,
        group: Sequence[Envelope],
        state: SessionState,
        request: TurnRequest,
        completed: ev.Completed,
        stream: ReplyStream,
    ) -> None:
        """Say `completed`'s answer to the person in `stream`, when they asked for it (see
        the module docstring); whatever fails is logged, and the text stands alone: the turn
        goes on to its end, never to a retry that would answer again."""
        head = group[0]
        if not self._answers(head, request, completed):
            return
        try:
            await self._say(group, state, request.ctx.user.id, completed.text, stream)
        except Exception:  # a voice note must not cost the turn its answer
            log.exception("the voice reply in %s failed", head.session)

    async def _say(
        self,
        group: Sequence[Envelope],
        state: SessionState,
        person: str,
        answer: str,
        stream: ReplyStream,
    ) -> None:
        """`answer` said to `person` if they chose it here; counted once it was made."""
        head = group[0]
        chosen = await self.mailbox.option(chat_of(head.session), option(person))
        mode = voice_mode(chosen, self.default)
        if not answers_aloud(mode, spoke(group, state)):
            return
        text = await asyncio.to_thread(speakable, answer, self.max_chars)
        if not text:
            return
        outcome = "failed"
        making = asyncio.create_task(self.speaker.said(text))
        try:
            await stream.settle()  # the text lands while its voice note is made
            note = await making
            ref = await asyncio.to_thread(self.files.put, note.data, "audio/ogg", NAME)
            kept_with(state, ref)
            event = ev.FileSent(call_id=CALL_ID, file=ref, voice_seconds=note.seconds)
            said = await stream.post_file(event)
            outcome = "sent" if not said else "refused"
        except NotSaid as exc:
            log.warning("no voice reply in %s: %s", head.session, exc)
        finally:
            making.cancel()  # when the text could not land: the note is not wanted
            metrics.VOICE_REPLIES.labels(head.platform, outcome).inc()
        if self.limits is not None and outcome != "failed":
            await self.limits.charge(person, f"voice:{head.id}", len(text))

    async def aclose(self) -> None:
        await self.speaker.aclose()

    def _answers(self, head: Envelope, request: TurnRequest, completed: ev.Completed) -> bool:
        """A turn that answers a person, with an answer the model finished."""
        return (
            head.run is None
            and trigger(head, request) in ANSWERED
            and completed.finish_reason in FINISHED
            and bool(completed.text.strip())
        )


def voice_replies(
    settings: Settings, mailbox: Mailbox, limits: Limits | None
) -> VoiceReplies | None:
    """What a worker says replies with, or None when no speech endpoint is named."""
    service = SpeechService.of(settings)
    if service is None:
        return None
    files = FileStore(settings.files_dir)
    default, most = settings.voice_replies, settings.speech_max_chars
    return VoiceReplies(mailbox, Speaker(service), files, default, most, limits)


def kept_with(state: SessionState, ref: FileRef) -> None:
    """The voice note kept with the answer it says, the turn's last assistant message: the
    record then counts it among the files its messages carry, and it goes with them."""
    answer = next((m for m in reversed(state.messages) if m.role == "assistant"), None)
    if answer is not None:
        answer.voice = ref


def spoke(group: Sequence[Envelope], state: SessionState) -> bool:
    """Whether the person spoke the message the turn answers: a voice note came with it, or
    (a decision's run, a turn carried on) its last words in the context are a transcript."""
    if any(envelope.heard for envelope in group):
        return True
    for message in reversed(state.messages):
        said = [block.text for block in message.content if isinstance(block, TextBlock)]
        if message.role == "user" and said:
            return any(MARK in text for text in said)
    return False


def speakable(markdown: str, most: int) -> str:
    """The answer as it is said: without code, addresses and Markdown's marks, its lines
    joined, cut at the last sentence's end within `most` characters (else at a space). Only
    the answer's start is read, so a long answer costs no more than a short one."""
    text = _FENCED.sub(" ", markdown[: READ_PER_CHAR * most])
    text = _PICTURE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _ADDRESS.sub("", text)
    text = _RULE.sub("", text)
    text = _ROW.sub(lambda row: ", ".join(cell.strip() for cell in row[1].split("|")) + ".", text)
    text = _LINE_MARK.sub("", text)
    text = _EMPHASIS.sub("", text)
    text = text.replace("`", "")
    text = " ".join(text.split())
    if len(text) <= most:
        return text
    cut = text[: most + 1]
    ends = [found.end() for found in SENTENCE_END.finditer(cut)]
    if ends:
        return cut[: ends[-1]].strip()
    return cut.rsplit(" ", 1)[0].strip() if " " in cut else cut[:most]
