"""What `POST /v1/generate` needs: the catalog the index was built from and the LLMs.

Both are configured when the server starts (`serve --source KIND:PATH`, `SCHEMARAG_LLM`);
without either, the route answers 501 with a message naming what to provide, rather than
anything that looks like SQL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from generator import GenerateRequest, GenerateResult, GenerationConfig, Models, generate
from generator.service import SchemaRetriever
from providers import DEFAULT_PRICES, Price, UsageMeter
from schemagraph import Catalog
from schemagraph.model import fold

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

    def unknown_table(self, tables: Sequence[str], db_id: str | None) -> str | None:
        """A message naming the first of `tables` that `db_id` does not have (without `db_id`:
        that no database of the catalog has); None when all are known, or when `db_id` is not
        in the catalog (which `run` reports)."""
        assert self.catalog is not None
        if db_id is not None:
            if db_id not in self.catalog:
                return None
            db = self.catalog.database(db_id)
            missing = next((t for t in tables if not db.has_table(t)), None)
            return None if missing is None else f"database {db.id!r} has no table {missing!r}"
        missing = next((t for t in tables if fold(t) not in self._table_names), None)
        return None if missing is None else f"no database in the catalog has a table {missing!r}"

    @cached_property
    def _table_names(self) -> frozenset[str]:
        assert self.catalog is not None
        return frozenset(fold(t.name) for db in self.catalog for t in db.tables)

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
