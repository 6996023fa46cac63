"""One streamed reply in Slack: a chat stream in threads, a message edited in place elsewhere.

The pump, the pacing, the last update that must land and the crash-safe message ids are
shared by every platform (`adapters.chat.reply_stream`, `adapters.chat.reply_messages`); this module
holds Slack's surface, how a reply shows, and `adapters.slack.wire` its calls.
Updates keep the pace of the method the next one calls, at Parley's share of its tier.

In a thread the reply streams with Slack's chat streaming methods through slack_sdk's
`chat_stream` helper: text only grows, so each update appends what is new. Where streaming
is unavailable (a DM outside threads, a workspace without it) or stops working (the stream
expired during a long turn, a model call restarted and took text back), the reply continues
by posting and editing messages with chat.update, starting from the text Slack already
shows, so nothing is lost or shown twice. A reply longer than one message continues in new
messages (see `pages`). While the model thinks or a tool runs, the thread's status says so,
set beside the turn so that no model call or tool waits for it (`status`). A file a tool
made is uploaded into the reply's thread (`uploads`), and the text that follows it goes into
a new stream (or new messages) below it. A reply that takes a while gets a Stop button below
it until its turn is over (`stop_button`).

A `plan_execute` turn's plan and the helpers a turn starts stream as Slack's task updates, in
the stream that then carries the answer: each step or helper is sent when it starts or ends
(`tasks`). Where the reply is edited instead, the plan is a checklist above the answer and
each helper a status line, as on other platforms.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.models.messages.chunk import TaskUpdateChunk
from slack_sdk.web.async_chat_stream import AsyncChatStream

from adapters.chat.pacing import Slot
from adapters.chat.questions import as_asked
from adapters.chat.replies import ReplyStore
from adapters.chat.reply_messages import Messages
from adapters.chat.reply_stream import QuietSurface, StreamedReply, seal_above
from adapters.chat.transcript import Transcript
from adapters.slack import ask, confirm
from adapters.slack.client import SlackCalls, error_of
from adapters.slack.pages import Pager
from adapters.slack.place import Place
from adapters.slack.status import ThreadStatus
from adapters.slack.stop_button import StopButton
from adapters.slack.tasks import TaskBoard
from adapters.slack.uploads import Uploads
from adapters.slack.wire import SlackWire
from bot.files.store import FileStore
from bot.redis.confirmations import Confirmation
from bot.redis.ratelimit import Scope
from bot.vocabulary import events as ev

log = logging.getLogger(__name__)
THINKING = "is thinking…"
THOUGHT_SHOWN = 600  # characters of the model's thinking quoted above an edited reply
STATUS_THOUGHT = 80  # of its latest line in a thread's status


def slack_reply(
    calls: SlackCalls,
    store: ReplyStore,
    files: FileStore,
    place: Place,
    key: str,
    heard: str = "",
    stop_after: float | None = None,
    *,
    fresh: bool = False,
) -> StreamedReply:
    """The reply to the turn whose first envelope is `key`, in `place`, with what was
    `heard` in the person's voice notes quoted above it; the files it posts are read from
    `files`. A Stop button shows under it once it has run `stop_after` seconds (None: never);
    `fresh`: nothing was posted for it yet (`Egress.open`)."""
    transcript = Transcript(heard)
    wire = SlackWire(calls, place)
    messages: Messages[str, str] = Messages(wire, store, key, fresh=fresh)
    surface = SlackSurface(calls, place, messages, transcript, Uploads(calls, place, files))
    if stop_after is not None:
        surface.stop_button = StopButton(calls, store.redis, place, key, stop_after)
    return StreamedReply(calls, surface, messages, transcript, place.session)


class SlackSurface(QuietSurface):
    """How a reply shows in Slack: streamed in threads, edited messages elsewhere."""

    undeliverable: tuple[type[Exception], ...] = (SlackApiError,)

    def __init__(
        self,
        calls: SlackCalls,
        place: Place,
        messages: Messages[str, str],
        transcript: Transcript,
        uploads: Uploads,
    ) -> None:
        self.calls = calls
        self.uploads = uploads
        self.place = place
        self.messages = messages
        self.transcript = transcript
        self.streaming = place.thread_ts is not None
        self.pager = Pager()
        self.stream: AsyncChatStream | None = None
        self.index = 0  # the page being streamed
        self.appended = ""  # what the open stream holds (sent, or buffered to send again)
        self.committed = ""  # the body up to where streamed pages show it: it can only grow
        self.tasks = TaskBoard()  # the plan's steps and the helpers, as last streamed
        self.status = ThreadStatus(calls, place)  # "is thinking…" under the thread
        self.stop_button: StopButton | None = None
        self._inline(not self.streaming)

    def _inline(self, inline: bool) -> None:
        """Whether the text shows the plan, the helpers and the thinking: where it is edited.
        A stream shows the plan and the helpers as task updates, and as it only grows at its
        end, the thinking as the thread's status."""
        self.transcript.plan_inline = self.transcript.helpers_inline = inline
        self.transcript.thought_limit = THOUGHT_SHOWN if inline else 0

    def pace(self) -> float:
        return self.calls.pace(self.place.team, self._next_method(), self.place.channel)

    def scopes(self) -> list[Scope]:
        return self.calls.scopes(self.place.team, self._next_method(), self.place.channel)

    def _next_method(self) -> str:
        if self.streaming:
            return "chat.appendStream" if self.stream and self.stream.ts else "chat.startStream"
        return "chat.update" if self.messages.posted else "chat.postMessage"

    def shows_tool(self) -> bool:
        return not self.streaming  # a stream shows the tool as the thread's status

    async def started(self) -> None:
        self.status.show(THINKING)  # beside the turn: the model is asked meanwhile

    async def tool_started(self, name: str) -> None:
        self.status.show(f"is running {name}…")

    async def joined(self, event: ev.Joined) -> None:
        """The person's new message was taken into the turn: the status says so until the
        next thing it shows."""
        self.status.show("is taking your new message into account…")

    async def thinking(self) -> None:
        """In a thread, the status shows the latest line of the model's thinking."""
        said = self.transcript.thinking_now or self.transcript.thinking
        lines = [line.strip() for line in said.splitlines() if line.strip()]
        if lines:
            last = lines[-1]
            cut = last if len(last) <= STATUS_THOUGHT else "…" + last[-STATUS_THOUGHT:]
            self.status.show(f"is thinking: {cut}")

    async def ended(self) -> None:
        await self.status.settle("")

    async def closed(self) -> None:
        self.status.cancel()  # a normal close already settled it: nothing left to stop

    def beside(self) -> Coroutine[Any, Any, None] | None:
        return self.stop_button.beside() if self.stop_button is not None else None

    async def finished(self) -> None:
        if self.stop_button is None:
            return
        try:
            await self.stop_button.remove()
        except Exception:  # a button left showing must not cost the reply anything
            log.exception("removing the Stop button in %s failed", self.place)

    async def planned(self, event: ev.PlanUpdated, lock: asyncio.Lock) -> None:
        """Stream the steps that changed since the last update as task updates."""
        if self.streaming:
            await self._update_tasks(lambda: self.tasks.plan(event), lock)

    async def helping(
        self, event: ev.ToolCallStart | ev.ToolCallResult, lock: asyncio.Lock
    ) -> None:
        """Stream a helper that started or ended as a task update."""
        if self.streaming:
            await self._update_tasks(lambda: self.tasks.helper(event), lock)

    async def _update_tasks(
        self, changed: Callable[[], list[TaskUpdateChunk]], lock: asyncio.Lock
    ) -> None:
        """Send the `changed` tasks into the stream, unless this reply is edited by now (an
        earlier worker's messages, a stream that failed or was stopped): then the text shows
        them, as the transcript has them."""
        async with lock:
            if await self.messages.load():
                await self.resumed()
            chunks = changed()
            if not self.streaming or not chunks:
                return
            if await self._send_tasks(chunks):
                self.tasks.mark(chunks)
            elif self.streaming:  # its stream was stopped (its last update, before a prompt)
                await self._leave_stream()

    async def _send_tasks(self, chunks: list[TaskUpdateChunk]) -> bool:
        if self.stream is None and self.appended:
            return False  # its stream was stopped: the tasks go in the edited text
        if self.stream is None:
            self.stream = await self._open_stream()
        stream = self.stream
        starting = stream.ts is None

        async def request() -> object:
            return await stream.append(chunks=chunks)

        method = "chat.startStream" if starting else "chat.appendStream"
        try:
            await self.calls.run(method, self.place.team, request, must_land=True)
        except SlackApiError as exc:
            await self._leave_stream(exc)
            return False
        if starting and stream.ts is not None:
            await self.messages.add(stream.ts, self.appended)
        return True

    async def _open_stream(self) -> AsyncChatStream:
        return await self.calls.client.chat_stream(
            channel=self.place.channel,
            thread_ts=self.place.thread_ts or "",
            recipient_team_id=self.place.team,
            recipient_user_id=self.place.user or None,
            buffer_size=1,
            task_display_mode="plan",
        )

    async def resumed(self) -> None:
        """Messages an earlier worker posted for this reply are edited from now on, never
        streamed; a stream it left open is stopped first."""
        posted = self.messages.posted
        assert posted
        self.streaming = False
        self._inline(True)
        await self.calls.quietly(
            "chat.stopStream", self.place.team, channel=self.place.channel, ts=posted[-1].id
        )

    async def show(self, *, must_land: bool, slot: Slot | None) -> None:
        text = self.transcript.body()
        if not text:
            return
        if self.streaming and not text.startswith(self.committed):
            await self._leave_stream()  # a restarted model call took text back
        if self.streaming:
            await self._stream(text, must_land=must_land, slot=slot)
            if self.streaming:
                return
        await self._edit_pages(text, must_land=must_land, slot=slot)

    # --- streaming --------------------------------------------------------------------------

    async def _stream(self, text: str, *, must_land: bool, slot: Slot | None) -> None:
        pager = self.pager
        pager.cut(text, len(self.committed))
        while self.index < len(pager.pages) - 1:  # the page was cut: end it, go on in a new one
            end = pager.pages[self.index].end
            assert end is not None
            if not await self._append(pager.text(text, self.index), text[:end], True, slot):
                return
            if not await self._stop():
                return
            self.index += 1
            self.appended = ""
        upto = pager.visible(text, complete=must_land)  # the last update has all the text
        page = pager.text(text, self.index, upto)
        if await self._append(page, text[:upto], must_land, slot) and must_land:
            await self._stop()

    async def _append(self, page: str, committed: str, must_land: bool, slot: Slot | None) -> bool:
        """Make the open stream show `page`; False if streaming ended (edit from now on)."""
        delta = page[len(self.appended) :]
        if not delta:
            return True
        if self.stream is None and self.appended:
            await self._leave_stream()  # grew after its stream was stopped: edit it instead
            return False
        if self.stream is None:
            self.stream = await self._open_stream()
        stream = self.stream
        starting = stream.ts is None
        pending = [delta]  # sent once; a retry flushes what the helper kept buffered

        async def request() -> object:
            return await stream.append(markdown_text=pending.pop() if pending else "")

        method = "chat.startStream" if starting else "chat.appendStream"
        try:
            done = await self.calls.run(
                method, self.place.team, request, must_land=must_land, slot=slot
            )
        except SlackApiError as exc:
            await self._leave_stream(exc)
            return False
        if not pending:  # in the message now, or in the helper's buffer for the next call
            self.appended = page
            self.committed = committed
        if done is not None and starting and stream.ts is not None:
            await self.messages.add(stream.ts, self.appended)
        return True

    async def _stop(self) -> bool:
        stream = self.stream
        if stream is None or stream.ts is None:
            return True
        try:
            await self.calls.run("chat.stopStream", self.place.team, stream.stop, must_land=True)
        except SlackApiError as exc:
            await self._leave_stream(exc)
            return False
        self._close_page()
        return True

    def _close_page(self) -> None:
        """The page's stream ended; `appended` stays, it is what the message shows."""
        if self.stream is not None and self.stream.ts is not None:
            self.messages.posted[-1].content = self.appended
        self.stream = None

    async def _leave_stream(self, exc: SlackApiError | None = None) -> None:
        """Go on by editing messages: streaming failed, expired, or text was taken back."""
        if exc is not None:
            log.info("streaming in %s ended (%s); editing instead", self.place, error_of(exc))
        elif self.stream is not None and self.stream.ts is not None:
            stream = self.stream
            with contextlib.suppress(SlackApiError):
                await self.calls.run(
                    "chat.stopStream", self.place.team, stream.stop, must_land=True
                )
        self.streaming = False
        self._inline(True)
        posted = self.messages.posted
        if posted and self.stream is not None and self.stream.ts is not None:
            posted[-1].content = None  # what it holds is uncertain: edit it to be sure
        self.stream = None
        self.appended = ""

    # --- editing ----------------------------------------------------------------------------

    async def _edit_pages(self, text: str, *, must_land: bool, slot: Slot | None) -> None:
        pager = Pager()
        pager.cut(text, 0)
        pages = [pager.text(text, index) for index in range(len(pager.pages))]
        if not must_land and self.transcript.tool:
            pages[-1] += f"\n\n_🔧 {self.transcript.tool}…_"
        for index, page in enumerate(pages):
            if not await self.messages.ensure(index, page, must_land=must_land, slot=slot):
                return  # skipped for now (budget): the next update starts again from here
        if must_land:
            await self.messages.drop_extra(len(pages))

    # --- files and the approval prompt -------------------------------------------------------

    async def post_file(self, event: ev.FileSent) -> str:
        return await self.uploads.post(event)

    async def file_posted(self) -> None:
        """The text that follows goes below the file: a new stream, or new messages."""
        await seal_above(self.transcript, self.messages)
        self.pager, self.index, self.appended, self.committed = Pager(), 0, "", ""

    async def post_prompt(
        self, event: ev.ConfirmationRequired, expires_in: float
    ) -> dict[str, Any] | None:
        assert event.confirmation_id is not None
        if event.questions:
            return await self._post_questions(as_asked(event))
        blocks = confirm.prompt(
            event.calls,
            expires_in,
            event.confirmation_id,
            can_remember=event.can_remember,
            requester=self.place.user,
            helper=event.helper,
        )
        posted = await self.calls.call(
            "chat.postMessage",
            self.place.team,
            must_land=True,
            channel=self.place.channel,
            thread_ts=self.place.thread_ts,
            text=confirm.summary(event.calls),
            blocks=blocks,
        )
        if posted is None:
            return None
        return {"team": self.place.team, "channel": self.place.channel, "ts": posted["ts"]} | {
            "blocks": blocks
        }

    async def _post_questions(self, asked: Confirmation) -> dict[str, Any] | None:
        """An `ask_user` prompt; it is drawn again from its confirmation when it changes."""
        posted = await self.calls.call(
            "chat.postMessage",
            self.place.team,
            must_land=True,
            channel=self.place.channel,
            thread_ts=self.place.thread_ts,
            text=ask.summary(asked),
            blocks=ask.blocks(asked),
        )
        if posted is None:
            return None
        return {"team": self.place.team, "channel": self.place.channel, "ts": posted["ts"]}
