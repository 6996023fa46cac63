"""Where an HTTP API conversation lives, and who asks: every `http:` name the API gives.

A session of the API is `http:{id}`, its id what `POST /api/sessions` (or an agent run)
returned: a uuid4's hex, so anything else is refused before Redis or the database is asked
(`str.isalnum` would let "٣" and "é" through). The API shows, and is given, the id alone; the
session key is made and read back here, and only here. Who a request acts for is an `http:`
name too (`common.USER`): the holder of the API token, this machine when there is none, or
anyone on a public path (the pages, a platform's webhook, `/healthz`).
"""

from __future__ import annotations

import re
import uuid

PLATFORM = "http"
SESSION_ID = re.compile(r"[0-9a-f]{32}")
_START = f"{PLATFORM}:"

TOKEN_HOLDER = "http:token"
LOCAL = "http:local"
PUBLIC = "http:public"


def new_session_id() -> str:
    """The id of a session the API makes now."""
    return uuid.uuid4().hex


def session_key(session_id: str) -> str:
    """The session key of the API's session `session_id`."""
    return f"{_START}{session_id}"


def session_id(session: str) -> str:
    """The id the API shows for its session key `session`."""
    return session.removeprefix(_START)


def is_ours(session: str) -> bool:
    """Whether `session` is the key of an API session (rather than a chat platform's)."""
    return session.startswith(_START)


def is_session_key(session: str) -> bool:
    """Whether `session` is a key the API could have made: `http:` and a well-formed id."""
    return is_ours(session) and SESSION_ID.fullmatch(session_id(session)) is not None
