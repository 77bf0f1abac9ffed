"""Index builds: traversals → ICRL synthesis → validation → embeddings → Qdrant, incrementally.

`build_index` plans the build against the served one (`indexer.building.plan`: what to
synthesize, carry over, remove and rewrite; an unchanged catalog is reported up to date at
once, with no provider call), then carries the plan out in steps: synthesize and journal
(`indexer.building.synthesize`), load the collections and write the snapshot
(`indexer.building.load`), report (`indexer.building.report`), and publish the manifest
(`store.manifest`) atomically (`indexer.building.publish`), so readers keep the previous
complete build until then. Work is journaled per batch of traversals, so a killed build resumes
where it stopped.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from indexer.building.config import BuildConfig, BuildServices
from indexer.building.journal import Journal
from indexer.building.load import load_knowledge_base
from indexer.building.plan import (
    BuildPlan,
    plan_build,
    routing_databases,
    synthesis_signature,
    table_signature,
)
from indexer.building.publish import discard, open_journal, publish, settle_pending, start_or_resume
from indexer.building.report import BuildReport
from indexer.building.synthesize import journal_examples, synthesize_traversals
from indexer.errors import BuildError
from indexer.examples.stored import ExampleStore
from schemagraph import (
    Catalog,
    build_graph,
    database_fingerprint,
    enumerate_traversals,
)
from schemagraph.containment import EstateRelations, find_relations
from schemagraph.dialects import runnable, sql_dialect
from schemagraph.families import collapse_families, find_families
from store.location import QUESTIONS, TABLES, StoreLocation, build_lock
from store.manifest import Containment, Family, Manifest, Twins, read_manifest

log = logging.getLogger("indexer.building")  # the name log configurations know


def build_index(
    catalog: Catalog,
    location: StoreLocation,
    services: BuildServices,
    config: BuildConfig | None = None,
    *,
    sources: Sequence[Mapping[str, Any]] = (),
) -> BuildReport:
    """Build (or bring up to date) the knowledge base of `catalog` at `location`, holding the
    store's build lock (a second build on the same store fails at once, naming the holder).
    `sources`: what the catalog was loaded from (`schemagraph.sources.remembered.source_records`),
    recorded in the manifest for `serve`, `mcp` and `ask`; an up-to-date build records them
    too when they changed (the same catalog from a folder that moved)."""
    config = config or BuildConfig()
    if location.embedded and not config.layout.is_default:
        raise BuildError(
            "shards, replicas, on-disk storage and quantization are settings of a Qdrant server "
            "store (--store http://...); an embedded store is one folder per build"
        )
    if not len(catalog):
        raise BuildError("the catalog is empty: nothing to index")
    with build_lock(location):
        return _build(catalog, location, services, config, [dict(s) for s in sources])


def _build(
    catalog: Catalog,
    location: StoreLocation,
    services: BuildServices,
    config: BuildConfig,
    sources: list[dict[str, Any]],
) -> BuildReport:
    started = time.perf_counter()
    timings: dict[str, float] = {}
    # a family of sharded tables is indexed once, as its newest member (schemagraph.families)
    families = [Family.from_json(f.as_dict()) for db in catalog for f in find_families(db)]
    catalog = collapse_families(catalog)
    # twins and containment, found once when a step needs them (the plan's routing keys, the
    # manifest): at 10,000 databases they take seconds
    relations = functools.cache(functools.partial(find_relations, catalog))
    served, plan = _plan(catalog, location, services, config, relations)
    timings["plan"] = time.perf_counter() - started
    for dropped in plan.dropped_examples:
        log.warning("user example %s (%s) left out: %s", dropped.id, dropped.where, dropped.reason)
    if plan.up_to_date and served is not None:
        log.info("catalog unchanged since build %s: nothing to do", plan.base)
        changes: dict[str, Any] = {}
        if sources and served.sources != sources:
            changes["sources"] = sources
        if "related" in served.absent:  # written before the relations were recorded whole
            changes.update(_relations(relations()))
        if changes:
            served.but(**changes).write(location.build_dir(served.build_id))
        seconds = time.perf_counter() - started
        report = BuildReport.up_to_date_of(
            served.build_id, served.report, catalog, len(plan.traversals), seconds
        )
        report.user_examples = len(plan.examples.keyed)
        report.user_examples_stale = len(plan.examples.dropped)
        _add_usage(report, services)
        return report

    build_id = start_or_resume(location, plan.plan_id)
    done = _synthesize_and_load(catalog, location, plan, build_id, services, config, timings)
    report = _report(catalog, plan, build_id, done, services, timings, started)
    manifest = _manifest(
        catalog, location, plan, build_id, done.finished, families, services, config, relations()
    ).but(sources=sources)
    pruned = publish(location, manifest.but(report=report.as_dict()), config.keep_builds)
    if pruned:
        log.info("pruned old builds: %s", ", ".join(pruned))
    return report


def _plan(
    catalog: Catalog,
    location: StoreLocation,
    services: BuildServices,
    config: BuildConfig,
    relations: Callable[[], EstateRelations],
) -> tuple[Manifest | None, BuildPlan]:
    """The served build's manifest (None: none yet) and the plan against it."""
    traversals = enumerate_traversals(build_graph(catalog), config.traversal)
    signature = synthesis_signature(
        services.synthesizer_name,
        services.embedder.name,
        config.chains,
        config.iterations,
        config.seed,
        config.traversal.__dict__,
    )
    settle_pending(location)
    previous = location.current()
    served = read_manifest(location, previous) if previous else None
    plan = plan_build(
        catalog,
        traversals,
        signature,
        served,
        ExampleStore.read(location),
        embedder=services.embedder.name,
        seed=config.seed,
        full=config.full,
        routed=routing_databases(catalog, relations) if config.routing_keys else frozenset(),
    )
    return served, plan


@dataclass(frozen=True)
class _Done:
    """What the synthesis and load steps did: traversals failed, question records in the
    build and removed from the base, the journal's stats and finished keys, and what a resumed
    build found done."""

    failed: int
    questions: int
    removed: int
    stats: list[dict[str, Any]]
    finished: set[str]
    #: of the plan's traversals to synthesize, those an interrupted run of this build had
    #: journaled already (None: not a resumed build)
    resumed: int | None = None


def _synthesize_and_load(
    catalog: Catalog,
    location: StoreLocation,
    plan: BuildPlan,
    build_id: str,
    services: BuildServices,
    config: BuildConfig,
    timings: dict[str, float],
) -> _Done:
    journal = open_journal(location, build_id)
    try:
        resumed = journal.get_meta("plan") is not None  # written by the interrupted run
        journal.set_meta("plan", plan.plan_id)
        journal.set_meta("base", plan.base or "")
        failed, already = _synthesize(
            catalog, plan, journal, services, config, build_id, timings, resumed=resumed
        )
        questions, removed = load_knowledge_base(
            location,
            build_id,
            plan.base,
            plan.remove,
            journal,
            config,
            dim=services.embedder.dim,
            tables_of=(catalog, services.embedder),
            stale=plan.rewrite_documents,
            progress=services.progress,
            timings=timings,
        )
        return _Done(
            failed,
            questions,
            removed,
            list(journal.stats()),
            journal.done_keys(),
            already if resumed else None,
        )
    except Exception:
        # A build that stopped on an error before finishing any traversal has nothing to
        # resume: leave no PENDING behind. (An interrupted or killed build keeps its journal.)
        if not journal.done_keys():
            journal.close()
            discard(location, build_id)
        raise
    finally:
        journal.close()


def _report(
    catalog: Catalog,
    plan: BuildPlan,
    build_id: str,
    done: _Done,
    services: BuildServices,
    timings: dict[str, float],
    started: float,
) -> BuildReport:
    report = BuildReport.from_stats(
        build_id=build_id,
        catalog=catalog,
        traversals=len(plan.traversals),
        synthesized_traversals=len(plan.synthesize) - (done.resumed or 0),
        removed_traversals=len(plan.remove),
        reused_traversals=plan.reused + (done.resumed or 0),
        removed_records=done.removed,
        questions=done.questions,
        stats=done.stats,
        timings=timings,
        seconds=time.perf_counter() - started,
    )
    report.failed_traversals = done.failed
    report.resumed = done.resumed is not None
    report.traversals_resumed = done.resumed or 0
    report.user_examples = len(plan.published_examples(done.finished))
    report.user_examples_added = len(plan.embed_examples)
    report.user_examples_dropped = [d.as_dict() for d in plan.dropped_examples]
    report.user_examples_stale = len(plan.examples.dropped)
    _add_usage(report, services)
    return report


def _synthesize(
    catalog: Catalog,
    plan: BuildPlan,
    journal: Journal,
    services: BuildServices,
    config: BuildConfig,
    build_id: str,
    timings: dict[str, float],
    *,
    resumed: bool = False,
) -> tuple[int, int]:
    """Synthesize (and embed) the plan's traversals and embed its users' examples, into the
    journal, skipping what it holds already; returns how many traversals failed and how many
    the journal held already (`resumed`: an interrupted run of this build journaled them, and
    `services.notify` hears so)."""
    done = journal.done_keys()
    remaining = [k for k in plan.synthesize if k not in done]
    already = len(plan.synthesize) - len(remaining)
    if resumed and services.notify is not None:
        services.notify(
            f"resumed build {build_id}: {already} of {len(plan.synthesize)} traversals already done"
        )
    log.info(
        "build %s: %d traversals to synthesize (%d already journaled), %d reused, %d to remove",
        build_id,
        len(remaining),
        len(plan.synthesize) - len(remaining),
        plan.reused,
        len(plan.remove),
    )
    t0 = time.perf_counter()
    failed = synthesize_traversals(
        catalog,
        plan.traversals,
        remaining,
        len(plan.synthesize),
        journal,
        services,
        config,
        build_id,
        timings,
        routed=plan.routed,
    )
    # synthesis includes validation (every SQL parsed, qualified and run); embedding is apart
    timings["synthesize"] = time.perf_counter() - t0 - timings["embed_questions"]
    if plan.embed_examples:
        t0 = time.perf_counter()
        keys = [k for k in plan.embed_examples if k not in done]
        journal_examples(plan.examples, keys, journal, services.embedder)
        timings["user_examples"] = time.perf_counter() - t0
    return failed, already


def _manifest(
    catalog: Catalog,
    location: StoreLocation,
    plan: BuildPlan,
    build_id: str,
    finished: set[str],
    families: list[Family],
    services: BuildServices,
    config: BuildConfig,
    relations: EstateRelations,
) -> Manifest:
    """The manifest of the loaded build (its report still to be set)."""
    return Manifest(
        build_id=build_id,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        base=plan.base,
        embedder=services.embedder.name,
        dim=services.embedder.dim,
        synthesizer=services.synthesizer_name,
        collections={
            kind: location.collection_name(kind, build_id) for kind in (QUESTIONS, TABLES)
        },
        databases={db.id: database_fingerprint(db) for db in catalog},
        dialects={db.id: sql_dialect(db) for db in catalog},
        runnable=[db.id for db in catalog if runnable(db)],
        families=families,
        traversal_keys=plan.published_traversals(finished),
        examples=plan.published_examples(finished),
        layout=config.layout,
        table_documents=table_signature(config.seed),
        **_relations(relations),
    )


def _relations(relations: EstateRelations) -> dict[str, Any]:
    """The manifest's twins, containment and related databases (the retriever reads them)."""
    return {
        "twins": [Twins.from_json(group.as_dict()) for group in relations.twins],
        "containment": [Containment.from_json(g.as_dict()) for g in relations.containment],
        "related": {db: sorted(others) for db, others in sorted(relations.related.items())},
    }


def _add_usage(report: BuildReport, services: BuildServices) -> None:
    if services.usage is None:
        return
    counters = services.usage()
    report.provider_calls = int(counters.get("provider_calls", 0))
    report.cache_hits = int(counters.get("cache_hits", 0))
    report.usage = dict(counters.get("usage", {}))
