"""schemarag.settings.Settings: environment in, validated value out, providers built from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from providers import DEFAULT_PRICES, ConfigurationError, HashingEmbedder, Price, ScriptedLLM
from schemarag.settings import Settings


def test_defaults_with_an_empty_environment():
    settings = Settings.from_env({})

    assert settings.embedder_spec == "minilm+schema"
    assert settings.llm_spec is None
    assert settings.cache_path == Path(".schemarag/cache.sqlite")
    assert settings.store_path == Path(".schemarag/store")
    assert settings.anthropic_api_key is None
    assert settings.cohere_api_key is None
    assert settings.prices is DEFAULT_PRICES


def test_every_variable_is_read():
    settings = Settings.from_env(
        {
            "ANTHROPIC_API_KEY": "ak",
            "CO_API_KEY": "ck",
            "SCHEMARAG_OPENAI_BASE_URL": "http://localhost:8000/v1",
            "SCHEMARAG_OPENAI_API_KEY": "ok",
            "SCHEMARAG_LLM": "anthropic:claude-haiku-4-5",
            "SCHEMARAG_EMBEDDER": "hashing:256",
            "SCHEMARAG_CACHE": "/tmp/c.sqlite",
            "SCHEMARAG_STORE": "/tmp/store",
            "QDRANT_API_KEY": "qk",
            "SCHEMARAG_API_KEY": "sk",
        }
    )

    assert settings == Settings(
        anthropic_api_key="ak",
        cohere_api_key="ck",
        openai_base_url="http://localhost:8000/v1",
        openai_api_key="ok",
        llm_spec="anthropic:claude-haiku-4-5",
        embedder_spec="hashing:256",
        cache_path=Path("/tmp/c.sqlite"),
        store_path=Path("/tmp/store"),
        qdrant_api_key="qk",
        api_key="sk",
    )


def test_cohere_key_falls_back_to_cohere_api_key_and_co_api_key_wins():
    assert Settings.from_env({"COHERE_API_KEY": "b"}).cohere_api_key == "b"
    assert Settings.from_env({"CO_API_KEY": "a", "COHERE_API_KEY": "b"}).cohere_api_key == "a"


def test_empty_variables_count_as_unset():
    settings = Settings.from_env({"SCHEMARAG_EMBEDDER": "", "ANTHROPIC_API_KEY": "  "})

    assert settings.embedder_spec == "minilm+schema"
    assert settings.anthropic_api_key is None


def test_secrets_stay_out_of_repr():
    text = repr(Settings(anthropic_api_key="sk-ant-secret", cohere_api_key="co-secret"))

    assert "secret" not in text


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"SCHEMARAG_EMBEDDER": "bert"}, "SCHEMARAG_EMBEDDER"),
        ({"SCHEMARAG_LLM": "gpt-4"}, "SCHEMARAG_LLM"),
        ({"SCHEMARAG_OPENAI_BASE_URL": "localhost:8000"}, "SCHEMARAG_OPENAI_BASE_URL"),
    ],
)
def test_invalid_values_are_rejected_naming_the_variable(environ, named):
    with pytest.raises(ConfigurationError, match=named):
        Settings.from_env(environ)


def test_direct_construction_is_validated_too():
    with pytest.raises(ConfigurationError, match="cache_path"):
        Settings(cache_path="")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="prices"):
        Settings(prices={"m": 1.0})  # type: ignore[dict-item]
    assert Settings(cache_path="x.sqlite").cache_path == Path("x.sqlite")  # type: ignore[arg-type]


def test_llm_and_embedder_helpers_pass_the_keys_on():
    settings = Settings(llm_spec="scripted:SELECT 1", embedder_spec="hashing:64")

    assert isinstance(settings.llm(), ScriptedLLM)
    assert isinstance(settings.embedder(), HashingEmbedder)
    assert settings.embedder().dim == 64
    assert settings.embedder("hashing:32").dim == 32


def test_llm_helper_names_the_missing_key_and_the_missing_spec():
    settings = Settings()

    with pytest.raises(ConfigurationError, match="SCHEMARAG_LLM"):
        settings.llm()
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        settings.llm("anthropic:claude-haiku-4-5")
    with pytest.raises(ConfigurationError, match="CO_API_KEY"):
        settings.embedder("cohere")


def test_anthropic_key_reaches_the_adapter():
    llm = Settings(anthropic_api_key="ak").llm("anthropic:claude-haiku-4-5")

    assert llm.name == "anthropic:claude-haiku-4-5"


def test_custom_price_table():
    settings = Settings(prices={"my-model": Price(1.0, 2.0)})

    assert settings.prices["my-model"].output == 2.0
