"""What `POST /v1/generate` needs: the catalog the index was built from and the LLMs.

Both are configured when the server starts (`serve --source KIND:PATH`, `SCHEMARAG_LLM`);
without either, the route answers 501 with a message naming what to provide, rather than
anything that looks like SQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from generator import GenerateRequest, GenerateResult, GenerationConfig, Models, generate
from generator.service import SchemaRetriever
from providers import DEFAULT_PRICES, Price, UsageMeter
from schemagraph import Catalog

__all__ = ["Generation", "GenerationUnavailableError"]


class GenerationUnavailableError(Exception):
    """Generation is not configured on this server; the message says what is missing."""


@dataclass(frozen=True)
class Generation:
    """The server's generation setup; `missing` lists what keeps it from running."""

    catalog: Catalog | None
    models: Models | None
    config: GenerationConfig = field(default_factory=GenerationConfig)
    missing: tuple[str, ...] = ()
    prices: Mapping[str, Price] = field(default_factory=lambda: DEFAULT_PRICES)

    @classmethod
    def unavailable(cls, *missing: str) -> Generation:
        return cls(None, None, missing=missing)

    @property
    def available(self) -> bool:
        return self.catalog is not None and self.models is not None and not self.missing

    def check(self) -> None:
        """Raise `GenerationUnavailableError` naming what to configure, unless available."""
        if not self.available:
            raise GenerationUnavailableError(
                "SQL generation is not configured on this server: "
                + "; ".join(self.missing or ("no catalog or language model",))
            )

    def run(self, request: GenerateRequest, retriever: SchemaRetriever | None) -> GenerateResult:
        self.check()
        assert self.catalog is not None and self.models is not None
        return generate(
            request,
            catalog=self.catalog,
            models=self.models,
            config=self.config,
            retriever=retriever,
            meter=UsageMeter(self.prices),
        )
