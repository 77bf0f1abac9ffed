"""What the MCP tools answer, as plain Python: `Estate` over a served index and a catalog.

The served index is `schemarag.api.served.ServedIndex`, as `serve` holds it: a new build of the
store is swapped in without a restart, and every answer that reads the index names its build.
The catalog (`--source`) is what `describe_tables`, `check_sql` and `run_sql` read; without one
`describe_tables` and `run_sql` are not offered. It may still be loading (`PendingCatalog`):
`find_tables` and `list_databases` then name databases and tables from the served build (its
manifest's dialects, its table documents' engine names), and the catalog's tools wait for it.
Every method returns JSON-ready values or text and raises `EstateError` with a sentence the
model can act on; nothing here knows about the protocol.

What `find_tables` leaves out of `RetrievalResult.as_dict()` (an agent pays for every token):
the question (the caller has it), the pool-wide table ranking (the per-database rankings hold
the same tables), the examples' similarity, skeleton and origin (a user example is marked),
timings, `pooled`, a null `pooling_error`, and per table the `chosen`/`bridge` flags and null
`family`/`joins` (`chosen_tables` lists the joinable set, bridges say what they join). Scores
are rounded to 3 digits.
"""

from __future__ import annotations

import fnmatch
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.prompt import prompt_sample
from indexer.synthesis.readability import readable
from schemagraph import Catalog, Database, DatabaseSample
from schemagraph.dialects import dialect_of, engine_label, runnable, sql_dialect
from schemarag.mcp.describe import describe, sample_config
from schemarag.mcp.errors import EstateError
from schemarag.mcp.names import EngineNames, read_name, shown_name
from schemarag.pending_catalog import CatalogNotReadyError, PendingCatalog
from store.manifest import Manifest, Twins

if TYPE_CHECKING:
    from schemarag.api.served import Loaded, ServedIndex

__all__ = ["DescribeLimits", "Estate", "EstateError"]


#: the largest `describe_tables` budget a call may ask for
MAX_DESCRIBE_TOKENS = 20000


@dataclass(frozen=True)
class DescribeLimits:
    """`describe_tables`: the default and largest token budgets, sample rows per table."""

    budget_tokens: int = 3000
    max_budget_tokens: int = MAX_DESCRIBE_TOKENS
    sample_rows: int = 3


#: most rows `run_sql` returns (the model reads every one of them)
MAX_ROWS = 200
DEFAULT_ROWS = 50
#: `list_databases` page size
PAGE = 50


class Estate:
    """The tools' answers over `served` (started and stopped by the caller) and `catalog`
    (loaded, loading, or None).

    `generate`: the `ask` pipeline, `(question, database or None, loaded build) -> dict`, or
    None when no LLM is configured. `ready_timeout_s`: how long a call waits for the first
    build (or the catalog) to load before it answers that it is not ready. `manifest`: the
    served build's, read at start, whose dialects the instructions name before anything has
    loaded."""

    def __init__(
        self,
        served: ServedIndex,
        catalog: Catalog | PendingCatalog | None,
        *,
        generate: Callable[[str, str | None, Loaded], dict[str, Any]] | None = None,
        describe: DescribeLimits | None = None,
        timeout_s: float = 5.0,
        ready_timeout_s: float = 30.0,
        manifest: Manifest | None = None,
    ) -> None:
        self.served = served
        self._catalog = catalog
        self.manifest = manifest
        self.generate = generate
        self.describe = describe or DescribeLimits()
        self.timeout_s = timeout_s
        self.ready_timeout_s = ready_timeout_s
        # one retrieval at a time: the HTTP API batches them on one thread for the same reason
        self._retrieving = threading.Lock()
        #: sampled rows per database id, read once (a live server is not queried per call)
        self._samples: dict[str, DatabaseSample | None] = {}
        self._tables: dict[str, list[str]] | None = None
        self._names = EngineNames()

    @property
    def catalog(self) -> Catalog | None:
        """The catalog if it is loaded, else None."""
        if isinstance(self._catalog, PendingCatalog):
            return self._catalog.now()
        return self._catalog

    @property
    def has_catalog(self) -> bool:
        """Whether there is a catalog, loaded or loading."""
        return self._catalog is not None

    def _loaded_catalog(self) -> Catalog:
        """The catalog, waited for while it loads; `EstateError` without one."""
        if self._catalog is None:
            raise EstateError(
                "the server was started without the catalog (--source): it can rank tables "
                "but not show or query them"
            )
        if isinstance(self._catalog, PendingCatalog):
            try:
                return self._catalog.wait(self.ready_timeout_s)
            except CatalogNotReadyError as exc:
                raise EstateError(str(exc)) from None
        return self._catalog

    # -- the index -------------------------------------------------------------------------

    @contextmanager
    def build(self) -> Iterator[Loaded]:
        """The served build, waiting up to `ready_timeout_s` while the first one loads."""
        from schemarag.api.served import IndexNotReadyError

        deadline = time.monotonic() + self.ready_timeout_s
        while not self.served.settled and time.monotonic() < deadline:
            time.sleep(0.05)  # empty, failed or unreachable: said at once
        try:
            with self.served.lease() as loaded:
                yield loaded
        except IndexNotReadyError:
            raise EstateError(self.served.why_not_ready()) from None

    # -- tools -----------------------------------------------------------------------------

    def find_tables(
        self, question: str, top_databases: int = 3, top_tables: int = 5, dialect: str | None = None
    ) -> dict[str, Any]:
        """The ranked databases and tables for `question` (of `dialect` only, when given),
        trimmed (see the module docstring)."""
        if not question.strip():
            raise EstateError("question is empty: ask it in words")
        with self.build() as loaded, self._retrieving:
            found = loaded.retriever.retrieve(question, top_databases, top_tables, dialect=dialect)
        result = found.as_dict()
        if isinstance(self._catalog, PendingCatalog):  # it waits for a first answer
            self._catalog.answered.set()
        if result["abstained"]:  # what the router does not trust, said first and short
            return {
                "abstained": True,
                "note": "no database seems to fit the question; these are only candidates",
                "confidence": round(result["confidence"], 3),
                "build": loaded.build_id,
                "candidates": [
                    _candidate(self._names.named(_database(db), loaded, self.catalog), top_tables)
                    for db in result["databases"]
                ],
            }
        answer: dict[str, Any] = {
            "build": loaded.build_id,
            "confidence": round(result["confidence"], 3),
            "abstained": False,
            "databases": [
                self._names.named(_database(db), loaded, self.catalog) for db in result["databases"]
            ],
        }
        if result["twins"] is not None:
            answer["twins"] = result["twins"]
        # agents copy what they read: only examples that read as English are shown
        examples = [_example(e) for e in result["examples"] if readable(e["question"])]
        if examples:
            answer["examples"] = examples
        if result["pooling_error"]:
            answer["pooling_error"] = result["pooling_error"]
        return answer

    def list_databases(
        self, pattern: str | None = None, offset: int = 0, limit: int = PAGE
    ) -> dict[str, Any]:
        """The databases of the served build whose id matches `pattern` (a glob, or a part of
        the id; any case), `limit` from `offset`, with their table counts and names, the
        description the catalog gives their tables, and their twin groups."""
        #: tables per database beyond those named (the shards a build indexes once)
        shards: dict[str, int] = {}
        catalog = self.catalog
        if catalog is not None:  # answered at once, while the index may still load
            tables = self._catalog_tables()
            dialects = self.dialects()
            descriptions = {db.id: _described(t.description for t in db.tables) for db in catalog}
            loaded = self.served.current
            twins = loaded.manifest.twins if loaded is not None and loaded.manifest else []
            build_id = loaded.build_id if loaded is not None else None
        else:  # named from the served build while the catalog loads, or without one
            with self.build() as loaded:
                tables, shards, dialects, descriptions, twins = _from_build(loaded)
                build_id = loaded.build_id
        ids = sorted(tables, key=str.lower)
        if pattern:
            wanted = pattern.lower()
            glob = any(ch in wanted for ch in "*?[")
            ids = [
                i
                for i in ids
                if (fnmatch.fnmatchcase(i.lower(), wanted) if glob else wanted in i.lower())
            ]
        twin_of = {m: group.members for group in twins for m in group.members}
        page = ids[offset : offset + limit]
        databases = []
        for db_id in page:
            count = len(tables[db_id]) + shards.get(db_id, 0)
            item: dict[str, Any] = {"db_id": db_id, "tables": count}
            if db_id in dialects:
                item["dialect"] = dialects[db_id]
            item["table_names"] = tables[db_id][:20]
            if descriptions.get(db_id):
                item["description"] = descriptions[db_id]
            if db_id in twin_of:
                item["twins"] = [m for m in twin_of[db_id] if m != db_id]
            databases.append(item)
        answer: dict[str, Any] = {"build": build_id, "total": len(ids), "databases": databases}
        if build_id is None:
            del answer["build"]
            answer["note"] = "the index is still loading: twins are listed once it has loaded"
        if offset + limit < len(ids):
            answer["next_offset"] = offset + limit
        return answer

    def describe_tables(
        self,
        database: str,
        tables: Sequence[str] | None = None,
        question: str = "",
        max_tokens: int | None = None,
    ) -> str:
        """CREATE TABLE text of `tables` of `database` (all when None) and the tables that join
        them, with descriptions, keys, sample rows and the join conditions, cut to `max_tokens`
        the way generation prompts are (`schemarag.mcp.describe`)."""
        db = self._database(database)
        if db.id not in self._samples:
            try:
                config = sample_config(self.describe.sample_rows)
                self._samples[db.id] = prompt_sample(db, config)
            except Exception:  # a file that cannot be sampled still has a schema
                self._samples[db.id] = None
        budget = max_tokens or self.describe.budget_tokens
        return describe(
            db, tables, question, budget, self._samples[db.id], self.describe.sample_rows
        )

    def run_sql(self, database: str, sql: str, max_rows: int = DEFAULT_ROWS) -> dict[str, Any]:
        """Run `sql` (SQLite's SQL; translated for a live server) through the guard of `sql
        run`: one read-only query, read-only connection, deadline, row cap."""
        from generator.errors import NoDataError
        from generator.execution import database_runner
        from schemagraph.sql import Limits, QueryError
        from schemarag.cli.sql import outcome_json

        db = self._database(database)
        if not sql.strip():
            raise EstateError("sql is empty: pass one SELECT query")
        if not runnable(db):
            raise EstateError(
                f"database {db.id!r} ({engine_label(dialect_of(db))}) has no connection here, so "
                "its queries cannot be run; verify the SQL's tables and columns with check_sql"
            )
        limits = Limits(timeout_s=self.timeout_s, max_rows=max_rows, max_value_bytes=2000)
        try:
            outcome = database_runner(db, limits)(sql)
        except NoDataError as exc:
            raise EstateError(str(exc)) from None
        if isinstance(outcome, QueryError):
            rule = f" ({outcome.rule.value})" if outcome.rule else ""
            raise EstateError(f"{outcome.kind.value}{rule}: {outcome.message}")
        answer = outcome_json(outcome)
        answer.pop("ok", None)
        answer["row_count"] = len(answer["rows"])
        answer["database"] = db.id
        return answer

    def check_sql(self, database: str, sql: str) -> dict[str, Any]:
        """`sql` verified against `database`'s catalog (`schemagraph.sql.check`), run nowhere."""
        from schemagraph.sql.check import check_sql

        if not self.has_catalog:
            raise EstateError(
                "the server has no catalog to check SQL against: start it with --source, or "
                "from a store that remembers its sources"
            )
        db = self._database(database)
        if not sql.strip():
            raise EstateError("sql is empty: pass one SELECT query")
        result = check_sql(db, sql, self._loaded_catalog())
        answer = result.as_dict()
        answer["database"] = db.id
        answer["tables"] = [read_name(db, t) for t in answer["tables"]]
        return answer

    def generate_sql(self, question: str, database: str | None = None) -> dict[str, Any]:
        """SQL for `question` from the `ask` pipeline (the configured LLM)."""
        if self.generate is None:
            raise EstateError("no language model is configured (SCHEMARAG_LLM)")
        if not question.strip():
            raise EstateError("question is empty: ask it in words")
        if database is not None:
            database = self._database(database).id
        with self.build() as loaded:
            return self.generate(question, database, loaded)

    # -- helpers ---------------------------------------------------------------------------

    def _database(self, database: str) -> Database:
        catalog = self._loaded_catalog()
        if database in catalog:  # ids are compared case-folded
            return catalog.database(database)
        near = [db.id for db in catalog if database.lower() in db.id.lower()][:5]
        hint = f"; did you mean {', '.join(near)}?" if near else "; see list_databases"
        raise EstateError(f"no database {database!r} in this estate{hint}")

    def _catalog_tables(self) -> dict[str, list[str]]:
        """Each catalog database's table names as its engine writes them (read once: the
        catalog does not change while the server runs)."""
        if self._tables is None:
            self._tables = {
                db.id: [shown_name(db, t.name, quoted=False) for t in db.tables]
                for db in self.catalog or ()
            }
        return self._tables

    def dialects(self) -> dict[str, str]:
        """The dialect of each database, by id: the catalog's, or while it loads the served
        build's manifest's (none without a catalog)."""
        if not self.has_catalog:
            return {}
        if (catalog := self.catalog) is not None:
            return {db.id: sql_dialect(db) for db in catalog}
        return dict(self._known().dialects)

    def runnable(self) -> list[str]:
        """The ids of the databases `run_sql` can query (a SQLite file or a server)."""
        if not self.has_catalog:
            return []
        if (catalog := self.catalog) is not None:
            return [db.id for db in catalog if runnable(db)]
        return list(self._known().runnable)

    def _known(self) -> Manifest:
        """The served build's manifest, or the one read at start."""
        loaded = self.served.current
        if loaded is not None and loaded.manifest is not None:
            return loaded.manifest
        return self.manifest or Manifest.from_json({})


def _from_build(
    loaded: Loaded,
) -> tuple[dict[str, list[str]], dict[str, int], dict[str, str], dict[str, str], list[Twins]]:
    """What `list_databases` says of each database, from the served build alone: its tables
    as the engine names them, the shards a build indexes once, its dialect, its description
    and the twin groups."""
    tables: dict[str, list[str]] = {}
    shards: dict[str, int] = {}
    described: dict[str, list[str]] = {}
    for entry in loaded.retriever.entries:
        tables.setdefault(entry.db_id, []).append(entry.engine_name or entry.table)
        described.setdefault(entry.db_id, []).append(entry.description)
    descriptions = {db_id: _described(texts) for db_id, texts in described.items()}
    manifest = loaded.manifest
    if manifest is None:
        return tables, shards, {}, descriptions, []
    for family in manifest.families:
        shards[family.database] = shards.get(family.database, 0) + family.tables - 1
    return tables, shards, manifest.dialects, descriptions, manifest.twins


def _candidate(named: dict[str, Any], top_tables: int) -> dict[str, Any]:
    """A database of an abstained answer (named as the engine names it): its id, score and
    table names only."""
    item = {"db_id": named["db_id"], "score": named["score"]}
    if "dialect" in named:
        item["dialect"] = named["dialect"]
    item["tables"] = [t["name"] for t in named["tables"][:top_tables]]
    return item


def _described(descriptions: Iterable[str]) -> str:
    """A database's description: its tables' own, joined, cut to 200 characters."""
    return " ".join(d for d in descriptions if d)[:200]


def _database(db: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {
        "db_id": db["db_id"],
        "score": round(db["score"], 3),
        "tables": [_table(t) for t in db["tables"]],
    }
    if db["bridges"]:
        item["bridges"] = [_table(t) for t in db["bridges"]]
    item["chosen_tables"] = db["chosen_tables"]
    return item


def _table(table: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"name": table["name"], "score": round(table["score"], 3)}
    if table["joins"] is not None:
        item["joins"] = table["joins"]
    if table["family"] is not None:
        item["family"] = table["family"]
    return item


def _example(example: dict[str, Any]) -> dict[str, Any]:
    item = {"question": example["question"], "sql": example["sql"], "db_id": example["db_id"]}
    if example["origin"] != "synthetic":
        item["origin"] = example["origin"]
    return item


def generation_pipeline(
    catalog: Catalog, llm: Any
) -> Callable[[str, str | None, Loaded], dict[str, Any]]:
    """`Estate.generate` over `catalog` with `llm`: the `ask` pipeline with its defaults, on the
    served build's retriever, its answer trimmed to what a model uses."""
    from generator import GenerateRequest, Models, generate

    models = Models((llm,))

    def run(question: str, database: str | None, loaded: Loaded) -> dict[str, Any]:
        request = GenerateRequest(question, db_id=database)
        result = generate(request, catalog=catalog, models=models, retriever=loaded.retriever)
        data = result.as_dict()
        answer = {
            "build": loaded.build_id,
            "db_id": data["db_id"],
            "tables": data["tables"],
            "sql": data["sql"],
        }
        if data["refused"]:
            answer["refused"] = data["refused"]
        if data["abstained"]:
            answer["note"] = "no database in the estate seems to fit the question"
        return answer

    return run
