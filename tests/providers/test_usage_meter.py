"""UsageMeter: tokens and cost per stage and model, on worked numbers."""

from __future__ import annotations

import threading

import pytest

from providers import (
    BATCH_DISCOUNT,
    DEFAULT_PRICES,
    Completion,
    ConfigurationError,
    Price,
    Usage,
    UsageMeter,
)

SONNET = Price(3.0, 15.0, cache_read=0.30, cache_write=3.75)


def test_cost_of_one_call_on_worked_numbers():
    # 1M input * $3 + 100k output * $15 + 200k cache read * $0.30 + 50k cache write * $3.75
    usage = Usage(1_000_000, 100_000, 200_000, 50_000)

    assert SONNET.cost(usage) == pytest.approx(3.0 + 1.5 + 0.06 + 0.1875)
    assert SONNET.cost(usage, batch=True) == pytest.approx((3.0 + 1.5 + 0.06 + 0.1875) / 2)
    assert BATCH_DISCOUNT == 0.5


def test_report_adds_up_per_stage_and_model():
    meter = UsageMeter({"claude-sonnet-4-6": SONNET, "embed-english-v3.0": Price(0.10)})

    meter.record("synthesize", "claude-sonnet-4-6", Usage(10_000, 2_000, 0, 40_000))
    meter.record("synthesize", "claude-sonnet-4-6", Usage(10_000, 2_000, 40_000, 0))
    meter.record("synthesize", "claude-sonnet-4-6", Usage(500_000, 100_000), batch=True)
    meter.record("embed", "embed-english-v3.0", Usage(input_tokens=2_000_000))

    report = meter.report()
    synthesize = report["stages"]["synthesize"]
    assert synthesize["calls"] == 3
    assert synthesize["input_tokens"] == 520_000
    assert synthesize["output_tokens"] == 104_000
    assert synthesize["cache_read_tokens"] == 40_000
    assert synthesize["cache_write_tokens"] == 40_000
    # 20k*3 + 4k*15 + 40k*0.30 + 40k*3.75 = 0.06 + 0.06 + 0.012 + 0.15 = 0.282; batch call:
    # (500k*3 + 100k*15) / 2 = (1.5 + 1.5) / 2 = 1.5
    assert synthesize["cost_usd"] == pytest.approx(1.782)
    assert report["stages"]["embed"]["cost_usd"] == pytest.approx(0.20)
    assert report["total"]["cost_usd"] == pytest.approx(1.982)
    assert meter.total_cost() == pytest.approx(1.982)
    assert report["models"]["claude-sonnet-4-6"]["calls"] == 3
    assert report["unpriced_models"] == []


def test_dated_and_provider_prefixed_model_names_find_their_price():
    meter = UsageMeter(DEFAULT_PRICES)

    assert meter.price_for("claude-haiku-4-5-20251001") == DEFAULT_PRICES["claude-haiku-4-5"]
    assert meter.price_for("anthropic:claude-sonnet-4-6") == DEFAULT_PRICES["claude-sonnet-4-6"]
    assert meter.price_for("cohere:embed-english-v3.0") == Price(0.10)
    assert meter.price_for("scripted:echo") == Price(0.0)
    assert meter.price_for("minilm:all-MiniLM-L6-v2") == Price(0.0)
    # A newer model is not priced as an older one that happens to be a prefix of its name.
    assert meter.price_for("claude-opus-5-5") == DEFAULT_PRICES["claude-opus-5-5"]
    assert meter.price_for("claude-opus-4-9") is None


def test_default_table_has_the_documented_list_prices():
    assert DEFAULT_PRICES["claude-sonnet-4-5"] == Price(
        3.0, 15.0, cache_read=0.30, cache_write=3.75
    )
    assert DEFAULT_PRICES["claude-haiku-4-5"] == Price(1.0, 5.0, cache_read=0.10, cache_write=1.25)
    assert DEFAULT_PRICES["claude-opus-4-1"] == Price(
        15.0, 75.0, cache_read=1.50, cache_write=18.75
    )
    assert DEFAULT_PRICES["embed-english-v3.0"] == Price(0.10)


def test_unknown_models_count_tokens_but_no_cost_and_are_listed():
    meter = UsageMeter(DEFAULT_PRICES)

    meter.record("generate", "openai:llama3.1", Usage(1000, 100))

    report = meter.report()
    assert report["total"]["input_tokens"] == 1000
    assert report["total"]["cost_usd"] == 0.0
    assert report["unpriced_models"] == ["openai:llama3.1"]
    assert "no price for: openai:llama3.1" in meter.format_table()


def test_cached_completions_count_as_calls_without_tokens_or_cost():
    meter = UsageMeter(DEFAULT_PRICES)
    fresh = Completion("x", "claude-haiku-4-5", Usage(1_000_000, 0))

    meter.record_completion("pool", fresh)
    meter.record_completion(
        "pool", Completion("x", "claude-haiku-4-5", Usage(1_000_000, 30), cached=True)
    )

    report = meter.report()
    pool = report["stages"]["pool"]
    assert pool["calls"] == 2
    assert pool["cached_calls"] == 1
    assert pool["input_tokens"] == 1_000_000
    assert pool["cost_usd"] == pytest.approx(1.0)
    # what the cached call cost when it was made, kept apart
    assert pool["replayed_tokens"] == report["total"]["replayed_tokens"] == 1_000_030
    assert report["rows"][0]["replayed_tokens"] == 1_000_030


def test_format_table_has_a_row_per_stage_and_model_and_a_total():
    meter = UsageMeter({"m": Price(1.0, 2.0)})
    meter.record("index", "m", Usage(1_000_000, 500_000))
    meter.record("query", "m", Usage(10, 5))

    lines = meter.format_table().splitlines()

    assert lines[0].split() == [
        "stage",
        "model",
        "calls",
        "cached",
        "input",
        "output",
        "cache",
        "rd",
        "cache",
        "wr",
        "cost",
        "USD",
    ]
    assert lines[1].split() == ["index", "m", "1", "0", "1000000", "500000", "0", "0", "2.0000"]
    assert lines[2].split()[:2] == ["query", "m"]
    assert lines[3].split() == ["total", "2", "0", "1000010", "500005", "0", "0", "2.0000"]


def test_recording_from_many_threads_loses_nothing():
    meter = UsageMeter({"m": Price(1.0)})

    def work() -> None:
        for _ in range(1000):
            meter.record("stage", "m", Usage(input_tokens=1))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    total = meter.report()["total"]
    assert total["calls"] == 8000
    assert total["input_tokens"] == 8000
    assert total["cost_usd"] == pytest.approx(0.008)


def test_invalid_prices_are_rejected():
    with pytest.raises(ConfigurationError, match="input"):
        Price(-1.0)
    with pytest.raises(ConfigurationError, match="prices"):
        UsageMeter({"m": (1.0, 2.0)})  # type: ignore[dict-item]
