"""One streamed reply in Slack: a chat stream in threads, a message edited in place elsewhere.

In a thread the reply streams with Slack's chat streaming methods through slack_sdk's
`chat_stream` helper: text only grows, so each update appends what is new. Where streaming
is unavailable (a DM outside threads, a workspace without it) or stops working (the stream
expired during a long turn, a model call restarted and took text back), the reply continues
by posting and editing messages with chat.update, starting from the text Slack already
shows, so nothing is lost or shown twice.

Updates are coalesced: a pump waits for the shared rate budget of the method it will call,
then shows whatever text there is by then. A reply longer than one message continues in new
messages (see `pages`). The timestamps of the messages a reply posted are kept in Redis under
its first envelope, so a turn that another worker resumes after a crash edits them instead of
posting the reply twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_chat_stream import AsyncChatStream

from adapters.replies import ReplyStore
from adapters.slack import confirm
from adapters.slack.client import SlackCalls, error_of
from adapters.slack.pages import Pager
from adapters.slack.place import Place
from adapters.transcript import Transcript
from bot.agent import events as ev

log = logging.getLogger(__name__)
THINKING = "is thinking…"
GONE = {"message_not_found", "channel_not_found", "is_archived", "not_in_channel"}


@dataclass
class Shown:
    ts: str
    text: str | None  # None: posted by an earlier worker, content unknown


class SlackReply:
    """A `ReplyStream` for one turn; see the module docstring."""

    def __init__(self, calls: SlackCalls, store: ReplyStore, place: Place, key: str) -> None:
        self.calls = calls
        self.store = store
        self.place = place
        self.key = key
        self.streaming = place.thread_ts is not None
        self.pager = Pager()
        self.stream: AsyncChatStream | None = None
        self.index = 0  # the page being streamed
        self.appended = ""  # what the open stream holds (sent, or buffered to send again)
        self.committed = ""  # the body up to where streamed pages show it: it can only grow
        self.transcript = Transcript()
        self.shown: list[Shown] | None = None
        self._dirty = asyncio.Event()
        self._pump: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._started = False
        self._paid = False  # the pump took a token for the next call already

    # --- events -----------------------------------------------------------------------------

    async def send(self, event: ev.AgentEvent) -> None:
        if not self._started:
            self._started = True
            await self._thread_status(THINKING)
        before = self._visible()
        self.transcript.apply(event)
        if isinstance(event, ev.ToolCallStart):
            await self._thread_status(f"is running {event.name}…")
        elif isinstance(event, ev.ConfirmationRequired):
            await self._finish()
            await self._ask(event)
            return
        if self._visible() == before:
            return  # nothing new to show: no call is spent on it
        self._dirty.set()
        if self._pump is None:
            self._pump = asyncio.create_task(self._run_pump())

    async def close(self) -> None:
        pump = self._pump
        async with self._lock:  # an update in flight finishes first, so its message is known
            if pump is not None:
                pump.cancel()
        if pump is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await pump
        self.transcript.tool = ""
        try:
            await self._finish()
        except SlackApiError as exc:
            # Permanent (the channel is gone, the app was removed): trying the turn again
            # would only cost model calls. Network trouble still propagates and retries.
            log.warning("cannot deliver the reply in %s: %s", self.place.session, error_of(exc))

    def _visible(self) -> tuple[str, str]:
        """What an update would show: the text, and a running tool where it is shown inline."""
        return self.transcript.body(), "" if self.streaming else self.transcript.tool

    async def _thread_status(self, status: str) -> None:
        """Slack's "is thinking…" under the thread; cosmetic, so only when the budget allows."""
        if self.place.thread_ts is not None:
            await self.calls.optional(
                "assistant.threads.setStatus",
                self.place.team,
                channel_id=self.place.channel,
                thread_ts=self.place.thread_ts,
                status=status,
            )

    # --- pacing -----------------------------------------------------------------------------

    async def _run_pump(self) -> None:
        """Show the newest text whenever the budget allows; coalesces everything in between."""
        while True:
            await self._dirty.wait()
            scopes = self.calls.scopes(self.place.team, self._next_method(), self.place.channel)
            await self.calls.budget.take(scopes)
            self._dirty.clear()
            try:
                async with self._lock:
                    self._paid = True
                    await self._show(final=False)
            except Exception as exc:  # an intermediate update; the final one reports failures
                log.warning("streaming update in %s failed: %s", self.place.session, exc)

    def _next_method(self) -> str:
        if self.streaming:
            return "chat.appendStream" if self.stream and self.stream.ts else "chat.startStream"
        return "chat.update" if self.shown else "chat.postMessage"

    async def _finish(self) -> None:
        async with self._lock:
            self._paid = False
            await self._show(final=True)
        if self._started and self.place.thread_ts is not None:
            await self._thread_status("")

    async def _ask(self, event: ev.ConfirmationRequired) -> None:
        """Post the approval prompt with its buttons, and remember where it is."""
        if event.confirmation_id is None:
            return
        expires_in = (event.expires_at or time.time()) - time.time()
        blocks = confirm.prompt(
            event.calls,
            expires_in,
            event.confirmation_id,
            can_remember=event.can_remember,
            requester=self.place.user,
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
        if posted is not None:
            record = {"team": self.place.team, "channel": self.place.channel, "ts": posted["ts"]}
            await self.store.save_prompt(event.confirmation_id, record | {"blocks": blocks})

    # --- showing ----------------------------------------------------------------------------

    def _token(self) -> bool:
        """Whether this call was paid for by the pump: only the first call of an update is."""
        paid, self._paid = self._paid, False
        return paid

    async def _show(self, *, final: bool) -> None:
        if self.shown is None:
            await self._resume()
        text = self.transcript.body()
        if not text:
            return
        if self.streaming and not text.startswith(self.committed):
            await self._leave_stream()  # a restarted model call took text back
        if self.streaming:
            await self._stream(text, final=final)
            if self.streaming:
                return
        await self._edit(text, final=final)

    async def _resume(self) -> None:
        """Messages an earlier worker posted for this reply are edited from now on, never
        streamed; a stream it left open is stopped first."""
        self.shown = [Shown(str(ts), None) for ts in await self.store.load(self.key)]
        if self.shown:
            self.streaming = False
            await self.calls.quietly(
                "chat.stopStream", self.place.team, channel=self.place.channel, ts=self.shown[-1].ts
            )

    async def _remember(self) -> None:
        assert self.shown is not None
        await self.store.save(self.key, [shown.ts for shown in self.shown])

    # --- streaming --------------------------------------------------------------------------

    async def _stream(self, text: str, *, final: bool) -> None:
        pager = self.pager
        pager.settle(text, len(self.committed))
        while self.index < len(pager.pages) - 1:  # the page was cut: end it, go on in a new one
            end = pager.pages[self.index].end
            assert end is not None
            if not await self._append(pager.text(text, self.index), text[:end], must_land=True):
                return
            if not await self._stop():
                return
            self.index += 1
            self.appended = ""
        upto = pager.visible(text, final=final)
        page = pager.text(text, self.index, upto)
        if await self._append(page, text[:upto], must_land=final) and final:
            await self._stop()

    async def _append(self, page: str, committed: str, *, must_land: bool) -> bool:
        """Make the open stream show `page`; False if streaming ended (edit from now on)."""
        delta = page[len(self.appended) :]
        if not delta:
            return True
        if self.stream is None and self.appended:
            await self._leave_stream()  # grew after its stream was stopped: edit it instead
            return False
        if self.stream is None:
            self.stream = await self.calls.client.chat_stream(
                channel=self.place.channel,
                thread_ts=self.place.thread_ts or "",
                recipient_team_id=self.place.team,
                recipient_user_id=self.place.user or None,
                buffer_size=1,
            )
        stream = self.stream
        starting = stream.ts is None
        pending = [delta]  # sent once; a retry flushes what the helper kept buffered

        async def request() -> object:
            return await stream.append(markdown_text=pending.pop() if pending else "")

        method = "chat.startStream" if starting else "chat.appendStream"
        try:
            done = await self.calls.run(
                method, self.place.team, request, must_land=must_land, paid=self._token()
            )
        except SlackApiError as exc:
            await self._leave_stream(exc)
            return False
        if not pending:  # in the message now, or in the helper's buffer for the next call
            self.appended = page
            self.committed = committed
        if done is not None and starting and stream.ts is not None:
            await self._opened(stream.ts)
        return True

    async def _opened(self, ts: str) -> None:
        assert self.shown is not None
        self.shown.append(Shown(ts, self.appended))
        await self._remember()

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
        assert self.shown is not None
        if self.stream is not None and self.stream.ts is not None:
            self.shown[-1].text = self.appended
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
        if self.shown and self.stream is not None and self.stream.ts is not None:
            self.shown[-1].text = None  # what it holds is uncertain: edit it to be sure
        self.stream = None
        self.appended = ""

    # --- editing ----------------------------------------------------------------------------

    async def _edit(self, text: str, *, final: bool) -> None:
        pager = Pager()
        pager.settle(text, 0)
        pages = [pager.text(text, index) for index in range(len(pager.pages))]
        if not final and self.transcript.tool:
            pages[-1] += f"\n\n_🔧 {self.transcript.tool}…_"
        for index, page in enumerate(pages):
            if not await self._ensure(index, page, final=final):
                return  # skipped for now (budget): the next update starts again from here
        if final:
            await self._drop_extra(len(pages))

    async def _ensure(self, index: int, page: str, *, final: bool) -> bool:
        """Make message `index` of the reply show `page`: edit it, or post it if new."""
        assert self.shown is not None
        if index < len(self.shown):
            if self.shown[index].text == page:
                return True
            try:
                done = await self.calls.call(
                    "chat.update",
                    self.place.team,
                    must_land=final,
                    paid=self._token(),
                    channel=self.place.channel,
                    ts=self.shown[index].ts,
                    markdown_text=page,
                )
            except SlackApiError as exc:
                if error_of(exc) != "message_not_found":
                    raise
                self.shown = self.shown[:index]  # deleted by someone: post it again
            else:
                if done is None:
                    return False
                self.shown[index].text = page
                return True
        posted = await self.calls.call(
            "chat.postMessage",
            self.place.team,
            must_land=final,
            paid=self._token(),
            channel=self.place.channel,
            thread_ts=self.place.thread_ts,
            markdown_text=page,
        )
        if posted is None:
            return False
        self.shown.append(Shown(str(posted["ts"]), page))
        await self._remember()
        return True

    async def _drop_extra(self, count: int) -> None:
        """A reply that got shorter after a restart: remove what it no longer says."""
        assert self.shown is not None
        for extra in self.shown[count:]:
            await self.calls.quietly(
                "chat.delete", self.place.team, channel=self.place.channel, ts=extra.ts
            )
        if len(self.shown) > count:
            self.shown = self.shown[:count]
            await self._remember()
