"""`/tools [off NAME | on NAME]`: the tools offered in a chat, and an admin's switch for each,
the same on every platform.

The list marks what is switched off in this chat and what the operator's policy denies
everywhere (PARLEY_POLICY, a rule for the tool with no role, person, kind of chat or
arguments). A chat's admins may switch a tool off for every topic and thread of the chat
(`bot.vocabulary.chats.chat_of`), and on again; a tool the policy denies cannot be switched
on, since the operator's word wins over a chat's, and a name that no tool has is refused with
the names that are. A switched-off tool is not offered to the model in the chat's turns, read
from SQL for each turn (`bot.session.reads`).
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.chat.tool_list import ToolCatalog
from bot.store.chats import ChatSettings
from bot.tools.policy import Policy
from bot.vocabulary.chat_settings import MAX_TOOL_NAME

HOW = "An admin may switch one off here with {command} off NAME, and on with {command} on NAME."


@dataclass(frozen=True)
class ChatTools:
    """What `/tools` reads: the deployment's tools, a chat's switches, the operator's policy."""

    catalog: ToolCatalog
    chats: ChatSettings
    policy: Policy

    async def answer(
        self, chat: str, said: str, *, who: str, may_change: bool, command: str
    ) -> str:
        """The answer to `command` with `said` after it, in `chat`, asked by `who`."""
        words = said.split()
        if not words:
            return await self._listed(chat, command)
        switch, name = words[0].lower(), " ".join(words[1:])
        if switch not in ("on", "off") or len(words) != 2 or len(name) > MAX_TOOL_NAME:
            return f"Say {command} to see the tools, {command} off NAME or {command} on NAME."
        if not may_change:
            return "Only an admin may switch tools on or off in this chat."
        known = await self._names()
        if name not in known:
            return f"There is no tool {name[:40]!r} here. Tools: {', '.join(sorted(known))}."
        if switch == "on" and self._denied(name):
            return f"The operator's policy does not allow {name}; it cannot be switched on here."
        await self.chats.switch(chat, name, on=switch == "on", by=who)
        if switch == "on":
            return f"{name} is switched on in this chat again."
        return f"{name} is switched off in this chat: I will not use it here."

    async def _listed(self, chat: str, command: str) -> str:
        off = await self.chats.tools_off(chat)
        lines = []
        for name in sorted(await self._names()):
            if name in off:
                lines.append(f"• {name} (switched off here)")
            elif self._denied(name):
                lines.append(f"• {name} (not allowed by the operator)")
            else:
                lines.append(f"• {name}")
        listed = "\n".join(lines) or "• none"
        servers = await self.catalog.servers_text()
        return f"Tools in this chat:\n{listed}\n{HOW.format(command=command)}" + servers

    async def _names(self) -> set[str]:
        """Parley's own tools and those of the MCP servers connected now."""
        names = {spec.name for spec in self.catalog.own}
        for status in (await self.catalog.servers()).values():
            if status.state == "connected":
                names.update(status.tools)
        return names

    def _denied(self, name: str) -> bool:
        """Whether the operator's policy denies `name` to everyone, wherever it is called."""
        return self.policy.decide(None, name, {}) == "deny"
