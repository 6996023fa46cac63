"""A local stand-in for the Anthropic and OpenAI HTTP APIs that the real SDKs talk to.

Tests script it with `enqueue(...)` (answers in order) or a `responder` (an answer computed
from the request); OpenAI's transcription, speech, embedding and image endpoints are
`transcriptions`, `speech`, `embeddings` and `images` (`transcriptions.py`, `speech.py`,
`embeddings.py`, `images.py`).
It checks requests as the real services do and records every one, so a test can assert both
what Parley sent and that nothing was rejected; with `context_windows` (tokens by model name
prefix) it also refuses a prompt too long for its model's context window (`windows.py`).
The chat APIs take the keys in `keys` (each API's own key unless a test adds more); a key in
`limited` is answered 429 with that many seconds of `retry-after`, as a rate-limited key is,
and each chat request's key is in `keys_used`, in order, refused ones too.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Literal

from aiohttp import web

from tests.fakes.llm import anthropic_api, openai_api, validate, windows
from tests.fakes.llm.cache import PromptCache, Usage
from tests.fakes.llm.embeddings import Embeddings
from tests.fakes.llm.images import Images
from tests.fakes.llm.script import (
    ANTHROPIC_KEY,
    OPENAI_KEY,
    Fail,
    RecordedRequest,
    Reply,
    Scripted,
)
from tests.fakes.llm.speech import Speech
from tests.fakes.llm.sse import StreamCut
from tests.fakes.llm.transcriptions import Transcriptions

ErrorResponse = Callable[[int, str, str, float | None], web.Response]
Complete = Callable[[str, Reply, Usage], web.Response]
ERRORS: dict[str, ErrorResponse] = {
    "anthropic": anthropic_api.error_response,
    "openai": openai_api.error_response,
}
COMPLETE: dict[str, Complete] = {
    "anthropic": anthropic_api.complete,
    "openai": openai_api.complete,
}


def _wrong_openai_key() -> web.Response:
    return openai_api.error_response(
        401,
        "invalid_request_error",
        "Incorrect API key provided. You can find your "
        "API key at https://platform.openai.com/account/api-keys.",
    )


class FakeLLM:
    def __init__(
        self,
        *,
        cache_min_tokens: int = 1024,
        clock: Callable[[], float] = time.monotonic,
        context_windows: dict[str, int] | None = None,
    ) -> None:
        self.context_windows = dict(context_windows or {})  # tokens, by model name prefix
        self.requests: list[RecordedRequest] = []
        self.rejected: list[tuple[RecordedRequest, str]] = []
        self.unscripted: list[RecordedRequest] = []
        self.responder: Callable[[RecordedRequest], Reply | Fail] | None = None
        self._queue: deque[Scripted] = deque()
        self._cache = PromptCache(cache_min_tokens, clock)
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.keys: dict[str, set[str]] = {"anthropic": {ANTHROPIC_KEY}, "openai": {OPENAI_KEY}}
        self.limited: dict[str, float] = {}  # key -> retry-after of its 429
        self.keys_used: list[str] = []
        self.transcriptions = Transcriptions()
        self.embeddings = Embeddings()
        self.images = Images()
        self.speech = Speech()

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    def enqueue(self, *items: Scripted) -> None:
        self._queue.extend(items)

    async def start(self, port: int = 0) -> None:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/v1/chat/completions", self._openai)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_post("/v1/audio/speech", self._speak)
        app.router.add_post("/v1/embeddings", self._embed)
        app.router.add_post("/v1/images/generations", self._generate_image)
        app.router.add_post("/v1/images/edits", self._edit_image)
        # A reply still streaming when the test ends (a stalled one, say) is cut at once
        # rather than waited for: nobody reads it any more.
        self._runner = web.AppRunner(
            app, handle_signals=False, access_log=None, shutdown_timeout=0.1
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        port = sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeLLM:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    def _next(self, recorded: RecordedRequest) -> Reply | Fail | None:
        item: Scripted | None = self._queue.popleft() if self._queue else self.responder
        if item is None:
            self.unscripted.append(recorded)
            return None
        return item if isinstance(item, Reply | Fail) else item(recorded)

    async def _read(
        self, request: web.Request, api: Literal["anthropic", "openai"]
    ) -> RecordedRequest | web.Response:
        error = ERRORS[api]
        try:
            body = json.loads(await request.read())
        except ValueError:
            return error(400, "invalid_request_error", "There was an error parsing the body", None)
        if not isinstance(body, dict):
            return error(400, "invalid_request_error", "body must be an object", None)
        return RecordedRequest(api, request.path, dict(request.headers), body)

    def _refused_key(self, api: Literal["anthropic", "openai"], key: str) -> web.Response | None:
        """The answer to a chat request made with `key`, when it is not taken."""
        self.keys_used.append(key)
        if key in self.limited:
            message = "Number of requests has exceeded your rate limit"
            return ERRORS[api](429, "rate_limit_error", message, self.limited[key])
        if key not in self.keys[api]:
            if api == "openai":
                return _wrong_openai_key()
            return ERRORS[api](401, "authentication_error", "invalid x-api-key", None)
        return None

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        # SDK 2.x sends the key as a bearer token; older clients use x-api-key.
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
        refused = self._refused_key("anthropic", request.headers.get("x-api-key") or bearer)
        if refused is not None:
            return refused
        if not request.headers.get("anthropic-version"):
            return anthropic_api.error_response(
                400, "invalid_request_error", "anthropic-version: header is required"
            )
        recorded = await self._read(request, "anthropic")
        if isinstance(recorded, web.Response):
            return recorded
        return await self._answer(request, recorded, validate.anthropic_request(recorded.body))

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
        refused = self._refused_key("openai", bearer)
        if refused is not None:
            return refused
        recorded = await self._read(request, "openai")
        if isinstance(recorded, web.Response):
            return recorded
        return await self._answer(request, recorded, validate.openai_request(recorded.body))

    async def _transcribe(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {OPENAI_KEY}":
            return openai_api.error_response(
                401, "invalid_request_error", "Incorrect API key provided."
            )
        return await self.transcriptions.handle(request)

    async def _speak(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {OPENAI_KEY}":
            return _wrong_openai_key()
        return await self.speech.handle(request)

    async def _embed(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {OPENAI_KEY}":
            return _wrong_openai_key()
        return await self.embeddings.handle(request)

    async def _generate_image(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {OPENAI_KEY}":
            return _wrong_openai_key()
        return await self.images.generations(request)

    async def _edit_image(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {OPENAI_KEY}":
            return _wrong_openai_key()
        return await self.images.edits(request)

    async def _answer(
        self, request: web.Request, recorded: RecordedRequest, problem: str | None
    ) -> web.StreamResponse:
        error = ERRORS[recorded.api]
        self.requests.append(recorded)
        if problem is not None:
            self.rejected.append((recorded, problem))
            return error(400, "invalid_request_error", problem, None)
        refused = windows.too_long(recorded.api, recorded.body, self.context_windows)
        if refused is not None:
            self.rejected.append((recorded, refused.message))
            if recorded.api == "openai":
                return openai_api.error_response(
                    400, "invalid_request_error", refused.message, code=refused.code
                )
            return error(400, "invalid_request_error", refused.message, None)
        script = self._next(recorded)
        if script is None:
            return error(500, "api_error", "fake LLM: no scripted answer for this request", None)
        if isinstance(script, Fail) and not script.mid_stream:
            return error(script.status, script.error_type, script.message, script.retry_after)
        body, model = recorded.body, str(recorded.body["model"])
        if recorded.api == "anthropic":
            usage = self._cache.anthropic(model, body)
        else:
            usage = self._cache.openai(model, body)
        recorded.usage = usage
        if not body.get("stream"):
            reply = script if isinstance(script, Reply) else Reply()
            return COMPLETE[recorded.api](model, reply, usage)
        try:
            if recorded.api == "anthropic":
                return await anthropic_api.stream(request, body, script, usage)
            return await openai_api.stream(request, body, script, usage)
        except (StreamCut, ConnectionResetError):
            raise web.HTTPException() from None
