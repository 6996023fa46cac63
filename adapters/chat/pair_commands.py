"""`/pair CODE` and `/unpair PERSON`: an admin lets a stranger in, or a paired person out

The same on every platform. Only admins may, in any chat: the code names whom it lets in, so
where it is said does not matter. What is said is read strictly, and every bad input has its
own answer (`bot.people.pairing`).
"""

from __future__ import annotations

from adapters.chat.access import Gate
from bot.people.pairing import NO_PAIRING

ADMINS_ONLY = "Only an admin can /{name} people."
USAGE = {
    "pair": "Give the code a person got from me: /pair CODE",
    "unpair": "Say whom to unpair: /unpair tg:123 (or slack:U012AB3CD)",
}


async def answer(gate: Gate, who: str, name: str, said: str) -> str:
    """The answer to `/{name} {said}` (`pair` or `unpair`) from the person `who`."""
    if not gate.is_admin(who):
        return ADMINS_ONLY.format(name=name)
    if gate.pairing is None:
        return NO_PAIRING
    if not said.strip():
        return USAGE[name]
    if name == "pair":
        return await gate.pairing.approve(said, who)
    return await gate.pairing.revoke(said, who)
