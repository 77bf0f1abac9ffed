"""Calls to the real Anthropic and Cohere APIs; each skips, saying why, without its key."""

from __future__ import annotations

import os

import numpy as np
import pytest

from providers import AnthropicLLM, CohereEmbedder, Completion, LLMRequest, Message

ANTHROPIC_KEY = os.environ.get("ANTHROPIC_API_KEY", "").strip()
COHERE_KEY = (os.environ.get("CO_API_KEY") or os.environ.get("COHERE_API_KEY") or "").strip()
LIVE_MODEL = os.environ.get("SCHEMARAG_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5")

needs_anthropic = pytest.mark.skipif(
    not ANTHROPIC_KEY, reason="ANTHROPIC_API_KEY is not set: live Anthropic test skipped"
)
needs_cohere = pytest.mark.skipif(
    not COHERE_KEY, reason="CO_API_KEY (or COHERE_API_KEY) is not set: live Cohere test skipped"
)


@pytest.mark.live
@needs_anthropic
def test_anthropic_completes_and_reports_usage():
    with AnthropicLLM(LIVE_MODEL, api_key=ANTHROPIC_KEY, max_retries=2) as llm:
        completion = llm.complete(
            "You answer with one word.", [Message.user("Reply with the word: pong")], max_tokens=20
        )

    assert "pong" in completion.text.lower()
    assert completion.usage.input_tokens > 0
    assert completion.usage.output_tokens > 0


@pytest.mark.live
@needs_anthropic
def test_anthropic_prompt_cache_is_written_then_read():
    schema = "\n".join(
        f"CREATE TABLE t{i} (id INTEGER PRIMARY KEY, name TEXT, value REAL, note TEXT);"
        for i in range(400)
    )
    with AnthropicLLM(LIVE_MODEL, api_key=ANTHROPIC_KEY, max_retries=2) as llm:
        first = llm.complete(schema, [Message.user("How many tables? Number only.")], max_tokens=10)
        second = llm.complete(schema, [Message.user("Name the first table.")], max_tokens=10)

    assert first.usage.cache_write_tokens + first.usage.cache_read_tokens > 0
    assert second.usage.cache_read_tokens > 0


@pytest.mark.live
@pytest.mark.slow
@needs_anthropic
def test_anthropic_message_batch_round_trip():
    requests = [("ping", LLMRequest.of("Answer in one word.", "Say pong", max_tokens=10))]
    with AnthropicLLM(LIVE_MODEL, api_key=ANTHROPIC_KEY) as llm:
        results = llm.run_batch(requests, poll_interval=20.0, timeout=3600.0)

    assert set(results) == {"ping"}
    completion = results["ping"]
    assert isinstance(completion, Completion), completion
    assert "pong" in completion.text.lower()


@pytest.mark.live
@needs_cohere
def test_cohere_embeds_documents_and_queries():
    embedder = CohereEmbedder(api_key=COHERE_KEY)

    documents = embedder.embed_documents(["singer: name, age, country", "car: horsepower, year"])
    query = embedder.embed_query("How old is the youngest singer?")

    assert documents.shape == (2, 1024)
    np.testing.assert_allclose(np.linalg.norm(documents, axis=1), 1.0, rtol=1e-5)
    assert query @ documents[0] > query @ documents[1]
    assert embedder.usage.input_tokens > 0
