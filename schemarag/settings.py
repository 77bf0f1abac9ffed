"""Configuration read at the edge: environment variables in, one frozen `Settings` value out.

Libraries never read the environment; the CLI and the HTTP app call `Settings.from_env()` and
pass explicit values on. Variables:

=========================== ================================ ==============================
variable                    field                            default
=========================== ================================ ==============================
ANTHROPIC_API_KEY           anthropic_api_key                none
CO_API_KEY / COHERE_API_KEY cohere_api_key                   none (CO_API_KEY wins)
SCHEMARAG_OPENAI_BASE_URL   openai_base_url                  none
SCHEMARAG_OPENAI_API_KEY    openai_api_key                   none
SCHEMARAG_LLM               llm_spec                         none (offline)
SCHEMARAG_LLAMACPP_THREADS  llamacpp_threads                 one per core, at most 8
SCHEMARAG_EMBEDDER          embedder_spec                    ``minilm+schema``
SCHEMARAG_CACHE             cache_path                       ``.schemarag/cache.sqlite``
SCHEMARAG_STORE             store_path                       ``.schemarag/store``
QDRANT_API_KEY              qdrant_api_key                   none
SCHEMARAG_API_KEY           api_key                          none
=========================== ================================ ==============================

An empty variable counts as unset.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from providers import (
    DEFAULT_PRICES,
    LLM,
    LLM_SPEC_FORMS,
    ConfigurationError,
    Embedder,
    Price,
    make_embedder,
    make_llm,
    parse_embedder_spec,
    parse_llm_spec,
)

__all__ = ["Settings"]

_ENV = {
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "cohere_api_key": "CO_API_KEY",
    "openai_base_url": "SCHEMARAG_OPENAI_BASE_URL",
    "openai_api_key": "SCHEMARAG_OPENAI_API_KEY",
    "llm_spec": "SCHEMARAG_LLM",
    "llamacpp_threads": "SCHEMARAG_LLAMACPP_THREADS",
    "embedder_spec": "SCHEMARAG_EMBEDDER",
    "cache_path": "SCHEMARAG_CACHE",
    "store_path": "SCHEMARAG_STORE",
    "qdrant_api_key": "QDRANT_API_KEY",
    "api_key": "SCHEMARAG_API_KEY",
}


def _setting(name: str) -> str:
    return f"{name} ({_ENV[name]})"


@dataclass(frozen=True)
class Settings:
    """Keys, model choices and paths; secrets are left out of ``repr``.

    Validated on construction: spec strings must parse, URLs must be http(s), paths non-empty.
    Errors are `providers.ConfigurationError` naming the setting and its variable.
    """

    anthropic_api_key: str | None = field(default=None, repr=False)
    cohere_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    llm_spec: str | None = None
    llamacpp_threads: int | None = None
    embedder_spec: str = "minilm+schema"
    cache_path: Path = Path(".schemarag/cache.sqlite")
    store_path: Path = Path(".schemarag/store")
    qdrant_api_key: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    prices: Mapping[str, Price] = field(
        default_factory=lambda: DEFAULT_PRICES, repr=False, hash=False
    )

    def __post_init__(self) -> None:
        try:
            parse_embedder_spec(self.embedder_spec)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{_setting('embedder_spec')}: {exc}") from None
        if self.llm_spec is not None:
            try:
                parse_llm_spec(self.llm_spec)
            except ConfigurationError as exc:
                raise ConfigurationError(f"{_setting('llm_spec')}: {exc}") from None
        if self.llamacpp_threads is not None and (
            isinstance(self.llamacpp_threads, bool)
            or not isinstance(self.llamacpp_threads, int)
            or self.llamacpp_threads < 1
        ):
            raise ConfigurationError(
                f"{_setting('llamacpp_threads')} must be a whole number >= 1, "
                f"got {self.llamacpp_threads!r}"
            )
        if self.openai_base_url is not None and not self.openai_base_url.startswith(
            ("http://", "https://")
        ):
            raise ConfigurationError(
                f"{_setting('openai_base_url')} must start with http:// or https://, "
                f"got {self.openai_base_url!r}"
            )
        for name in ("cache_path", "store_path"):
            value = getattr(self, name)
            if not isinstance(value, Path):
                object.__setattr__(self, name, Path(value))
            if not str(value).strip():
                raise ConfigurationError(f"{_setting(name)} must not be empty")
        for model, price in self.prices.items():
            if not isinstance(price, Price):
                raise ConfigurationError(
                    f"prices[{model!r}] must be a providers.Price, got {type(price).__name__}"
                )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """Settings from environment variables (see the module docstring)."""

        def get(name: str) -> str | None:
            value = environ.get(name, "").strip()
            return value or None

        values: dict[str, object] = {}
        for name, variable in _ENV.items():
            value = get(variable)
            if name == "cohere_api_key" and value is None:
                value = get("COHERE_API_KEY")
            if value is None:
                continue
            if name in ("cache_path", "store_path"):
                values[name] = Path(value)
            elif name == "llamacpp_threads":
                values[name] = int(value) if value.isdigit() else value
            else:
                values[name] = value
        return cls(**values)  # type: ignore[arg-type]

    def llm(self, spec: str | None = None) -> LLM:
        """The LLM named by ``spec``, or by ``llm_spec`` when ``spec`` is None."""
        chosen = spec if spec is not None else self.llm_spec
        if chosen is None:
            raise ConfigurationError(
                f"no language model configured: set {_ENV['llm_spec']} to one of: "
                + "; ".join(LLM_SPEC_FORMS)
            )
        return make_llm(
            chosen,
            anthropic_api_key=self.anthropic_api_key,
            openai_base_url=self.openai_base_url,
            openai_api_key=self.openai_api_key,
            llamacpp_threads=self.llamacpp_threads,
        )

    def embedder(self, spec: str | None = None) -> Embedder:
        """The embedder named by ``spec``, or by ``embedder_spec`` when ``spec`` is None."""
        return make_embedder(
            spec if spec is not None else self.embedder_spec,
            cohere_api_key=self.cohere_api_key,
        )
