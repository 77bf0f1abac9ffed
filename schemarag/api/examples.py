"""What `POST /v1/examples` needs: the catalog the index was built from, the store, an embedder.

The catalog comes from `serve --source KIND:PATH` (as for generation); without it the route
answers 501 naming the option. Adding examples publishes a new build of the store under its
build lock (`indexer.add_examples`); the server then reloads it as after any build, so the
examples route the next questions within about a second (`ApiOptions.reload_interval_s`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from indexer import ExamplesReport, Rejected, UserExample, add_examples
from providers import Embedder
from schemagraph import Catalog
from schemarag.pending_catalog import PendingCatalog, catalog_of
from store import StoreError, StoreLocation
from store.manifest import read_manifest

#: how long a request waits for a catalog still being read (then 503, to retry)
CATALOG_WAIT_S = 10.0

__all__ = ["ExampleIntake", "ExamplesUnavailableError"]


class ExamplesUnavailableError(Exception):
    """Adding examples is not configured on this server; the message says what is missing."""


@dataclass(frozen=True)
class ExampleIntake:
    """`catalog`: the sources' catalog (None: unavailable, `missing` says why); `location`: the
    store; `embedder_for(spec)`: the embedder of a build's spec (the server's own, loaded once);
    `execute_sql`: run each SQL read-only where the database has a file."""

    catalog: Catalog | PendingCatalog | None
    location: StoreLocation | None
    embedder_for: Callable[[str], Embedder] | None
    missing: str = ""
    execute_sql: bool = True

    @classmethod
    def unavailable(cls, missing: str) -> ExampleIntake:
        return cls(None, None, None, missing)

    def add(self, pairs: Sequence[tuple[str, str, str]], source: str) -> ExamplesReport:
        """Validate and add (question, sql, db_id) `pairs`, labelled `source`; a rejected
        pair's `where` is `examples[i]`, its index in the request."""
        if self.catalog is None or self.location is None or self.embedder_for is None:
            raise ExamplesUnavailableError(
                "adding examples is not configured on this server: " + self.missing
            )
        current = self.location.current()
        if current is None:
            raise StoreError(f"{self.location.where}: no build yet")
        spec = read_manifest(self.location, current).embedder_spec()
        catalog = catalog_of(self.catalog, CATALOG_WAIT_S)
        assert catalog is not None
        examples = [
            UserExample(q, s, d, source=source, line=i) for i, (q, s, d) in enumerate(pairs)
        ]
        report = add_examples(
            catalog,
            self.location,
            self.embedder_for(spec),
            examples,
            execute_sql=self.execute_sql,
        )
        prefix = f"{source}:"  # where the report locates them: `source:index`
        rejected = tuple(
            Rejected(f"examples[{r.line}]", r.reason, r.id, r.line)
            if r.where.startswith(prefix) and r.line is not None
            else r
            for r in report.rejected
        )
        return replace(report, rejected=rejected)
