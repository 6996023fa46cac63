"""Several keys for one model API, through the real SDKs against the fake API: a rate-limited
key rests for what the API said and the next key answers the same request at once; a refused
key is put aside; with every key resting the call fails as the API said, for the retry policy
and the fallback models; a failure once the answer streams is not moved to another key; each
call is counted by the key's place, never the key; each key is a secret of its own to the
logs; and the services that borrow OPENAI_API_KEY get its first key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.llm import events as le
from bot.llm.base import ModelRequest, Provider, SystemPart
from bot.llm.errors import ProviderError
from bot.llm.keyring import REST_S, KeyRing
from bot.llm.registry import build_provider, resolve_model
from bot.memory.models import embedder_of
from bot.telemetry.logs import secrets_of
from bot.vocabulary.messages import Message, TextBlock
from tests.fakes.llm import ANTHROPIC_KEY, OPENAI_KEY, FakeLLM, Reply

LIMITED, REVOKED = "sk-ant-limited-0001", "sk-ant-revoked-0002"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def request(model: str = "claude-test") -> ModelRequest:
    said = [Message(role="user", content=[TextBlock(text="hello")])]
    return ModelRequest(model=model, system=[SystemPart("Be brief.")], messages=said)


async def text_of(provider: Provider, model: str = "claude-test") -> str:
    events = [event async for event in provider.stream(request(model))]
    return "".join(e.text for e in events if isinstance(e, le.TextDelta))


def ring(fake: FakeLLM, keys: str, tmp_path: Path, counted: list[tuple[str, ...]]) -> KeyRing:
    settings = Settings(
        _env_file=None, anthropic_api_key=keys, anthropic_base_url=fake.anthropic_base_url,
        files_dir=tmp_path,
    )  # fmt: skip
    built = build_provider(settings, resolve_model("claude-test"), lambda *c: counted.append(c))
    assert isinstance(built, KeyRing)
    built._clock = Clock()
    return built


async def test_a_rate_limited_key_rests_and_the_next_answers_at_once(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    counted: list[tuple[str, ...]] = []
    keys = ring(fake_llm, f"{LIMITED}, {ANTHROPIC_KEY}", tmp_path, counted)
    fake_llm.limited[LIMITED] = 20
    fake_llm.enqueue(Reply(text="One."), Reply(text="Two."), Reply(text="Three."))
    assert await text_of(keys) == "One."
    assert fake_llm.keys_used == [LIMITED, ANTHROPIC_KEY]
    assert await text_of(keys) == "Two."  # the first key rests: not asked again
    assert fake_llm.keys_used[2:] == [ANTHROPIC_KEY]
    assert counted == [
        ("anthropic", "1", "rate_limited"), ("anthropic", "2", "ok"), ("anthropic", "2", "ok")
    ]  # fmt: skip
    clock = keys._clock
    assert isinstance(clock, Clock)
    clock.now += 20  # its rest is over: first again
    del fake_llm.limited[LIMITED]
    fake_llm.keys["anthropic"].add(LIMITED)
    assert await text_of(keys) == "Three."
    assert fake_llm.keys_used[3:] == [LIMITED]
    await keys.aclose()


async def test_a_refused_key_is_put_aside_and_every_key_resting_fails_as_the_api_said(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    counted: list[tuple[str, ...]] = []
    keys = ring(fake_llm, f"{REVOKED},{LIMITED}", tmp_path, counted)
    fake_llm.limited[LIMITED] = 7
    with pytest.raises(ProviderError) as failed:
        await text_of(keys)
    assert (failed.value.status, failed.value.retry_after) == (429, 7)
    assert fake_llm.keys_used == [REVOKED, LIMITED]
    with pytest.raises(ProviderError) as again:  # both rest: only the one back soonest
        await text_of(keys)
    assert again.value.status == 429 and fake_llm.keys_used[2:] == [LIMITED]
    assert [c[1:] for c in counted] == [("1", "refused"), ("2", "rate_limited")] * 1 + [
        ("2", "rate_limited")
    ]
    assert keys._rests[0] - keys._rests[1] > REST_S  # the refused key rests far longer
    await keys.aclose()


class Streams:
    """A provider that streams a little, then fails as a rate limit would."""

    name = "anthropic"

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[le.ProviderEvent]:
        self.calls += 1
        yield le.TextDelta("Half")
        raise ProviderError("cut", status=429, retryable=True)

    async def aclose(self) -> None:
        return None


async def test_a_failure_once_the_answer_streams_is_not_moved_to_another_key() -> None:
    first, second = Streams(), Streams()
    counted: list[tuple[str, ...]] = []
    keys = KeyRing([first, second], lambda *c: counted.append(c))
    with pytest.raises(ProviderError):
        await text_of(keys)
    assert (first.calls, second.calls) == (1, 0)
    assert counted == [("anthropic", "1", "failed")]
    assert keys._rests == [0.0, 0.0]  # not the key's fault: nothing rests


def test_one_key_is_no_ring_and_each_key_is_a_secret_of_its_own(tmp_path: Path) -> None:
    one = Settings(_env_file=None, anthropic_api_key=ANTHROPIC_KEY, files_dir=tmp_path)
    assert not isinstance(build_provider(one, resolve_model("claude-x")), KeyRing)
    several = Settings(
        _env_file=None, anthropic_api_key=f"{LIMITED}, {REVOKED}", files_dir=tmp_path
    )
    secrets = secrets_of(several, {})
    assert LIMITED in secrets and REVOKED in secrets


def test_services_that_borrow_openais_key_get_its_first() -> None:
    settings = Settings(
        _env_file=None, openai_api_key=f"{OPENAI_KEY},sk-second-key-0003",
        transcribe_model="whisper-1", speech_model="tts-1",
    )  # fmt: skip
    for key in (settings.transcription_key, settings.speech_key, settings.image_key):
        assert key is not None and key.get_secret_value() == OPENAI_KEY
    embedder = embedder_of(
        settings.model_copy(update={"embeddings_model": "text-embedding-3-small"})
    )
    assert embedder is not None
    assert embedder._client.api_key == OPENAI_KEY  # type: ignore[attr-defined]
