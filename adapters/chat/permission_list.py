"""`/permissions` on every platform: the tools a person always allows in a chat, what the
list's Revoke buttons carry, and the answer to a press of one.

A grant is one person's in one chat ("Always allow" on an approval, `bot.store.grants`). The
list shows the asker's own grants in the chat; an admin's shows everyone's. A press is checked
again, since anyone in a group can press a button of a list posted there, or forge one: a
grant is revoked by its person or an admin, and only within the chat the list is in, so a
number from another chat revokes nothing.

How a list is posted and a press answered is each platform's business; here is only what to
say, so Telegram and Slack say the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.chat.item_list import ItemButtons, Listing
from bot.store.grants import Grant, Grants
from bot.vocabulary.envelope import Sender

OWN_HEADER = "Tools you always allow in this chat:"
ALL_HEADER = "Tools people always allow in this chat:"
EMPTY = (
    "You have not allowed any tool for good here. When I ask before using a tool, "
    '"Always allow" stops me asking you again in this chat; /permissions undoes it.'
)
SHOWN = 30  # a section per grant within Slack's 50 blocks; Telegram's 100 buttons
MALFORMED = "This button is not one I know; send /permissions for a fresh list."
BUTTONS = ItemButtons("perm:revoke:")


@dataclass(frozen=True)
class RevokeAnswer:
    """The answer to a press; `line` replaces the grant's line in the list (and its button
    goes) when the grant is gone, by this press or before it."""

    text: str
    grant_id: int | None = None
    line: str | None = None
    alert: bool = True


async def listing(grants: Grants, chat: str, viewer: Sender) -> Listing | None:
    """What `viewer` sees in `chat` (an admin: everyone's grants), None when nothing."""
    shown = await grants.in_chat(chat, None if viewer.is_admin else viewer.id)
    if not shown:
        return None
    header = ALL_HEADER if viewer.is_admin else OWN_HEADER
    lines = [header, *(line(grant, viewer) for grant in shown[:SHOWN])]
    if len(shown) > SHOWN:
        lines.append(f"… and {len(shown) - SHOWN} more; revoke some to see them.")
    return Listing(lines, [grant.id for grant in shown[:SHOWN]])


def line(grant: Grant, viewer: Sender) -> str:
    """`#7 run_python`, and whose it is when it is not the viewer's."""
    whose = "" if grant.person == viewer.id else f", for {grant.person}"
    return f"#{grant.id} {grant.tool}{whose}"


def revoked_line(grant_id: int, tool: str = "") -> str:
    return f"#{grant_id} {tool}: revoked" if tool else f"#{grant_id} revoked"


def button_label(grant_id: int) -> str:
    return f"Revoke #{grant_id}"


async def revoke(
    grants: Grants, grant_id: int | None, chat: str, presser: Sender, *, listed_here: bool
) -> RevokeAnswer:
    """Revoke grant `grant_id` of `chat` for `presser`; `listed_here` says the pressed list
    showed it, so its absence means it is already revoked rather than never here."""
    if grant_id is None:
        return RevokeAnswer(MALFORMED)
    grant = await grants.get(grant_id)
    if grant is None or grant.chat != chat:
        if listed_here:
            return RevokeAnswer(
                f"#{grant_id} is already revoked.", grant_id, revoked_line(grant_id)
            )
        return RevokeAnswer(f"There is no permission #{grant_id} in this chat.")
    if grant.person != presser.id and not presser.is_admin:
        return RevokeAnswer(
            f"Only {grant.person}, whose permission it is, or an admin may revoke it."
        )
    if await grants.revoke(grant_id, chat=chat) is None:  # revoked meanwhile
        return RevokeAnswer(f"#{grant_id} is already revoked.", grant_id, revoked_line(grant_id))
    return RevokeAnswer(
        f"Revoked: I will ask before using {grant.tool} again.",
        grant_id,
        revoked_line(grant_id, grant.tool),
        alert=False,
    )
