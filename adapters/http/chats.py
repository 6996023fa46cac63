"""A chat's standing instruction, for operators: read it, set it, clear it, as `/instructions`
does in the chat itself (`adapters.chat.instruction_commands`), behind the API's token.

A chat is its key as every platform writes it: a Telegram group (`tg:-100123`) or one of its
forum topics (`tg:-100123:7`, whose own instruction comes before its group's), a Slack
channel or DM (`slack:T1:C1`). Nobody is looked up: a key well formed but unknown simply has
no instruction. The body is strict (`{"instruction": "…"}`, a JSON string, nothing else);
`""` or DELETE clears it.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from adapters.web.input import error, read_body, refusal
from adapters.web.services import Services
from bot.vocabulary.chat_settings import MAX_INSTRUCTION, clean_instruction

# ASCII only, `platform:` then the platform's own ids: nothing a database or a log would misread.
CHAT_KEY = re.compile(r"[a-z]{1,16}:[A-Za-z0-9_.:+-]{1,280}")


class InstructionBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    # Bounded here by the characters a body may carry at all; `clean_instruction` says why
    # one too long after trimming is refused.
    instruction: str = Field(max_length=4 * MAX_INSTRUCTION)


def _chat(request: web.Request) -> str:
    key = request.match_info["chat_key"]
    if not CHAT_KEY.fullmatch(key):
        raise refusal(
            web.HTTPUnprocessableEntity,
            "a chat key is platform:id in ASCII letters, digits and _.:+- "
            "(tg:-100123, tg:-100123:7, slack:T1:C1), at most 297 characters",
        )
    return key


def instruction_json(chat: str, instruction: str | None) -> dict[str, Any]:
    return {"chat": chat, "instruction": instruction}


class ChatRoutes:
    def __init__(self, services: Services) -> None:
        self.services = services

    async def instruction(self, request: web.Request) -> web.Response:
        """The instruction set for the key itself (a topic's own, not its group's)."""
        chat = _chat(request)
        found = await self.services.chats.instruction(chat)
        return web.json_response(instruction_json(chat, found))

    async def set_instruction(self, request: web.Request) -> web.Response:
        chat = _chat(request)
        body = await read_body(request, InstructionBody)
        try:
            kept = clean_instruction(body.instruction)
        except ValueError as exc:
            return error(422, "invalid request", problems=[f"instruction: {exc}"])
        await self.services.chats.set_instruction(chat, kept)
        return web.json_response(instruction_json(chat, kept))

    async def clear_instruction(self, request: web.Request) -> web.Response:
        chat = _chat(request)
        await self.services.chats.set_instruction(chat, None)
        return web.json_response(instruction_json(chat, None))


def mount(app: web.Application, services: Services) -> None:
    routes = ChatRoutes(services)
    path = "/api/chats/{chat_key}/instructions"
    app.router.add_get(path, routes.instruction)
    app.router.add_put(path, routes.set_instruction)
    app.router.add_delete(path, routes.clear_instruction)
