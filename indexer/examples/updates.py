"""Users' own (question, SQL) examples: validated, kept across builds, searchable at once.

    found = read_examples(Path("query_log.jsonl"))
    report = add_examples(catalog, StoreLocation.parse(".schemarag/store"), embedder,
                          found.examples, rejected=found.rejected)
    report.accepted, report.rejected  # Rejected(where="query_log.jsonl:7", reason=...)
    remove_examples(location, sources=[str(Path("query_log.jsonl").resolve())])

`add_examples` validates each pair against the catalog the index was built from (its database
is in the catalog and in the served build; the SQL passes the guard, uses only real tables and
columns, and runs read-only when the database has a SQLite file: `indexer.validate`), records
the valid ones in `STORE/examples.sqlite` (`indexer.examples.stored`) and publishes a new build
holding them. That build synthesizes nothing: it is the served build plus the new examples'
records (embedded with the build's embedder) minus the replaced or removed ones, published
atomically like any build, under the store's build lock, so a server reloads it as after any
build. Later `index build`s keep the examples whose tables did not change
(`indexer.examples.records`). `remove_examples` removes by id or by source and publishes the
build without them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from indexer.building.config import BuildConfig
from indexer.building.journal import Journal
from indexer.building.load import load_knowledge_base
from indexer.building.publish import JOURNAL, discard, open_journal, publish, start_or_resume
from indexer.building.synthesize import journal_examples
from indexer.errors import IndexerError
from indexer.examples.files import Rejected, UserExample
from indexer.examples.records import ExamplePlan, example_key
from indexer.examples.stored import ExampleStore, StoredExample
from indexer.validate import validate_sql
from providers import Embedder
from schemagraph import Catalog, table_fingerprint
from schemagraph.model import fold
from store.errors import StoreError
from store.location import QUESTIONS, TABLES, StoreLocation, build_lock
from store.manifest import Manifest, read_manifest

log = logging.getLogger("indexer.user_examples")  # the name log configurations know


@dataclass(frozen=True)
class ExamplesReport:
    """What `add_examples` or `remove_examples` did. `accepted`: validated and now in the
    served build (new, or re-validated against a changed table); `unchanged`: already there as
    they are; `rejected`: each with where it was and why; `removed`: examples removed; `total`:
    examples the store keeps; `in_build`: those in the served build (the others wait for
    their tables, see `indexer.examples.records`)."""

    build_id: str | None
    accepted: tuple[str, ...] = ()
    unchanged: int = 0
    rejected: tuple[Rejected, ...] = ()
    removed: tuple[str, ...] = ()
    total: int = 0
    in_build: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "build_id": self.build_id,
            "accepted": len(self.accepted),
            "accepted_ids": list(self.accepted),
            "unchanged": self.unchanged,
            "rejected": [asdict(r) for r in self.rejected],
            "removed": len(self.removed),
            "removed_ids": list(self.removed),
            "total": self.total,
            "in_build": self.in_build,
            "seconds": self.seconds,
            "timings": dict(self.timings),
        }

    def lines(self) -> list[str]:
        out = [f"rejected {r.text()}" for r in self.rejected]
        done = []
        if self.accepted or self.unchanged or self.rejected:
            done.append(
                f"{len(self.accepted)} accepted, {self.unchanged} already present, "
                f"{len(self.rejected)} rejected"
            )
        if self.removed:
            done.append(f"{len(self.removed)} removed")
        out.append(
            f"users' examples: {'; '.join(done) or 'nothing to do'}; {self.total} kept, "
            f"{self.in_build} in build {self.build_id} ({self.seconds:.1f} s)"
        )
        return out


def validate_examples(
    catalog: Catalog,
    examples: Iterable[UserExample],
    *,
    served: Collection[str] | None = None,
    execute_sql: bool = True,
    timeout_s: float = 2.0,
) -> tuple[list[StoredExample], list[Rejected]]:
    """The valid `examples` (with their tables and those tables' fingerprints) and the others
    with the reason. `served`: the database ids of the served build (None: not checked)."""
    served_keys = None if served is None else {fold(d) for d in served}
    accepted: list[StoredExample] = []
    rejected: list[Rejected] = []
    first: dict[str, str] = {}
    for example in examples:
        key = example.id
        if key in first:
            reason = f"the same pair as {first[key]}"
            rejected.append(Rejected(example.where, reason, key, example.line))
            continue
        first[key] = example.where
        if example.db_id not in catalog:
            reason = (
                f"database {example.db_id!r} is not in the catalog; pass the source that holds it"
            )
            rejected.append(Rejected(example.where, reason, key, example.line))
            continue
        db = catalog.database(example.db_id)
        if served_keys is not None and fold(db.id) not in served_keys:
            reason = (
                f"database {db.id!r} is not in the served build; build it first "
                "(`schemarag index build` with its source)"
            )
            rejected.append(Rejected(example.where, reason, key, example.line))
            continue
        check = validate_sql(db, example.sql, execute_sql=execute_sql, timeout_s=timeout_s)
        if not check.ok:
            rejected.append(Rejected(example.where, check.reason, key, example.line))
            continue
        accepted.append(
            StoredExample(
                id=key,
                question=example.question,
                sql=example.sql,
                db_id=db.id,
                tables=check.tables,
                fingerprints=tuple((t, table_fingerprint(db.table(t))) for t in check.tables),
                source=example.source,
                line=example.line,
            )
        )
    return accepted, rejected


def add_examples(
    catalog: Catalog,
    location: StoreLocation,
    embedder: Embedder,
    examples: Iterable[UserExample],
    *,
    rejected: Sequence[Rejected] = (),
    execute_sql: bool = True,
    timeout_s: float = 2.0,
) -> ExamplesReport:
    """Validate `examples` against `catalog` and make the valid ones knowledge-base records of
    the store at `location` (see the module docstring). `embedder` must be the served build's.
    `rejected`: rows already refused while reading (reported with the others)."""
    started = time.perf_counter()
    with build_lock(location):
        current, manifest = _served(location)
        _refuse_pending_build(location)
        built_with = manifest.embedder
        if built_with and built_with != embedder.name:
            raise StoreError(
                f"{_where(location)}: the index was built with embedder {built_with!r}, not "
                f"{embedder.name!r}; add examples with the build's embedder"
            )
        t0 = time.perf_counter()
        accepted, refused = validate_examples(
            catalog,
            examples,
            served=list(manifest.databases),
            execute_sql=execute_sql,
            timeout_s=timeout_s,
        )
        validated = time.perf_counter() - t0
        with ExampleStore.of(location) as store:
            store.put(accepted)
            total = store.count()
        t0 = time.perf_counter()
        build_id, in_build, added = _publish(location, current, manifest, embedder, accepted, ())
    return ExamplesReport(
        build_id=build_id,
        accepted=tuple(added),
        unchanged=len(accepted) - len(added),
        rejected=tuple(sorted((*rejected, *refused), key=lambda r: (r.line is None, r.line or 0))),
        total=total,
        in_build=in_build,
        seconds=round(time.perf_counter() - started, 3),
        timings={"validate": round(validated, 3), "publish": round(time.perf_counter() - t0, 3)},
    )


def remove_examples(
    location: StoreLocation, *, ids: Collection[str] = (), sources: Collection[str] = ()
) -> ExamplesReport:
    """Remove the examples `ids` and those that came from `sources` (a file's absolute path, or
    a label such as `http`), and publish the build without them. Naming none that exists is an
    error."""
    started = time.perf_counter()
    if not ids and not sources:
        raise IndexerError("name the examples to remove: an id or a file")
    with build_lock(location):
        _refuse_pending_build(location)
        with ExampleStore.of(location) as store:
            targets = store.known(ids)
            for source in sources:
                targets += store.ids_of_source(source)
            targets = list(dict.fromkeys(targets))
            if not targets:
                named = ", ".join([*ids, *sources])
                raise IndexerError(
                    f"{_where(location)}: no user example matches {named}; "
                    "`schemarag index examples` lists them with their ids and files"
                )
            store.delete(targets)
            total = store.count()
        current = location.current()
        build_id, in_build = current, 0
        if current is not None:
            manifest = read_manifest(location, current)
            build_id, in_build, _ = _publish(location, current, manifest, None, (), targets)
    return ExamplesReport(
        build_id=build_id,
        removed=tuple(targets),
        total=total,
        in_build=in_build,
        seconds=round(time.perf_counter() - started, 3),
    )


EXAMPLES_ONLY = "examples"


def _refuse_pending_build(location: StoreLocation) -> None:
    """An interrupted `index build` holds journaled work that the next build resumes: starting
    another build here would discard it. (An interrupted examples-only build is cheap to redo
    and is discarded.)"""
    pending = location.pending()
    path = location.build_dir(pending) / JOURNAL if pending else None
    if path is None or not path.exists():
        return
    journal = Journal(path)
    try:
        kind = journal.get_meta("kind")
    finally:
        journal.close()
    if kind != EXAMPLES_ONLY:
        raise StoreError(
            f"{_where(location)}: build {pending} was interrupted and is pending; finish it "
            "with `schemarag index build` (it resumes), then add or remove the examples"
        )


def _where(location: StoreLocation) -> str:
    return location.where


def _served(location: StoreLocation) -> tuple[str, Manifest]:
    current = location.current()
    if current is None:
        where = _where(location)
        raise StoreError(
            f"{where}: no build to add examples to; run `schemarag index build SOURCE... "
            f"--store {where}` first"
        )
    return current, read_manifest(location, current)


def _changes(
    manifest: Manifest, add: Sequence[StoredExample], remove_ids: Collection[str]
) -> tuple[dict[str, StoredExample], list[str]]:
    """What publishing `add` and removing `remove_ids` changes in the build of `manifest`: the
    records to add (by record key) and the record keys to remove (replaced or removed)."""
    held = manifest.examples
    todo: dict[str, StoredExample] = {}
    gone: list[str] = []
    for example in add:
        key = example_key(example, manifest.embedder)
        if held.get(example.id) == key:
            continue
        if example.id in held:
            gone.append(held[example.id])
        todo[key] = example
    gone += [held[i] for i in remove_ids if i in held]
    return todo, gone


def _publish(
    location: StoreLocation,
    current: str,
    manifest: Manifest,
    embedder: Embedder | None,
    add: Sequence[StoredExample],
    remove_ids: Collection[str],
) -> tuple[str, int, list[str]]:
    """Publish the served build plus `add` minus `remove_ids` (nothing when that changes
    nothing): (the served build id, user examples in it, ids of the examples added)."""
    todo, gone = _changes(manifest, add, remove_ids)
    if not todo and not gone:
        return current, len(manifest.examples), []
    assert embedder is not None or not todo
    order = sorted(todo)
    plan = hashlib.sha256(json.dumps([current, order, sorted(gone)]).encode()).hexdigest()[:8]
    _refuse_pending_build(location)
    build_id = start_or_resume(location, plan)
    journal = open_journal(location, build_id)
    config = BuildConfig(layout=manifest.layout)
    try:
        journal.set_meta("plan", plan)
        journal.set_meta("kind", EXAMPLES_ONLY)
        journal.set_meta("base", current)
        if embedder is not None:
            done = journal.done_keys()
            keys = [k for k in order if k not in done]
            journal_examples(ExamplePlan(todo, ()), keys, journal, embedder)
        questions, _ = load_knowledge_base(
            location, build_id, current, gone, journal, config, dim=manifest.dim, tables_of=None
        )
    except Exception:
        journal.close()
        discard(location, build_id)
        raise
    finally:
        journal.close()
    removed = set(gone)
    held = {i: k for i, k in manifest.examples.items() if k not in removed}
    held.update({e.id: k for k, e in todo.items()})
    report = {**manifest.report, "build_id": build_id, "questions": questions}
    report["user_examples"] = len(held)
    built = manifest.but(
        build_id=build_id,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        base=current,
        collections={k: location.collection_name(k, build_id) for k in (QUESTIONS, TABLES)},
        examples=held,
        report=report,
    )
    publish(location, built, config.keep_builds)
    log.info("build %s: %d user examples added, %d records removed", build_id, len(todo), len(gone))
    return build_id, len(held), [e.id for e in todo.values()]
