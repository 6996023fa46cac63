"""What a turn the model's API failed leaves in the session's context.

A request the API refuses as invalid (a 4xx other than a timeout, a conflict or a rate
limit) is refused again for as long as what caused it is in the context, and every later
message would be merged into it: so everything the turn added is taken out, and the person is
told. Any other failure says nothing against the message: a passing one (overloaded, the
network, rate limits outlasting the retries) or one the deployment must mend (a refused key,
an unknown model). The message stays, and the next message's turn is asked to answer both.
"""

from __future__ import annotations

from bot.vocabulary.messages import Message
from bot.vocabulary.state import ContextMark

DROPPED = (
    "The model's API refused this request ({error}), so I left your message out of our "
    "conversation. Send it again, changed, or ask something else."
)
UNREMOVED = (
    "The model's API refused this request ({error}). Send your message again, changed, "
    "or start over with /new."
)
KEPT = (
    "The model's API did not answer ({error}). Your message is kept: I will answer it "
    "together with your next one."
)
ANSWER_BOTH = (
    "(Parley: the message above could not be answered because the model's API failed for "
    "a moment. Answer it as well as the message below.)"
)


def mark_after(messages: list[Message], added: int) -> ContextMark:
    """The mark of the `added` blocks just appended to the last of `messages`."""
    last = messages[-1]
    return ContextMark(message=last.id, blocks=len(last.content) - added)


def mended(
    messages: list[Message], start: ContextMark | None, error: str, *, rejected: bool
) -> tuple[str, bool]:
    """Mend the context after the model's API failed the turn that began at `start`: what
    to tell the person, and whether the context now ends in a message waiting for its
    answer (which the next turn is asked to answer too)."""
    if not rejected:
        return KEPT.format(error=error), True
    if start is None or not forget(messages, start):
        return UNREMOVED.format(error=error), False
    waiting = bool(messages) and messages[-1].role == "user"
    return DROPPED.format(error=error), waiting


def forget(messages: list[Message], mark: ContextMark) -> bool:
    """Take out everything from `mark` on; False if its message is gone (compacted away)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.id == mark.message:
            del messages[index + 1 :]
            del message.content[mark.blocks :]
            if not message.content:
                del messages[index]
            return True
    return False
