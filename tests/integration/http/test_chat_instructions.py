"""A chat's standing instruction through the HTTP API, on the real web app and database:
behind the token, set, read, cleared by an empty one or DELETE, the body read strictly and
the key checked, as `/instructions` keeps it."""

from __future__ import annotations

import pytest

from tests.support.stack import Stack

TOKEN = "s3cret-token"
PATH = "/api/chats/tg:-100123/instructions"


@pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
async def test_an_instruction_round_trip(stack: Stack) -> None:
    async with stack.client() as client:
        assert (await client.get(PATH)).status_code == 401
        assert (await client.put(PATH, json={"instruction": "x"})).status_code == 401
        assert (await client.delete(PATH)).status_code == 401
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        assert (await client.get(PATH)).json() == {"chat": "tg:-100123", "instruction": None}
        put = await client.put(PATH, json={"instruction": "  Answer like a pirate.  "})
        assert put.json() == {"chat": "tg:-100123", "instruction": "Answer like a pirate."}
        assert (await client.get(PATH)).json()["instruction"] == "Answer like a pirate."
        topic = (await client.get("/api/chats/tg:-100123:7/instructions")).json()
        assert topic == {"chat": "tg:-100123:7", "instruction": None}  # its own: none
        assert (await client.put(PATH, json={"instruction": ""})).json()["instruction"] is None
        assert (await client.get(PATH)).json()["instruction"] is None
        await client.put(PATH, json={"instruction": "Be brief."})
        assert (await client.delete(PATH)).json() == {"chat": "tg:-100123", "instruction": None}
        assert (await client.get(PATH)).json()["instruction"] is None


async def test_a_bad_body_or_key_is_refused_and_changes_nothing(stack: Stack) -> None:
    async with stack.client() as client:
        await client.put(PATH, json={"instruction": "Be brief."})
        bodies = [
            {"instruction": 5},
            {"instruction": None},
            {"instruction": ["Be brief"]},
            {"instruction": "ok", "extra": 1},
            {},
            {"instruction": "x" * 1001},
            {"instruction": "bell\x07"},
        ]
        answers = [await client.put(PATH, json=body) for body in bodies]
        not_json = await client.put(
            PATH, content=b"{", headers={"Content-Type": "application/json"}
        )
        bad_keys = [
            await client.get("/api/chats/tg/instructions"),
            await client.put("/api/chats/TG:1/instructions", json={"instruction": "x"}),
            await client.delete("/api/chats/tg:%C3%A9/instructions"),
        ]
        kept = (await client.get(PATH)).json()["instruction"]
    assert [answer.status_code for answer in answers] == [422] * len(bodies)
    assert answers[5].json()["problems"] == [
        "instruction: An instruction is at most 1000 characters; this one has 1001."
    ]
    assert not_json.status_code == 400
    assert [answer.status_code for answer in bad_keys] == [422, 422, 422]
    assert bad_keys[0].json()["error"].startswith("a chat key is platform:id")
    assert kept == "Be brief."
