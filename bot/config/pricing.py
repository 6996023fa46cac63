"""Estimated cost of a session's tokens, from list prices per million tokens.

Prices change and differ by contract, so this is an estimate for people to read ("about
$0.04"), never a bill. Cache reads and writes are priced apart because prompt caching is
what makes long chats cheap. Operators add or correct prices with PARLEY_PRICES.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from bot.vocabulary.usage import Usage


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float = Field(ge=0)
    cache_write: float = Field(ge=0)


def _p(input: float, output: float, cache_read: float, cache_write: float) -> Price:
    return Price(input=input, output=output, cache_read=cache_read, cache_write=cache_write)


# By model-name prefix; the longest matching prefix wins.
PRICES: dict[str, Price] = {
    "claude-opus-4-1": _p(15.0, 75.0, 1.5, 18.75),
    "claude-opus-4": _p(5.0, 25.0, 0.5, 6.25),
    "claude-sonnet": _p(3.0, 15.0, 0.3, 3.75),
    "claude-haiku-4": _p(1.0, 5.0, 0.1, 1.25),
    "claude-3-5-haiku": _p(0.8, 4.0, 0.08, 1.0),
    "gpt-5-mini": _p(0.25, 2.0, 0.025, 0.25),
    "gpt-5": _p(1.25, 10.0, 0.125, 1.25),
    "gpt-4.1-mini": _p(0.4, 1.6, 0.1, 0.4),
    "gpt-4.1": _p(2.0, 8.0, 0.5, 2.0),
    "gpt-4o-mini": _p(0.15, 0.6, 0.075, 0.15),
    "gpt-4o": _p(2.5, 10.0, 1.25, 2.5),
}


class PriceTable:
    """The built-in prices with the operator's own laid over them."""

    def __init__(self, extra: Mapping[str, Price] | None = None) -> None:
        self.prices = {**PRICES, **{k.lower(): v for k, v in (extra or {}).items()}}

    def price_of(self, model: str) -> Price | None:
        name = model.rsplit(":", 1)[-1].rsplit("/", 1)[-1].lower()
        matches = [prefix for prefix in self.prices if name.startswith(prefix)]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, usage: Usage) -> float | None:
        """Dollars for `usage` on `model`, or None when the model's price is unknown."""
        return _cost(self.price_of(model), usage)


def _cost(price: Price | None, usage: Usage) -> float | None:
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    ) / 1_000_000
