"""The fake embeddings endpoint, driven by the real `openai` SDK: unit vectors in both of
OpenAI's encodings (the SDK's default base64 decodes to the same floats as "float"), cut to
`dimensions`, scripted or derived from the words so that shared words mean near; OpenAI's
400 for what the real API refuses, its 401 for a wrong key, and a scripted failure."""

from __future__ import annotations

import base64
import math
import re
import struct
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import openai
import pytest

from tests.fakes.llm import OPENAI_KEY, FakeLLM

MODEL = "text-embedding-3-small"


@pytest.fixture
async def client(fake_llm: FakeLLM) -> AsyncIterator[openai.AsyncOpenAI]:
    sdk = openai.AsyncOpenAI(api_key=OPENAI_KEY, base_url=fake_llm.openai_base_url, max_retries=0)
    yield sdk
    await sdk.close()


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_one_input_and_a_list(fake_llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    one = await client.embeddings.create(model=MODEL, input="hello world")
    assert (one.object, one.model, len(one.data)) == ("list", MODEL, 1)
    [only] = one.data
    assert (only.object, only.index, len(only.embedding)) == ("embedding", 0, 384)
    assert math.isclose(dot(only.embedding, only.embedding), 1.0, rel_tol=1e-5)
    assert one.usage.prompt_tokens == one.usage.total_tokens == 3
    texts = ["hello world", "a cat", "something else entirely"]
    many = await client.embeddings.create(model=MODEL, input=texts, user="u1")
    assert [d.index for d in many.data] == [0, 1, 2]
    assert many.data[0].embedding == only.embedding  # the same text, the same vector
    assert many.usage.total_tokens == 3 + 2 + 6
    first, second = fake_llm.embeddings.requests
    assert (first.model, first.inputs, first.fields) == (
        MODEL,
        ("hello world",),
        {"encoding_format": "base64"},  # what the SDK sends when its caller says nothing
    )
    assert second.inputs == tuple(texts)
    assert second.fields == {"user": "u1", "encoding_format": "base64"}
    assert fake_llm.embeddings.rejected == []


async def test_base64_and_float_are_the_same_floats(client: openai.AsyncOpenAI) -> None:
    default = await client.embeddings.create(model=MODEL, input="same text")
    floats = await client.embeddings.create(model=MODEL, input="same text", encoding_format="float")
    raw = await client.embeddings.create(model=MODEL, input="same text", encoding_format="base64")
    assert default.data[0].embedding == floats.data[0].embedding
    encoded: Any = raw.data[0].embedding  # the SDK leaves an asked-for base64 string as is
    assert isinstance(encoded, str)
    decoded = list(struct.unpack("<384f", base64.b64decode(encoded)))
    assert decoded == floats.data[0].embedding


async def test_dimensions_cut_the_vector_and_keep_it_unit(
    fake_llm: FakeLLM, client: openai.AsyncOpenAI
) -> None:
    full = await client.embeddings.create(model=MODEL, input="cut me", encoding_format="float")
    cut = await client.embeddings.create(
        model=MODEL, input="cut me", dimensions=64, encoding_format="float"
    )
    vector = cut.data[0].embedding
    assert len(vector) == 64
    assert math.isclose(dot(vector, vector), 1.0, rel_tol=1e-5)
    length = math.sqrt(dot(full.data[0].embedding[:64], full.data[0].embedding[:64]))
    expected = [x / length for x in full.data[0].embedding[:64]]
    assert vector == pytest.approx(expected, rel=1e-5)
    assert fake_llm.embeddings.requests[1].fields["dimensions"] == 64


async def test_a_scripted_vector_comes_back(fake_llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    fake_llm.embeddings.dimension = 4
    fake_llm.embeddings.script("the answer", [0.5, 0.5, 0.5, -0.5])
    got = await client.embeddings.create(model=MODEL, input=["other", "the answer"])
    assert got.data[1].embedding == [0.5, 0.5, 0.5, -0.5]
    assert len(got.data[0].embedding) == 4
    with pytest.raises(ValueError, match="4 finite floats"):
        fake_llm.embeddings.script("short", [1.0])


async def test_texts_sharing_words_are_nearer(client: openai.AsyncOpenAI) -> None:
    texts = [
        "the cat sat on the mat",
        "a cat sat on a warm mat",
        "quarterly revenue grew nine percent",
    ]
    got = await client.embeddings.create(model=MODEL, input=texts)
    cat, other_cat, revenue = (d.embedding for d in got.data)
    assert dot(cat, other_cat) > 0.5
    assert abs(dot(cat, revenue)) < 0.3
    assert dot(cat, other_cat) > dot(cat, revenue)
    again = await client.embeddings.create(model=MODEL, input="The CAT sat on the mat!")
    assert dot(cat, again.data[0].embedding) == pytest.approx(1.0)  # case and marks: no matter


@pytest.mark.parametrize(
    ("asked", "said"),
    [({"input": "x", "extra_body": {"temperature": 1}}, "Unrecognized request argument"),
     ({"input": ""}, "'$.input' is invalid"),
     ({"input": []}, "'$.input' is invalid"),
     ({"input": ["fine", ""]}, "'$.input' is invalid"),
     ({"input": ["x"] * 2049}, "at most 2048 items"),
     ({"input": [[1, 2, 3]]}, "token arrays are not supported"),
     ({"input": "x", "dimensions": 385}, "'dimensions' = 385"),
     ({"input": "x", "dimensions": 0}, "'dimensions' = 0"),
     ({"input": "x" * 40_000}, "maximum context length is 8192 tokens")],
)  # fmt: skip
async def test_what_openai_refuses_is_a_400(
    fake_llm: FakeLLM, client: openai.AsyncOpenAI, asked: dict[str, Any], said: str
) -> None:
    with pytest.raises(openai.BadRequestError, match=re.escape(said)) as caught:
        await client.embeddings.create(model=MODEL, **asked)
    assert caught.value.status_code == 400 and caught.value.type == "invalid_request_error"
    assert fake_llm.embeddings.requests == []
    [why] = fake_llm.embeddings.rejected
    assert said in why


async def test_a_body_that_is_no_request(fake_llm: FakeLLM) -> None:
    url = fake_llm.openai_base_url + "/embeddings"
    auth = {"Authorization": f"Bearer {OPENAI_KEY}"}
    async with httpx.AsyncClient() as http:
        not_json = await http.post(url, content=b"{", headers=auth)
        no_model = await http.post(url, json={"input": "x"}, headers=auth)
        no_input = await http.post(url, json={"model": MODEL}, headers=auth)
        bad_format = await http.post(
            url, json={"model": MODEL, "input": "x", "encoding_format": "int8"}, headers=auth
        )
    assert [r.status_code for r in (not_json, no_model, no_input, bad_format)] == [400] * 4
    assert no_model.json()["error"]["message"] == "you must provide a model parameter"
    assert "'input' is a required property" in no_input.text
    assert "'encoding_format'" in bad_format.json()["error"]["message"]
    assert fake_llm.embeddings.requests == []


async def test_a_wrong_key_is_a_401(fake_llm: FakeLLM) -> None:
    async with openai.AsyncOpenAI(
        api_key="wrong", base_url=fake_llm.openai_base_url, max_retries=0
    ) as sdk:
        with pytest.raises(openai.AuthenticationError) as caught:
            await sdk.embeddings.create(model=MODEL, input="x")
    assert caught.value.code == "invalid_api_key"
    assert fake_llm.embeddings.requests == []


async def test_a_scripted_failure_then_an_answer(
    fake_llm: FakeLLM, client: openai.AsyncOpenAI
) -> None:
    fake_llm.embeddings.failing = [503]
    with pytest.raises(openai.InternalServerError) as caught:
        await client.embeddings.create(model=MODEL, input="x")
    assert caught.value.status_code == 503
    got = await client.embeddings.create(model=MODEL, input="x")
    assert len(got.data) == 1 and len(fake_llm.embeddings.requests) == 2


async def test_a_delay_outlasts_a_timeout(fake_llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    fake_llm.embeddings.delay = 5.0
    with pytest.raises(openai.APITimeoutError):
        await client.embeddings.create(model=MODEL, input="x", timeout=0.2)
