"""The clients of the model APIs share one TLS context, and it checks certificates.

Each context made reads a CA bundle (about 20 ms of CPU), and a worker builds its provider
twice as it starts; see `bot.tls`.
"""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from bot import tls
from bot.llm.anthropic import AnthropicProvider
from bot.llm.openai import OpenAIProvider


async def test_providers_share_one_tls_context_that_checks_certificates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tls.shared_context.cache_clear()
    made: list[ssl.SSLContext] = []
    new = ssl.SSLContext.__new__

    def counting(cls: type[ssl.SSLContext], *args: Any, **kwargs: Any) -> ssl.SSLContext:
        context = new(cls, *args, **kwargs)
        made.append(context)
        return context

    monkeypatch.setattr(ssl.SSLContext, "__new__", counting)
    providers: list[AnthropicProvider | OpenAIProvider] = [
        AnthropicProvider(api_key="k", base_url=None, timeout=5),
        AnthropicProvider(api_key="k", base_url=None, timeout=5),
        OpenAIProvider(api_key="k", base_url=None, timeout=5),
    ]
    try:
        assert made == [tls.shared_context()]
    finally:
        for provider in providers:
            await provider.aclose()
    context = tls.shared_context()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
