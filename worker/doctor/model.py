"""The model's API, asked once, on request (`parley doctor --model`): one call of the
default model (PARLEY_MODEL) for a few tokens, so a refused key, a model the API does not
know or a base URL that leads nowhere is found before the first person's message is.

Opt-in because it is the one check that costs money, however little. The call goes through
the provider a worker builds (`bot.llm.registry.build_provider`), without Parley's retries:
the doctor reports the first answer. A rate limit or an overload still says the key works.
Where the API's setting holds several keys, each is asked, and named by its place (`model
key 2`): a worker would move past a refused key in silence, so only here is it seen.
"""

from __future__ import annotations

from bot.config.settings import ConfigError, Settings
from bot.llm.base import ModelRequest, Provider, SystemPart
from bot.llm.errors import ProviderError
from bot.llm.events import Finished
from bot.llm.keyring import KeyRing
from bot.llm.registry import ModelRef, build_provider, provider_class
from bot.llm.served import Served
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.usage import Usage
from worker.doctor.report import Finding, failed, ok, skipped, warning

TOKENS = 5  # the most the answer may take
STUCK = "check that the model's API answers from here (its base URL, a proxy, a firewall)"
BUSY = frozenset({429, 503, 529})


def load(settings: Settings) -> None:
    """The default model's SDK (anthropic or openai): a second or more to import."""
    served = Served.of(settings)
    provider_class(served.ref(served.default).provider)


def not_asked() -> Finding:
    return skipped("model", "not asked: `parley doctor --model` makes one call of a few tokens")


async def check_model(settings: Settings) -> list[Finding]:
    try:
        served = Served.of(settings)
        ref = served.ref(served.default)
        provider = build_provider(settings, ref)
    except ConfigError as exc:  # the configuration's line says it, with its fix
        return [skipped("model", f"cannot be called: {exc}")]
    request = ModelRequest(
        model=ref.model,
        system=[SystemPart("This is a connection check. Answer with one word.")],
        messages=[Message(role="user", content=[TextBlock(text="ping")])],
        max_tokens=TOKENS,
    )
    try:
        if not isinstance(provider, KeyRing):
            return [await _asked(provider, request, ref, "model", "")]
        keys = enumerate(provider.providers, 1)
        return [
            await _asked(one, request, ref, f"model key {n}", f" (its key {n})") for n, one in keys
        ]
    finally:
        await provider.aclose()


async def _asked(
    provider: Provider, request: ModelRequest, ref: ModelRef, check: str, which: str
) -> Finding:
    """One call's finding, under `check`; `which` names the key in a fix."""
    usage = Usage()
    try:
        async for event in provider.stream(request):
            if isinstance(event, Usage):
                usage = event  # the call's usage so far: the latest counts
            elif isinstance(event, Finished):
                break
    except ProviderError as exc:
        return _refused(exc, ref, check, which)
    spent = f"{usage.input_tokens} tokens in, {usage.output_tokens} out"
    return ok(check, f"{ref.model} ({ref.provider}) answered: {spent}")


def _refused(exc: ProviderError, ref: ModelRef, check: str, which: str) -> Finding:
    """What a failed call says about the deployment, and the variable to look at."""
    key = "ANTHROPIC_API_KEY" if ref.provider == "anthropic" else "OPENAI_API_KEY"
    key += which
    base = "ANTHROPIC_BASE_URL" if ref.provider == "anthropic" else "OPENAI_BASE_URL"
    said = f"{ref.model} ({ref.provider}): {exc}"
    if exc.status == 401:
        return failed(check, said, f"check {key}: the API refused it")
    if exc.status == 403:
        return failed(check, said, f"give {key} access to {ref.model}, or change PARLEY_MODEL")
    if exc.status == 404:
        return failed(check, said, f"check PARLEY_MODEL (and {base}): the API knows no such model")
    if exc.status in BUSY:
        return warning(check, said, "the key was accepted; the API is busy: try again later")
    if exc.status is None:
        return failed(check, said, f"check {base} and the network from here to the API")
    return failed(check, said, f"read the API's answer above; check PARLEY_MODEL and {key}")
