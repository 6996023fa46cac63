"""Estimated cost from list prices: longest prefix wins, cache tokens priced apart, and the
operator's prices (PARLEY_PRICES) over the built-in ones."""

from __future__ import annotations

import pytest

from bot.config.pricing import Price, PriceTable
from bot.vocabulary.usage import Usage

TABLE = PriceTable()


def test_longest_prefix_wins() -> None:
    mini, full = TABLE.price_of("gpt-4o-mini-2024-07-18"), TABLE.price_of("gpt-4o")
    assert mini is not None and full is not None and mini.input < full.input


def test_cache_reads_cost_less_than_fresh_input() -> None:
    fresh = TABLE.cost("claude-sonnet-4-5", Usage(input_tokens=1_000_000))
    cached = TABLE.cost("claude-sonnet-4-5", Usage(cache_read_tokens=1_000_000))
    assert fresh == pytest.approx(3.0)
    assert cached == pytest.approx(0.3)


def test_provider_prefix_and_unknown_models() -> None:
    assert TABLE.cost("openai:gpt-4o", Usage(output_tokens=1_000_000)) == pytest.approx(10.0)
    assert TABLE.cost("openai:qwen2.5", Usage(output_tokens=10)) is None


def test_the_operators_prices_add_to_and_override_the_table() -> None:
    table = PriceTable(
        {
            "Qwen2.5": Price(input=0.5, output=1, cache_read=0, cache_write=0),
            "gpt-4o": Price(input=1, output=2, cache_read=0.5, cache_write=1),
        }
    )
    assert table.cost("openai:qwen2.5-72b", Usage(output_tokens=1_000_000)) == pytest.approx(1.0)
    assert table.cost("gpt-4o", Usage(output_tokens=1_000_000)) == pytest.approx(2.0)
    assert table.cost("gpt-4o-mini", Usage(output_tokens=1_000_000)) == pytest.approx(0.6)
