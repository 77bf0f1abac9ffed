"""Token and cost accounting per pipeline stage, from an explicit price table."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from providers.errors import ConfigurationError
from providers.llm import Completion, Usage

__all__ = ["BATCH_DISCOUNT", "DEFAULT_PRICES", "Price", "UsageMeter"]

#: Share of the normal price the Anthropic Message Batches API charges.
BATCH_DISCOUNT = 0.5


@dataclass(frozen=True)
class Price:
    """USD per million tokens: input, output, prompt-cache read and prompt-cache write."""

    input: float
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0

    def __post_init__(self) -> None:
        for name in ("input", "output", "cache_read", "cache_write"):
            if getattr(self, name) < 0:
                raise ConfigurationError(f"Price.{name} must be >= 0, got {getattr(self, name)}")

    def cost(self, usage: Usage, *, batch: bool = False) -> float:
        """USD for ``usage``; half price for the Message Batches API."""
        dollars = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000
        return dollars * BATCH_DISCOUNT if batch else dollars


_FREE = Price(0.0)

#: List prices in USD per million tokens, from Anthropic's and Cohere's pricing pages as of
#: 2026-11 (Anthropic cache writes are the 5-minute ones). A key prices the model of that name
#: and its dated ids (``claude-haiku-4-5-20251001``). Local models are free. Models not listed
#: are reported as unpriced: pass a table that includes them. Haiku 5.5 is at its price for
#: prompts up to 100k tokens (longer prompts cost 5x).
DEFAULT_PRICES: Mapping[str, Price] = MappingProxyType(
    {
        "claude-fable-5-1": Price(10.0, 50.0, cache_read=0.25, cache_write=12.50),
        "claude-fable-5": Price(10.0, 50.0, cache_read=1.0, cache_write=12.50),
        "claude-opus-5-5": Price(4.0, 20.0, cache_read=0.20, cache_write=5.0),
        "claude-opus-5": Price(5.0, 25.0, cache_read=0.50, cache_write=6.25),
        "claude-opus-4-8": Price(5.0, 25.0, cache_read=0.50, cache_write=6.25),
        "claude-opus-4-7": Price(5.0, 25.0, cache_read=0.50, cache_write=6.25),
        "claude-opus-4-6": Price(5.0, 25.0, cache_read=0.50, cache_write=6.25),
        "claude-opus-4-5": Price(5.0, 25.0, cache_read=0.50, cache_write=6.25),
        "claude-opus-4-1": Price(15.0, 75.0, cache_read=1.50, cache_write=18.75),
        "claude-opus-4": Price(15.0, 75.0, cache_read=1.50, cache_write=18.75),
        "claude-sonnet-5-5": Price(2.0, 10.0, cache_read=0.10, cache_write=2.50),
        "claude-sonnet-5": Price(2.0, 10.0, cache_read=0.20, cache_write=2.50),
        "claude-sonnet-4-6": Price(3.0, 15.0, cache_read=0.30, cache_write=3.75),
        "claude-sonnet-4-5": Price(3.0, 15.0, cache_read=0.30, cache_write=3.75),
        "claude-sonnet-4": Price(3.0, 15.0, cache_read=0.30, cache_write=3.75),
        "claude-haiku-5-5": Price(0.10, 0.50, cache_read=0.01, cache_write=0.125),
        "claude-haiku-4-5": Price(1.0, 5.0, cache_read=0.10, cache_write=1.25),
        "claude-3-5-haiku": Price(0.80, 4.0, cache_read=0.08, cache_write=1.0),
        "embed-english-v3.0": Price(0.10),
        "embed-multilingual-v3.0": Price(0.10),
        "embed-english-light-v3.0": Price(0.10),
        "embed-multilingual-light-v3.0": Price(0.10),
        "embed-v4.0": Price(0.12),
        "scripted": _FREE,
        "hashing": _FREE,
        "minilm": _FREE,
    }
)

_DATED = re.compile(r"-\d{8}$")

_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


@dataclass
class _Tally:
    calls: int = 0
    cached_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    #: input plus output tokens of the cached calls: what they cost when first made
    replayed_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"calls": self.calls, "cached_calls": self.cached_calls}
        row.update({name: getattr(self.usage, name) for name in _FIELDS})
        row["cost_usd"] = self.cost_usd
        row["replayed_tokens"] = self.replayed_tokens
        return row


class UsageMeter:
    """Adds up tokens and estimated cost per (stage, model); safe to share between threads.

    ``prices`` maps model names to `Price` (see `DEFAULT_PRICES`); a model found in no entry is
    counted in tokens, costs nothing in the totals and is listed under ``unpriced_models``.
    Calls answered from a cache are counted as ``cached_calls`` and add no tokens or cost; their
    input and output tokens are kept apart as ``replayed_tokens`` (what the call cost when made).
    """

    def __init__(self, prices: Mapping[str, Price]) -> None:
        for model, price in prices.items():
            if not isinstance(price, Price):
                raise ConfigurationError(
                    f"prices[{model!r}] must be a providers.Price, got {type(price).__name__}"
                )
        self._prices = dict(prices)
        self._lock = threading.Lock()
        self._tallies: dict[tuple[str, str], _Tally] = {}
        self._unpriced: set[str] = set()

    def price_for(self, model: str) -> Price | None:
        """The price of ``model``, matched exactly or without a ``-YYYYMMDD`` date suffix.

        For ``provider:model`` names (``anthropic:claude-sonnet-4-5``) the model part is looked
        up, then the provider part (so every ``scripted:...`` or ``minilm:...`` is free).
        """
        candidates = [model]
        if ":" in model:
            provider, rest = model.split(":", 1)
            candidates += [rest, provider]
        for name in candidates:
            for key in (name, _DATED.sub("", name)):
                if key in self._prices:
                    return self._prices[key]
        return None

    def record(
        self,
        stage: str,
        model: str,
        usage: Usage,
        *,
        batch: bool = False,
        cached: bool = False,
    ) -> None:
        """Count one call of ``model`` made for ``stage`` (batch calls at half price)."""
        price = self.price_for(model)
        cost = price.cost(usage, batch=batch) if price is not None and not cached else 0.0
        with self._lock:
            tally = self._tallies.setdefault((stage, model), _Tally())
            tally.calls += 1
            if cached:
                tally.cached_calls += 1
                tally.replayed_tokens += usage.input_tokens + usage.output_tokens
                return
            tally.usage = tally.usage + usage
            tally.cost_usd += cost
            if price is None:
                self._unpriced.add(model)

    def record_completion(self, stage: str, completion: Completion, *, batch: bool = False) -> None:
        """`record` for a `Completion` (its model, usage and cached flag)."""
        self.record(
            stage, completion.model, completion.usage, batch=batch, cached=completion.cached
        )

    def total_cost(self) -> float:
        with self._lock:
            return sum(tally.cost_usd for tally in self._tallies.values())

    def report(self) -> dict[str, Any]:
        """Totals per stage, per model and overall, plus the models without a price."""
        with self._lock:
            tallies = {
                key: _Tally(t.calls, t.cached_calls, t.usage, t.cost_usd, t.replayed_tokens)
                for key, t in self._tallies.items()
            }
            unpriced = sorted(self._unpriced)
        stages: dict[str, _Tally] = {}
        models: dict[str, _Tally] = {}
        total = _Tally()
        for (stage, model), tally in sorted(tallies.items()):
            for bucket in (
                stages.setdefault(stage, _Tally()),
                models.setdefault(model, _Tally()),
                total,
            ):
                bucket.calls += tally.calls
                bucket.cached_calls += tally.cached_calls
                bucket.usage = bucket.usage + tally.usage
                bucket.cost_usd += tally.cost_usd
                bucket.replayed_tokens += tally.replayed_tokens
        return {
            "stages": {stage: tally.as_dict() for stage, tally in stages.items()},
            "models": {model: tally.as_dict() for model, tally in models.items()},
            "rows": [
                {"stage": stage, "model": model, **tally.as_dict()}
                for (stage, model), tally in sorted(tallies.items())
            ],
            "total": total.as_dict(),
            "unpriced_models": unpriced,
        }

    def format_table(self) -> str:
        """A plain-text table of the report, one row per stage and model, then the total."""
        report = self.report()
        header = (
            "stage",
            "model",
            "calls",
            "cached",
            "input",
            "output",
            "cache rd",
            "cache wr",
            "cost USD",
        )
        lines: list[tuple[str, ...]] = [header]
        for row in [*report["rows"], {"stage": "total", "model": "", **report["total"]}]:
            lines.append(
                (
                    row["stage"],
                    row["model"],
                    str(row["calls"]),
                    str(row["cached_calls"]),
                    *(str(row[name]) for name in _FIELDS),
                    f"{row['cost_usd']:.4f}",
                )
            )
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        text = [
            "  ".join(
                cell.ljust(width) if i < 2 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(line, widths, strict=True))
            ).rstrip()
            for line in lines
        ]
        if report["unpriced_models"]:
            text.append(f"no price for: {', '.join(report['unpriced_models'])} (counted as 0)")
        return "\n".join(text)
