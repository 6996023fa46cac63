"""What the agent keeps for people, through the HTTP API on the real web app and database:
operators list a person's (or a chat's) memories and delete one or all of them, and list and
revoke the tools a person always allows."""

from __future__ import annotations

import pytest

from tests.integration.telegram.test_memory import OTHERS, REX
from tests.support.chat_stores import grant_store, kept, memory_store, recall_store
from tests.support.stack import Stack

TOKEN = "s3cret-token"


@pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
async def test_operators_list_and_delete_a_persons_memories(stack: Stack) -> None:
    async with memory_store(stack) as memories:
        tea, _ = await memories.add("tg:1", "Ann likes green tea")
        eve, _ = await memories.add("tg:1", "Ann's sister is Eve")
        await memories.add("chat:tg:-100", "The team deploys on Thursdays")
        await memories.add("tg:2", "Bob likes coffee")
        async with stack.client() as client:
            assert (await client.get("/api/people/tg:1/memory")).status_code == 401
            assert (await client.delete("/api/people/tg:1/memory")).status_code == 401
            assert (await client.delete(f"/api/people/tg:1/memory/{tea.id}")).status_code == 401
            client.headers["Authorization"] = f"Bearer {TOKEN}"
            listed = (await client.get("/api/people/tg:1/memory")).json()
            chat = (await client.get("/api/people/chat:tg:-100/memory")).json()
            one = await client.delete(f"/api/people/tg:1/memory/{tea.id}")
            again = await client.delete(f"/api/people/tg:1/memory/{tea.id}")
            bobs = await client.delete(f"/api/people/tg:2/memory/{eve.id}")  # Ann's memory
            everything = await client.delete("/api/people/tg:1/memory")
            empty = (await client.get("/api/people/tg:1/memory")).json()
        assert [m.text for m in await memories.all("tg:2")] == ["Bob likes coffee"]
    assert listed["person"] == "tg:1" and listed["total"] == 2
    assert [(m["id"], m["text"]) for m in listed["items"]] == [
        (tea.id, "Ann likes green tea"),
        (eve.id, "Ann's sister is Eve"),
    ]
    assert listed["items"][0]["created_at"].endswith("+00:00")
    assert [m["text"] for m in chat["items"]] == ["The team deploys on Thursdays"]
    assert one.status_code == 200 and one.json()["text"] == "Ann likes green tea"
    assert again.status_code == 404 and again.json()["error"] == "unknown memory"
    assert bobs.status_code == 404
    assert everything.json() == {"person": "tg:1", "deleted": 1}
    assert empty == {"person": "tg:1", "total": 0, "items": []}


@pytest.mark.parametrize(
    "person",
    ["123", "tg", "tg:", ":1", "TG:1", "tg:1%20OR%201", "tg:%C3%A9", "tg:" + "9" * 181, "t%00g:1"],
)
async def test_a_malformed_person_id_is_refused_in_one_line(stack: Stack, person: str) -> None:
    async with stack.client() as client:
        answers = [
            await client.get(f"/api/people/{person}/memory"),
            await client.delete(f"/api/people/{person}/memory"),
            await client.delete(f"/api/people/{person}/memory/1"),
        ]
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"].startswith("a person id is platform:id in ASCII")


@pytest.mark.parametrize("memory_id", ["0", "-1", "1.0", "x", "٣", "9" * 19])
async def test_a_malformed_memory_id_is_unknown(stack: Stack, memory_id: str) -> None:
    async with stack.client() as client:
        answer = await client.delete(f"/api/people/tg:1/memory/{memory_id}")
    assert answer.status_code == 404, answer.text
    assert answer.json() == {"error": "unknown memory", "person": "tg:1", "id": memory_id}


@pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
async def test_operators_list_and_revoke_a_persons_permissions(stack: Stack) -> None:
    async with grant_store(stack) as grants:
        await grants.add("tg:1", "tg:-100", ["run_python"], "tg:9")
        await grants.add("tg:1", "tg:1", ["write_file"], "tg:1")
        await grants.add("tg:2", "tg:-100", ["run_python"], "tg:2")
        (python, _) = await grants.in_chat("tg:-100")
        async with stack.client() as client:
            assert (await client.get("/api/people/tg:1/permissions")).status_code == 401
            client.headers["Authorization"] = f"Bearer {TOKEN}"
            listed = (await client.get("/api/people/tg:1/permissions")).json()
            bobs = await client.delete(f"/api/people/tg:2/permissions/{python.id}")  # Ann's
            revoked = await client.delete(f"/api/people/tg:1/permissions/{python.id}")
            again = await client.delete(f"/api/people/tg:1/permissions/{python.id}")
            bad = await client.delete("/api/people/tg:1/permissions/٣")
        assert await grants.tools_of("tg:1", "tg:-100") == []
        assert await grants.tools_of("tg:2", "tg:-100") == ["run_python"]
    assert listed["total"] == 2
    assert [(g["chat"], g["tool"], g["granted_by"]) for g in listed["items"]] == [
        ("tg:-100", "run_python", "tg:9"),
        ("tg:1", "write_file", "tg:1"),
    ]
    assert bobs.status_code == 404
    assert revoked.status_code == 200 and revoked.json()["tool"] == "run_python"
    assert again.status_code == 404 and again.json()["error"] == "unknown permission"
    assert bad.status_code == 404


@pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
async def test_operators_read_and_set_a_persons_preferences(stack: Stack) -> None:
    async with stack.client() as client:
        assert (await client.get("/api/people/tg:1/preferences")).status_code == 401
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        empty = (await client.get("/api/people/tg:1/preferences")).json()
        body = {"language": "Portuguese", "timezone": "Asia/Tokyo", "model": "claude-other"}
        changed = await client.patch("/api/people/tg:1/preferences", json=body)
        cleared = await client.patch("/api/people/tg:1/preferences", json={"language": ""})
        bad = await client.patch(
            "/api/people/tg:1/preferences",
            json={"timezone": "Europe", "language": "English2", "model": "gpt-4o"},
        )
        unknown = await client.patch("/api/people/tg:1/preferences", json={"colour": "blue"})
        kept = (await client.get("/api/people/tg:1/preferences")).json()
    assert empty == {
        "person": "tg:1", "timezone": None, "language": None, "model": None, "instruction": None
    }  # fmt: skip
    assert changed.status_code == 200 and changed.json()["language"] == "Portuguese"
    assert cleared.json()["language"] is None and cleared.json()["timezone"] == "Asia/Tokyo"
    assert bad.status_code == 422
    problems = bad.json()["problems"]
    assert [p.split(":")[0] for p in problems] == ["timezone", "language", "model"]
    assert unknown.status_code == 422
    assert kept["model"] == "claude-other" and kept["timezone"] == "Asia/Tokyo"


async def test_operators_search_a_persons_memories_by_meaning(stack: Stack) -> None:
    async with recall_store(stack) as recall:
        await kept(recall, "tg:1", [REX, *OTHERS[:8]])
        await kept(recall, "tg:2", ["Bob's cat is called Tom"])
        async with stack.client() as client:
            found = (await client.get("/api/people/tg:1/memory", params={"q": "pet"})).json()
            his = (await client.get("/api/people/tg:2/memory", params={"q": "pet"})).json()
            refused = [
                await client.get("/api/people/tg:1/memory", params=params)
                for params in ({"q": " "}, {"q": "x" * 501}, {"q": "pet", "limit": "3"})
            ]
    assert found["person"] == "tg:1" and found["items"][0]["text"] == REX
    assert [item["text"] for item in his["items"]] == ["Bob's cat is called Tom"]
    assert [answer.status_code for answer in refused] == [400, 400, 400]
    assert "unknown query parameter 'limit'" in refused[2].text
