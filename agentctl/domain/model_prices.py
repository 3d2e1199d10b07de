"""What a model call costs: USD per million input and output tokens, by model name.

The table is the vendors' list prices (December 2026) for the models the agent CLIs use by
default; a model is priced by its longest matching prefix, and an unknown one at `DEFAULT`
(so a budget never counts an unpriced model as free). `[agents.claude|codex] prices` entries
(`"MODEL=IN/OUT"`) come first, for a negotiated price or a self-hosted model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Price:
    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_million
                + output_tokens * self.output_per_million) / 1_000_000


PRICES: dict[str, Price] = {
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-opus-4": Price(15.0, 75.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-3-7-sonnet": Price(3.0, 15.0),
    "claude-haiku-4": Price(1.0, 5.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "gpt-5-mini": Price(0.25, 2.0),
    "gpt-5-nano": Price(0.05, 0.4),
    "gpt-5": Price(1.25, 10.0),
    "gpt-4.1-mini": Price(0.4, 1.6),
    "gpt-4.1": Price(2.0, 8.0),
    "gpt-4o-mini": Price(0.15, 0.6),
    "gpt-4o": Price(2.5, 10.0),
    "o4-mini": Price(1.1, 4.4),
    "o3": Price(2.0, 8.0),
    "gemini-2.5-pro": Price(1.25, 10.0),
    "gemini-2.5-flash-lite": Price(0.1, 0.4),
    "gemini-2.5-flash": Price(0.3, 2.5),
}
DEFAULT = Price(3.0, 15.0)


class PriceError(ValueError):
    pass


def parse_prices(entries: Sequence[str]) -> dict[str, Price]:
    """`MODEL=IN/OUT` entries (USD per million tokens) as a table."""
    table: dict[str, Price] = {}
    for entry in entries:
        model, _, figures = entry.partition("=")
        given, _, taken = figures.partition("/")
        try:
            price = Price(float(given), float(taken))
        except ValueError:
            raise PriceError(f"price {entry!r}: expected MODEL=IN/OUT in USD per million "
                             f"tokens, e.g. claude-sonnet-4=3/15") from None
        if not model.strip() or price.input_per_million < 0 or price.output_per_million < 0:
            raise PriceError(f"price {entry!r}: expected MODEL=IN/OUT in USD per million "
                             f"tokens, e.g. claude-sonnet-4=3/15")
        table[model.strip()] = price
    return table


def price_of(model: str, overrides: dict[str, Price] | None = None) -> Price:
    """The price of `model`: the configured entries first, then the list prices, by longest
    prefix; `DEFAULT` for a model nobody priced."""
    for table in (overrides or {}, PRICES):
        found = [name for name in table if model.startswith(name)]
        if found:
            return table[max(found, key=len)]
    return DEFAULT
