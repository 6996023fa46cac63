"""What the agent remembers for a person (or a group chat), for operators: list it, and
delete one memory or all of them (a privacy request); whose memories there are
(`GET /api/memory/scopes`), and whether a scope's days are digested, switched as its person
or a chat's admin would (`/memory digest on|off`). The tools a person always allows, in
every chat ("Always allow"), to list and revoke. A person's preferences, to read and set. And
the people admins let in by their pairing codes (`GET /api/people`).

A person is their sender id, as every platform writes it (`tg:123`, `slack:T1:U1`,
`http:token`); a group chat's memories are under `chat:` and the chat (`chat:tg:-100123`,
`chat:slack:T1:C1`), the scope the tools use (`bot.memory.scope`). Nobody is looked up: an
id that is well formed but unknown simply has no memories.
"""

from __future__ import annotations

import re
from datetime import UTC
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from adapters.http.common import USER
from adapters.http.run_query import bad, only
from adapters.web.input import error, query_number, read_body, refusal
from adapters.web.services import Services
from bot.llm.served import served_model
from bot.memory.scope import is_private
from bot.people.preferences import clean
from bot.store.digests import Digests
from bot.store.grants import Grant
from bot.store.memory import MAX_TEXT, Memory
from bot.store.memory_scopes import MemoryScopes, ScopeHolding
from bot.store.pairings import Paired
from bot.vocabulary.preferences import NAMES, Name, Preferences

SEARCHED = 20  # memories `?q=` returns at most, best first
SCOPES_PAGE, MAX_SCOPES = 50, 200  # scopes `GET /api/memory/scopes` lists by default, at most

# ASCII only, `platform:` then the platform's own id: nothing a database or a log would misread.
PERSON_ID = re.compile(r"[a-z]{1,16}:[A-Za-z0-9_.@:+-]{1,180}")
MEMORY_ID = re.compile(r"[1-9][0-9]{0,17}")  # fits a 64-bit row id (of a grant too)


def memory_json(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "text": memory.text,
        "created_at": memory.created_at.astimezone(UTC).isoformat(),
        "day": None if memory.day is None else memory.day.isoformat(),  # a digest: its day
    }


def holding_json(held: ScopeHolding) -> dict[str, Any]:
    return {
        "scope": held.scope,
        "kind": "person" if is_private(held.scope) else "chat",
        "memories": held.memories,
        "digests": held.digests,
        "newest_at": held.newest_at.astimezone(UTC).isoformat(),
        "digests_on": not held.digests_off,
    }


class DigestSwitch(BaseModel):
    """Whether a scope's days are digested: `{"on": true}` or `{"on": false}`, nothing else."""

    model_config = ConfigDict(extra="forbid")

    on: StrictBool


class PreferencesPatch(BaseModel):
    """What to change: a value sets, `""` or null clears, a name left out stays."""

    model_config = ConfigDict(extra="forbid")

    timezone: str | None = Field(default=None, max_length=64)
    language: str | None = Field(default=None, max_length=64)
    model: str | None = Field(default=None, max_length=200)
    instruction: str | None = Field(default=None, max_length=500)


def preferences_json(person: str, chosen: Preferences) -> dict[str, Any]:
    return {"person": person, **{name: getattr(chosen, name) for name in NAMES}}


def grant_json(grant: Grant) -> dict[str, Any]:
    return {
        "id": grant.id,
        "chat": grant.chat,
        "tool": grant.tool,
        "granted_by": grant.granted_by,
        "created_at": grant.created_at.astimezone(UTC).isoformat(),
    }


def paired_json(paired: Paired) -> dict[str, Any]:
    return {
        "person": paired.person,
        "platform": paired.platform,
        "approved_by": paired.approved_by,
        "approved_at": paired.approved_at.astimezone(UTC).isoformat(),
    }


def _person(request: web.Request) -> str:
    person = request.match_info["person_id"]
    if not PERSON_ID.fullmatch(person):
        raise refusal(
            web.HTTPUnprocessableEntity,
            "a person id is platform:id in ASCII letters, digits and _.@:+- "
            "(tg:123, slack:T1:U1, chat:tg:-100123), at most 197 characters",
        )
    return person


class PeopleRoutes:
    def __init__(self, services: Services) -> None:
        self.services = services
        engine = services.recall.memories.engine
        self.scopes = MemoryScopes(engine)
        self.digests = Digests(engine)

    async def memory_scopes(self, request: web.Request) -> web.Response:
        """Every scope holding memories, the most recently written first (`?offset=&limit=`),
        so operators find whose memories there are; `digests_kept` says whether this
        deployment writes digests at all (PARLEY_DIGEST_MODEL is not `off`)."""
        only(request, ["offset", "limit"])
        offset = query_number(request, "offset", 0, 0, 10**9)
        limit = query_number(request, "limit", SCOPES_PAGE, 1, MAX_SCOPES)
        total, found = await self.scopes.page(offset, limit)
        kept = self.services.settings.digest_model != "off"
        items = [holding_json(held) for held in found]
        page = {"total": total, "offset": offset, "limit": limit, "items": items}
        return web.json_response({**page, "digests_kept": kept})

    async def digests_state(self, request: web.Request) -> web.Response:
        """Whether the scope's days are digested."""
        person = _person(request)
        off = person in await self.digests.off([person])
        return web.json_response({"person": person, "on": not off})

    async def switch_digests(self, request: web.Request) -> web.Response:
        """Digest the scope's days again, or no more, recorded as switched by the API's caller
        (`http:token`, or `http:local` without a token); the digests kept stay either way."""
        person = _person(request)
        only(request, [])
        body = await read_body(request, DigestSwitch)
        await self.digests.switch(person, on=body.on, by=request[USER])
        return web.json_response({"person": person, "on": body.on})

    async def paired(self, request: web.Request) -> web.Response:
        """The people paired by an admin, the earliest first (PARLEY_ALLOWED_USERS and the
        admins are in the settings, not here)."""
        pairing = self.services.pairing
        found = await pairing.paired.all() if pairing is not None else []
        items = [paired_json(paired) for paired in found]
        return web.json_response({"total": len(items), "items": items})

    async def memory(self, request: web.Request) -> web.Response:
        """All of the person's memories, in the order they were kept; with `q`, those `q` is
        about, found by meaning as the agent finds them, best first (`SEARCHED` at most)."""
        person = _person(request)
        only(request, ["q"])
        words = request.query.get("q")
        if words is None:
            found = await self.services.recall.memories.all(person)
        elif not words.strip() or len(words) > MAX_TEXT:
            raise bad(f"q must be 1 to {MAX_TEXT} characters of words to look for")
        else:
            found = await self.services.recall.search(person, words, SEARCHED)
        items = [memory_json(memory) for memory in found]
        return web.json_response({"person": person, "total": len(items), "items": items})

    async def forget_all(self, request: web.Request) -> web.Response:
        person = _person(request)
        deleted = await self.services.recall.memories.forget_all(person)
        return web.json_response({"person": person, "deleted": deleted})

    async def forget_one(self, request: web.Request) -> web.Response:
        """200 with the memory deleted; 404 if the person has no memory of that number."""
        person = _person(request)
        raw = request.match_info["memory_id"]
        gone = []
        if MEMORY_ID.fullmatch(raw):
            gone = await self.services.recall.memories.forget(person, int(raw))
        if not gone:
            return error(404, "unknown memory", person=person, id=raw[:40])
        return web.json_response(memory_json(gone[0]))

    async def permissions(self, request: web.Request) -> web.Response:
        """The tools the person runs without being asked, chat by chat."""
        person = _person(request)
        items = [grant_json(grant) for grant in await self.services.grants.of_person(person)]
        return web.json_response({"person": person, "total": len(items), "items": items})

    async def revoke(self, request: web.Request) -> web.Response:
        """200 with the grant revoked; 404 if the person has no grant of that number."""
        person = _person(request)
        raw = request.match_info["grant_id"]
        gone = None
        if MEMORY_ID.fullmatch(raw):
            gone = await self.services.grants.revoke(int(raw), person=person)
        if gone is None:
            return error(404, "unknown permission", person=person, id=raw[:40])
        return web.json_response(grant_json(gone))

    async def preferences(self, request: web.Request) -> web.Response:
        person = _person(request)
        return web.json_response(
            preferences_json(person, await self.services.people.preferences(person))
        )

    async def set_preferences(self, request: web.Request) -> web.Response:
        """Checked as in chat, except that the operator may set any model served here."""
        person = _person(request)
        patch = await read_body(request, PreferencesPatch)
        changes: dict[Name, str | None] = {}
        problems = []
        for name in NAMES:
            if name not in patch.model_fields_set:
                continue
            value = getattr(patch, name) or ""
            try:
                changes[name] = kept = clean(name, value)
            except ValueError as exc:
                problems.append(f"{name}: {exc}")
                continue
            if (
                name == "model"
                and kept is not None
                and not served_model(self.services.settings, kept)
            ):
                problems.append(f"model: this deployment's API does not serve {kept}")
        if problems:
            return error(422, "invalid request", problems=problems)
        chosen = await self.services.people.set(person, changes)
        return web.json_response(preferences_json(person, chosen))


def mount(app: web.Application, services: Services) -> None:
    routes = PeopleRoutes(services)
    app.router.add_get("/api/people", routes.paired)
    app.router.add_get("/api/memory/scopes", routes.memory_scopes)
    app.router.add_get("/api/people/{person_id}/digests", routes.digests_state)
    app.router.add_put("/api/people/{person_id}/digests", routes.switch_digests)
    app.router.add_get("/api/people/{person_id}/memory", routes.memory)
    app.router.add_delete("/api/people/{person_id}/memory", routes.forget_all)
    app.router.add_delete("/api/people/{person_id}/memory/{memory_id}", routes.forget_one)
    app.router.add_get("/api/people/{person_id}/preferences", routes.preferences)
    app.router.add_patch("/api/people/{person_id}/preferences", routes.set_preferences)
    app.router.add_get("/api/people/{person_id}/permissions", routes.permissions)
    app.router.add_delete("/api/people/{person_id}/permissions/{grant_id}", routes.revoke)
