"""make_llm / make_embedder: every spec form, unknown specs, missing keys."""

from __future__ import annotations

import pytest

from providers import (
    EMBEDDER_SPEC_FORMS,
    LLM_SPEC_FORMS,
    AnthropicLLM,
    CohereEmbedder,
    ConfigurationError,
    HashingEmbedder,
    Message,
    MiniLMEmbedder,
    OpenAICompatLLM,
    ScriptedLLM,
    make_embedder,
    make_llm,
    parse_embedder_spec,
    parse_llm_spec,
    spec_of_embedder,
)


def test_anthropic_spec_builds_the_sdk_adapter_with_the_given_key():
    llm = make_llm("anthropic:claude-haiku-4-5", anthropic_api_key="k")

    assert isinstance(llm, AnthropicLLM)
    assert llm.name == "anthropic:claude-haiku-4-5"


def test_openai_spec_with_url_keeps_colons_in_the_model_name():
    llm = make_llm("openai:llama3.1:8b@http://localhost:11434/v1")

    assert isinstance(llm, OpenAICompatLLM)
    assert llm.name == "openai:llama3.1:8b"
    assert llm.url == "http://localhost:11434/v1/chat/completions"


def test_openai_spec_without_url_takes_the_base_url_argument():
    llm = make_llm("openai:qwen2.5-coder", openai_base_url="https://gpu-box:8000/v1")

    assert isinstance(llm, OpenAICompatLLM)
    assert llm.url == "https://gpu-box:8000/v1/chat/completions"


def test_openai_spec_without_any_url_names_the_setting():
    with pytest.raises(ConfigurationError, match="SCHEMARAG_OPENAI_BASE_URL"):
        make_llm("openai:qwen2.5-coder")
    with pytest.raises(ConfigurationError, match="http"):
        make_llm("openai:qwen@localhost:8000")


def test_scripted_specs():
    fixed = make_llm("scripted:SELECT 1: with a colon")
    echo = make_llm("scripted")

    assert isinstance(fixed, ScriptedLLM)
    assert fixed.complete("", [Message.user("q")]).text == "SELECT 1: with a colon"
    assert echo.complete("", [Message.user("repeat me")]).text == "repeat me"


def test_missing_keys_name_the_environment_variables():
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        make_llm("anthropic:claude-haiku-4-5")
    with pytest.raises(ConfigurationError, match="CO_API_KEY"):
        make_embedder("cohere")


@pytest.mark.parametrize("spec", ["gpt-4", "anthropic", "anthropic:", "openai", "", "claude"])
def test_unknown_llm_spec_lists_the_valid_forms(spec):
    with pytest.raises(ConfigurationError) as caught:
        make_llm(spec)

    assert f"unknown LLM spec {spec!r}" in str(caught.value)
    for form in LLM_SPEC_FORMS:
        assert form in str(caught.value)


def test_embedder_specs():
    assert isinstance(make_embedder("hashing"), HashingEmbedder)
    assert make_embedder("hashing").dim == 512
    assert make_embedder("hashing:128").name == "hashing:128"
    minilm = make_embedder("minilm", batch_size=32)
    assert isinstance(minilm, MiniLMEmbedder)
    assert minilm.batch_size == 32
    cohere = make_embedder("cohere", cohere_api_key="k")
    assert isinstance(cohere, CohereEmbedder)
    assert cohere.name == "cohere:embed-english-v3.0"
    assert make_embedder("cohere:embed-multilingual-v3.0", cohere_api_key="k").dim == 1024


def test_minilm_adapter_specs_parse_without_loading_anything():
    assert parse_embedder_spec("minilm+schema").adapters == "schema"
    assert parse_embedder_spec("minilm+schema-v1").adapters == "schema-v1"
    assert parse_embedder_spec("minilm+runs/mine.npz").adapters == "runs/mine.npz"
    assert parse_embedder_spec("minilm").adapters is None


def test_a_builds_embedder_name_gives_back_its_spec():
    assert spec_of_embedder("minilm:all-MiniLM-L6-v2") == "minilm"
    # the current shipped adapters, and an earlier version, which serves the indexes built with it
    assert spec_of_embedder("minilm:all-MiniLM-L6-v2+schema-v2") == "minilm+schema"
    assert spec_of_embedder("minilm:all-MiniLM-L6-v2+schema-v1") == "minilm+schema-v1"
    assert spec_of_embedder("hashing:256") == "hashing:256"
    with pytest.raises(ConfigurationError, match=r"--embedder minilm\+PATH/mine\.npz"):
        spec_of_embedder("minilm:all-MiniLM-L6-v2+mine")
    # a version this install does not ship
    with pytest.raises(ConfigurationError, match=r"does not ship \(it has schema-v1, schema-v2\)"):
        spec_of_embedder("minilm:all-MiniLM-L6-v2+schema-v9")


@pytest.mark.parametrize(
    "spec", ["bert", "minilm:large", "cohere:", "", "HASHING", "minilm+", "minilm+large"]
)
def test_unknown_embedder_spec_lists_the_valid_forms(spec):
    with pytest.raises(ConfigurationError) as caught:
        make_embedder(spec)

    for form in EMBEDDER_SPEC_FORMS:
        assert form in str(caught.value)


@pytest.mark.parametrize("spec", ["hashing:abc", "hashing:4", "hashing:"])
def test_bad_hashing_dimension_is_explained(spec):
    with pytest.raises(ConfigurationError, match="integer >= 8"):
        make_embedder(spec)


def test_parsing_needs_no_keys_and_builds_nothing():
    assert parse_llm_spec("anthropic:claude-haiku-4-5").model == "claude-haiku-4-5"
    parsed = parse_llm_spec("openai:m@http://h:1/v1")
    assert (parsed.model, parsed.base_url) == ("m", "http://h:1/v1")
    assert parse_embedder_spec("cohere").model == "embed-english-v3.0"
    assert parse_embedder_spec(" hashing:64 ").dim == 64
