"""Estimated cost from list prices: longest prefix wins, cache tokens priced apart."""

from __future__ import annotations

import pytest

from bot.llm.events import Usage
from bot.pricing import estimate_cost, price_of


def test_longest_prefix_wins() -> None:
    mini, full = price_of("gpt-4o-mini-2024-07-18"), price_of("gpt-4o")
    assert mini is not None and full is not None and mini.input < full.input


def test_cache_reads_cost_less_than_fresh_input() -> None:
    fresh = estimate_cost("claude-sonnet-4-5", Usage(input_tokens=1_000_000))
    cached = estimate_cost("claude-sonnet-4-5", Usage(cache_read_tokens=1_000_000))
    assert fresh == pytest.approx(3.0)
    assert cached == pytest.approx(0.3)


def test_provider_prefix_and_unknown_models() -> None:
    assert estimate_cost("openai:gpt-4o", Usage(output_tokens=1_000_000)) == pytest.approx(10.0)
    assert estimate_cost("openai:qwen2.5", Usage(output_tokens=10)) is None
