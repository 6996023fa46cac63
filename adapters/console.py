"""`parley chat`: the agent in a terminal, no Redis and no platform.

Reads lines from stdin (so `echo hi | parley chat` works), streams the reply as it arrives,
shows tool calls as they run, and asks about tools that need approval on the terminal; the
agent's questions (`ask_user`) are numbered lists, answered by a number or in one's own words,
one question after another. Ctrl-C
during a reply stops that reply, as `/stop` does on the platforms. A failed turn is one line on
stderr, so `parley chat > answer.txt` keeps only answers and the failure still shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TextIO

from bot.agent.attachments import Deliveries
from bot.agent.deps import TurnRequest
from bot.agent.loop import Agent
from bot.config.settings import Settings
from bot.files.store import FileStore
from bot.tools import ask_user
from bot.tools.base import ToolContext
from bot.tools.workspace_paths import workspace_of
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Sender
from bot.vocabulary.questions import ANSWER_CHARS, Answer, Question, answered_text
from bot.vocabulary.state import SessionState

Ask = Callable[[str], Awaitable[str | None]]
SESSION = "console:local"
RESULT_PREVIEW = 300


def _short(value: object, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ask_tty(question: str) -> str | None:
    try:
        with open("/dev/tty", "r+", encoding="utf-8") as tty:
            tty.write(question)
            tty.flush()
            return tty.readline()
    except OSError:
        return None


class ConsoleChat:
    def __init__(
        self,
        agent: Agent,
        settings: Settings,
        *,
        stdin: TextIO = sys.stdin,
        stdout: TextIO = sys.stdout,
        stderr: TextIO = sys.stderr,
        ask: Ask | None = None,
    ) -> None:
        self.agent = agent
        self.files = FileStore(settings.files_dir)  # where the files the agent sends are
        self.stdin = stdin
        self.out = stdout
        self.err = stderr
        self._line_open = False  # stdout's last line has no newline yet
        self.interactive = stdin.isatty()
        self.ask = ask or self._ask_terminal
        user = getpass.getuser()
        self.ctx = ToolContext(
            session_key=SESSION,
            user=Sender(id=f"console:{user}", name=user, is_admin=True),
            platform="console",
            chat_kind="private",
            default_timezone=settings.timezone,
            workspace=workspace_of(settings.workspace_dir, SESSION),
        )
        self.state = SessionState()

    async def run(self) -> int:
        """Chat until end of input or /exit; returns the exit status (1 if a turn failed)."""
        if self.interactive:
            self._write("Parley: type a message; /new starts over, /exit quits.\n")
        status = 0
        while (line := await self._read("you> ")) is not None:
            text = line.strip()
            if not text:
                continue
            if text in ("/exit", "/quit"):
                break
            if text == "/new":
                self.state = SessionState()
                self._write("(new conversation)\n")
                continue
            if not await self.turn(TurnRequest(self.ctx, text=text)):
                status = 1
        return status

    async def turn(self, request: TurnRequest | None) -> bool:
        """Run one user turn, including the decisions it needs; False if it failed. The
        skills are looked at first, as a worker does: one changed since shows in this turn."""
        if (skills := self.agent.deps.prompt.skills) is not None:
            await skills.current()
        ok = True
        while request is not None:
            pending: ev.ConfirmationRequired | None = None
            async for event in self._events(request):
                if isinstance(event, ev.ConfirmationRequired):
                    pending = event
                elif isinstance(event, ev.Completed):
                    ok = event.finish_reason != ev.FinishReason.ERROR
            request = None
            if pending is not None and pending.questions:
                said = await self._answer(pending.questions)
                answers = {call.call_id: said for call in pending.calls}
                request = TurnRequest(self.ctx, decisions={}, answers=answers)
            elif pending is not None:
                decisions = {call.call_id: await self._decide(call) for call in pending.calls}
                request = TurnRequest(self.ctx, decisions=decisions)
        return ok

    async def _answer(self, questions: list[Question]) -> str:
        """Each question as a numbered list: a number picks its option, other text is the
        answer in one's own words; what the model reads back."""
        answers: list[Answer] = []
        for question in questions:
            options = "".join(f"  {n}. {o}\n" for n, o in enumerate(question.options, 1))
            line = await self.ask(
                f"\n❓ {question.question}\n{options}  (a number, or your own words) "
            )
            if line is None:
                self._write("(no terminal to ask on: no answer)\n")
                return ask_user.NO_ANSWER
            text = line.strip()
            if text.isdigit() and 1 <= int(text) <= len(question.options):
                answers.append(Answer(text=question.options[int(text) - 1]))
            elif text:
                answers.append(Answer(text=text[:ANSWER_CHARS], other=True))
            else:
                return ask_user.NO_ANSWER
        return answered_text(questions, answers, self.ctx.user.name, complete=True)

    async def _events(self, request: TurnRequest) -> AsyncIterator[ev.AgentEvent]:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, cancel.set)
        deliveries = Deliveries()  # a file is shown at once: its path in the file store
        try:
            async for event in self.agent.run(
                self.state, request, cancel=cancel, deliveries=deliveries
            ):
                self._render(event)
                if isinstance(event, ev.FileSent):
                    deliveries.record(event, "")
                yield event
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)

    def _render(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.TextDelta):
            self._write(event.text)
        elif isinstance(event, ev.TextReset):
            self._write("\n[the model call failed part-way; starting the answer again]\n")
        elif isinstance(event, ev.Retrying):
            self._write(f"\n[model unavailable ({event.error}); retry in {event.delay:g} s]\n")
        elif isinstance(event, ev.ToolCallStart):
            self._write(f"\n🔧 {event.name}({_short(event.arguments)})\n")
        elif isinstance(event, ev.ToolCallResult):
            mark = "✗" if event.is_error else "→"
            self._write(f"   {mark} {_short(event.content, RESULT_PREVIEW)}\n")
        elif isinstance(event, ev.FileSent):
            where = self.files.path(event.file.sha256)
            caption = f" ({event.caption})" if event.caption else ""
            self._write(f"   📎 {event.file.name}{caption}: {where}\n")
        elif isinstance(event, ev.Compacted):
            self._write(
                f"[context compacted: ~{event.tokens_before:,} → ~{event.tokens_after:,} tokens]\n"
            )
        elif isinstance(event, ev.Error):
            self._fail(event.message)
        elif isinstance(event, ev.Completed) and event.finish_reason == ev.FinishReason.ERROR:
            self._write("\n" if self._line_open else "")  # the error line said it all
        elif isinstance(event, ev.Completed):
            if event.finish_reason not in (
                ev.FinishReason.END_TURN,
                ev.FinishReason.AWAITING_CONFIRMATION,
            ):
                self._write(f"\n[{event.finish_reason.replace('_', ' ')}]")
            self._write("\n")

    async def _decide(self, call: ev.PendingCall) -> bool:
        question = f"Allow {call.name}({_short(call.arguments, 500)})? [y/N] "
        answer = await self.ask(question)
        if answer is None:
            self._write(f"{question}\n(no terminal to ask on: denied)\n")
            return False
        return answer.strip().lower() in ("y", "yes")

    async def _ask_terminal(self, question: str) -> str | None:
        """Ask on stdin when it is the terminal, else on /dev/tty; None when there is neither."""
        if self.interactive:
            return await self._read(question)
        return await asyncio.to_thread(_ask_tty, question)

    async def _read(self, prompt: str) -> str | None:
        if self.interactive:
            self._write(prompt)
        line = await asyncio.to_thread(self.stdin.readline)
        return line or None

    def _write(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self._line_open = not text.endswith("\n")

    def _fail(self, message: str) -> None:
        """One line on stderr, after the reply's unfinished line (both may share a terminal)."""
        if self._line_open:
            self._write("\n")
        self.err.write(f"[error] {' '.join(message.split())}\n")
        self.err.flush()
