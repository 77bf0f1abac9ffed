"""Index builds end to end on the bundled sample: contract, idempotence, incremental updates,
resume after an interrupted or killed build, the atomic switch, and provider-call caching."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlglot

from indexer import (
    BuildConfig,
    BuildError,
    BuildServices,
    build_index,
    index_status,
    make_chain_runner,
    make_feedback,
    make_synthesizer,
    validate_sql,
)
from indexer.building import plan as build_plan
from indexer.building.load import chunk_size
from indexer.building.metered import CallCounter, CountingEmbedder, CountingLLM
from indexer.building.synthesize import indexed_text
from indexer.synthesis.faithful import UNSAID
from indexer.synthesis.pairs import QAPair, SynthesisRequest
from providers import (
    CachedEmbedder,
    CachedLLM,
    HashingEmbedder,
    LLMRequest,
    ProviderCache,
    ScriptedLLM,
)
from retriever import Retriever
from schemagraph import Catalog, Database, DatabaseSample, Traversal, TraversalConfig, load_catalog
from store import StoreLocation
from store.records import ROUTING, SYNTHETIC
from store.snapshot import QUESTION_FIELDS
from store.table_documents import DOCUMENT_VERSION
from tests.store_points import build_points

CONFIG = BuildConfig(traversal=TraversalConfig(max_per_database=6, walks=1), chains=2, iterations=1)


def template_services(counter: CallCounter | None = None, runner: Any = None) -> BuildServices:
    embedder = HashingEmbedder(256)
    return BuildServices(
        synthesize=runner
        or make_chain_runner(
            make_synthesizer("template", None), make_feedback("rule", None), chains=2, iterations=1
        ),
        synthesizer_name="template",
        embedder=CountingEmbedder(embedder, counter or CallCounter()),
    )


def points(location: StoreLocation) -> dict[str, dict[str, Any]]:
    build = location.current()
    assert build is not None
    return {str(p.id): p.payload or {} for p in build_points(location.build_dir(build))}


@pytest.fixture
def catalog(sample_dir: Path) -> Catalog:
    return load_catalog([f"spider:{sample_dir}"])


def test_full_build_report_contract_and_valid_records(catalog: Catalog, tmp_path: Path) -> None:
    location = StoreLocation.parse(tmp_path / "kb")
    report = build_index(catalog, location, template_services(), CONFIG).as_dict()
    for key in (
        "databases",
        "tables",
        "traversals",
        "questions",
        "synthesized",
        "removed",
        "dropped",
        "reward_mean_initial",
        "reward_mean_final",
        "provider_calls",
        "cache_hits",
        "seconds",
    ):
        assert key in report
    assert (report["databases"], report["tables"]) == (8, 53)
    stored = points(location)
    assert report["questions"] == len(stored) > 100
    assert report["reward_mean_final"] > report["reward_mean_initial"]
    steps = report["reward_by_iteration"]  # CONFIG: 1 ICRL iteration after the initial attempt
    assert [s["iteration"] for s in steps] == [0, 1]
    assert steps[0]["kept_reward_mean"] == pytest.approx(report["reward_mean_initial"], abs=1e-3)
    assert steps[1]["kept_reward_mean"] == pytest.approx(report["reward_mean_final"], abs=1e-3)
    assert steps[0]["attempts"] >= steps[1]["attempts"] > 0  # chains may stop early
    assert steps[0]["valid_share"] == 1.0  # the template writes valid SQL
    for payload in list(stored.values())[:60]:
        db = catalog.database(payload["db_id"])
        check = validate_sql(db, payload["sql"])
        assert check.ok, (payload["sql"], check.reason)
        assert list(check.tables) == payload["tables"]
        assert set(payload["tables"]) <= set(payload["traversal_tables"])
        assert payload["question"] and not payload["question"].lower().startswith("select")
    status = index_status(location)
    assert status["build_id"] == location.current() and status["questions"] == len(stored)


def test_every_stage_reports_progress_and_its_seconds(catalog: Catalog, tmp_path: Path) -> None:
    heard: list[tuple[str, int, int]] = []
    services = template_services()
    services.progress = lambda stage, done, total: heard.append((stage, done, total))
    report = build_index(catalog, StoreLocation.parse(tmp_path / "kb"), services, CONFIG)
    by_stage: dict[str, list[tuple[int, int]]] = {}
    for stage, done, total in heard:
        by_stage.setdefault(stage, []).append((done, total))
    assert list(by_stage) == ["synthesize", "load", "tables"]
    ends = {stage: seen[-1] for stage, seen in by_stage.items()}
    assert ends["synthesize"] == (report.traversals, report.traversals)
    assert ends["load"] == (report.questions, report.questions)
    assert ends["tables"] == (report.tables, report.tables)
    for seen in by_stage.values():
        assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    stages = {"plan", "synthesize", "embed_questions", "load_questions", "load_tables"}
    assert stages <= report.timings.keys()
    assert all(report.timings[k] >= 0 for k in stages)
    assert sum(report.timings[k] for k in stages) <= report.seconds + 0.01


def test_rebuilding_an_unchanged_catalog_is_instant_and_calls_no_provider(
    catalog: Catalog, tmp_path: Path
) -> None:
    location = StoreLocation.parse(tmp_path / "kb")
    build_index(catalog, location, template_services(), CONFIG)
    first = location.current()
    counter = CallCounter()
    report = build_index(catalog, location, template_services(counter), CONFIG)
    assert report.up_to_date and counter.calls == 0
    assert location.current() == first


def test_pairs_of_an_older_version_are_synthesized_again(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = StoreLocation.parse(tmp_path / "kb")
    first = build_index(catalog, location, template_services(), CONFIG)
    monkeypatch.setattr(build_plan, "PAIRS_VERSION", build_plan.PAIRS_VERSION + 1)

    report = build_index(catalog, location, template_services(), CONFIG)

    assert not report.up_to_date
    assert report.traversals_synthesized == first.traversals_synthesized > 0
    assert build_index(catalog, location, template_services(), CONFIG).up_to_date


def test_table_documents_of_an_older_version_are_rewritten_and_the_questions_kept(
    catalog: Catalog, tmp_path: Path
) -> None:
    location = StoreLocation.parse(tmp_path / "kb")
    build_index(catalog, location, template_services(), CONFIG)
    first = location.current()
    assert first is not None
    path = location.build_dir(first) / "manifest.json"
    manifest = json.loads(path.read_text())
    assert manifest["table_documents"] == {"seed": CONFIG.seed, "version": DOCUMENT_VERSION}
    manifest["table_documents"] = {"seed": CONFIG.seed}  # as builds before version 2 wrote it
    path.write_text(json.dumps(manifest))
    before = points(location)

    report = build_index(catalog, location, template_services(), CONFIG)
    assert not report.up_to_date and report.traversals_synthesized == 0
    now = location.current()
    assert now != first
    assert location.manifest(now)["table_documents"]["version"] == DOCUMENT_VERSION
    assert points(location) == before
    assert build_index(catalog, location, template_services(), CONFIG).up_to_date


def test_point_ids_are_deterministic(catalog: Catalog, tmp_path: Path) -> None:
    a, b = StoreLocation.parse(tmp_path / "a"), StoreLocation.parse(tmp_path / "b")
    build_index(catalog, a, template_services(), CONFIG)
    build_index(catalog, b, template_services(), CONFIG)
    assert points(a).keys() == points(b).keys()


def test_offline_synthesis_in_processes_gives_the_same_knowledge_base(
    catalog: Catalog, tmp_path: Path
) -> None:
    inner = template_services().synthesize

    def tagged(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        if db.id == "pets_1" and t.tables == ("Pets",):
            raise RuntimeError("provider hiccup")
        return [{**rec, "pid": os.getpid()} for rec in inner(db, t, s, seed)]

    def build(name: str, processes: int) -> tuple[Any, dict[str, dict[str, Any]]]:
        location = StoreLocation.parse(tmp_path / name)
        services = template_services(runner=tagged)
        services.offline = True
        config = BuildConfig(
            traversal=CONFIG.traversal,
            chains=2,
            iterations=1,
            processes=processes,
            batch_traversals=3,
        )
        return build_index(catalog, location, services, config), points(location)

    one_report, one = build("one", 0)
    two_report, two = build("two", 2)
    assert {p["pid"] for p in one.values()} == {os.getpid()}
    assert os.getpid() not in {p["pid"] for p in two.values()}
    drop = ("pid", "build_id")
    assert {k: {f: v for f, v in p.items() if f not in drop} for k, p in one.items()} == {
        k: {f: v for f, v in p.items() if f not in drop} for k, p in two.items()
    }
    assert one_report.failed_traversals == two_report.failed_traversals == 1
    assert one_report.questions == two_report.questions > 0


def test_synthesis_processes_need_offline_synthesis(catalog: Catalog, tmp_path: Path) -> None:
    config = BuildConfig(traversal=CONFIG.traversal, chains=2, iterations=1, processes=1)
    with pytest.raises(BuildError, match="offline synthesis"):
        build_index(catalog, StoreLocation.parse(tmp_path / "kb"), template_services(), config)
    with pytest.raises(BuildError, match="processes must be >= 0"):
        BuildConfig(processes=-1)


def test_changing_one_table_resynthesizes_only_its_traversals(
    sample_copy: Path, tmp_path: Path
) -> None:
    source = f"sqlite:{sample_copy / 'database'}"
    location = StoreLocation.parse(tmp_path / "kb")
    build_index(load_catalog([source]), location, template_services(), CONFIG)
    before = points(location)
    with sqlite3.connect(sample_copy / "database" / "pets_1" / "pets_1.sqlite") as conn:
        conn.execute("ALTER TABLE Pets ADD COLUMN color TEXT")
    calls: list[tuple[str, tuple[str, ...]]] = []
    inner = template_services().synthesize

    def spy(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        calls.append((db.id, t.tables))
        return inner(db, t, s, seed)

    report = build_index(load_catalog([source]), location, template_services(runner=spy), CONFIG)
    assert calls and all(db == "pets_1" and "Pets" in tables for db, tables in calls)
    assert report.traversals_synthesized == len(calls) == report.traversals_removed
    after = points(location)
    untouched = {k for k, p in before.items() if "Pets" not in p["traversal_tables"]}
    assert untouched <= after.keys()
    gone = {k for k, p in before.items() if "Pets" in p["traversal_tables"]} - after.keys()
    assert report.removed >= len(gone) > 0


class Interrupt(BaseException):
    """Stands for a crash: not an Exception, so nothing in the build catches it."""


def test_interrupted_build_resumes_without_duplicates_and_readers_keep_the_old_build(
    sample_copy: Path, tmp_path: Path
) -> None:
    source = f"sqlite:{sample_copy / 'database'}"
    location = StoreLocation.parse(tmp_path / "kb")
    config = BuildConfig(
        traversal=CONFIG.traversal, chains=2, iterations=1, batch_traversals=8, concurrency=1
    )
    # a first complete build, then a change big enough to need several batches
    build_index(load_catalog([source]), location, template_services(), config)
    served = location.current()
    served_points = points(location)
    (sample_copy / "database" / "car_1" / "car_1.sqlite").unlink()
    for db in ("dog_kennels", "department_store", "student_transcripts_tracking"):
        with sqlite3.connect(sample_copy / "database" / db / f"{db}.sqlite") as conn:
            for (table,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table'"
            ).fetchall():
                conn.execute(f'ALTER TABLE "{table}" ADD COLUMN note TEXT')
    inner = template_services().synthesize
    seen: list[str] = []

    def crashing(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        if len(seen) == 20:
            raise Interrupt()
        seen.append(t.id)
        return inner(db, t, s, seed)

    with pytest.raises(Interrupt):
        build_index(load_catalog([source]), location, template_services(runner=crashing), config)
    assert location.current() == served and location.pending() is not None
    assert points(location) == served_points  # readers still see the whole previous build

    resumed: list[str] = []

    def counting(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        resumed.append(t.id)
        return inner(db, t, s, seed)

    report = build_index(
        load_catalog([source]), location, template_services(runner=counting), config
    )
    assert location.pending() is None and location.current() != served
    # the chunks journaled before the crash (20 traversals in) count as reused, not synthesized
    size = chunk_size(report.traversals_synthesized + report.traversals_resumed, 8)
    journaled = 20 // size * size
    assert report.resumed and report.traversals_resumed == journaled > 0
    assert report.traversals_synthesized == len(resumed)
    assert not set(resumed) & set(seen[:journaled])
    assert f"(resumed: {journaled} of {journaled + len(resumed)} traversals" in report.lines()[0]

    clean = StoreLocation.parse(tmp_path / "clean")
    build_index(load_catalog([source]), clean, template_services(), config)
    assert points(location).keys() == points(clean).keys()


def test_killed_build_resumes(sample_copy: Path, tmp_path: Path) -> None:
    store = tmp_path / "kb"
    script = f"""
import time, sys
from indexer import *
from store import StoreLocation
from indexer.building.config import BuildServices
from providers import HashingEmbedder
from schemagraph import load_catalog, TraversalConfig
inner = make_chain_runner(make_synthesizer("template", None), make_feedback("rule", None),
                          chains=2, iterations=1)
def slow(db, t, s, seed):
    time.sleep(0.05)
    return inner(db, t, s, seed)
config = BuildConfig(traversal=TraversalConfig(max_per_database=6, walks=1), chains=2,
                     iterations=1, batch_traversals=4, concurrency=1)
build_index(load_catalog([{f"spider:{sample_copy}"!r}]), StoreLocation.parse({str(store)!r}),
            BuildServices(slow, "template", HashingEmbedder(256)), config)
"""
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    journal = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        journals = list(store.glob("builds/*/journal.sqlite"))
        if journals:
            journal = journals[0]
            try:
                with sqlite3.connect(journal) as conn:
                    if conn.execute("SELECT COUNT(*) FROM done").fetchone()[0] >= 8:
                        break
            except sqlite3.Error:
                pass
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert journal is not None, proc.stderr.read() if proc.stderr else ""
    location = StoreLocation.parse(store)
    assert location.current() is None and location.pending() is not None
    counter: list[str] = []
    inner = template_services().synthesize

    def counting(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        counter.append(t.id)
        return inner(db, t, s, seed)

    config = BuildConfig(
        traversal=CONFIG.traversal, chains=2, iterations=1, batch_traversals=4, concurrency=1
    )
    catalog = load_catalog([f"spider:{sample_copy}"])
    report = build_index(catalog, location, template_services(runner=counting), config)
    assert report.resumed and report.traversals_resumed >= 8
    assert report.traversals_synthesized == len(counter)
    assert report.traversals_reused == report.traversals_resumed  # a first build: no base
    clean = StoreLocation.parse(tmp_path / "clean")
    build_index(catalog, clean, template_services(), config)
    assert points(location).keys() == points(clean).keys()


def test_a_failing_traversal_is_reported_and_retried_next_build(
    catalog: Catalog, tmp_path: Path
) -> None:
    location = StoreLocation.parse(tmp_path / "kb")
    inner = template_services().synthesize

    def flaky(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        if db.id == "pets_1" and t.tables == ("Pets",):
            raise RuntimeError("provider hiccup")
        return inner(db, t, s, seed)

    report = build_index(catalog, location, template_services(runner=flaky), CONFIG)
    assert report.failed_traversals == 1
    retried: list[tuple[str, ...]] = []

    def spy(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        retried.append(t.tables)
        return inner(db, t, s, seed)

    build_index(catalog, location, template_services(runner=spy), CONFIG)
    assert retried == [("Pets",)]


def test_llm_build_reruns_from_the_cache_with_zero_provider_calls(
    catalog: Catalog, tmp_path: Path
) -> None:
    def reply(request: LLMRequest) -> str:
        text = request.system + "\n".join(m.content for m in request.messages)
        table = re.search(r"CREATE TABLE (\w+)", text)
        assert table is not None
        return json.dumps(
            [
                {
                    "question": f"How many {table[1]} are there?",
                    "sql": f"SELECT count(*) FROM {table[1]}",
                }
            ]
        )

    def services(cache: ProviderCache, counter: CallCounter) -> BuildServices:
        llm = CachedLLM(CountingLLM(ScriptedLLM(reply), counter), cache)
        runner = make_chain_runner(
            make_synthesizer("anthropic:x", llm),
            make_feedback("rule", None),
            chains=1,
            iterations=1,
        )
        embedder = CachedEmbedder(CountingEmbedder(HashingEmbedder(64), counter), cache)
        return BuildServices(runner, llm.name, embedder)

    small = Catalog((catalog.database("pets_1"), catalog.database("concert_singer")))
    with ProviderCache(tmp_path / "cache.sqlite") as cache:
        first = CallCounter()
        report = build_index(
            small, StoreLocation.parse(tmp_path / "a"), services(cache, first), CONFIG
        )
        assert first.calls > 0 and report.questions > 0
        again = CallCounter()
        build_index(small, StoreLocation.parse(tmp_path / "b"), services(cache, again), CONFIG)
        assert again.calls == 0


def test_an_embedded_build_is_read_from_its_snapshot_without_opening_qdrant(
    catalog: Catalog, tmp_path: Path
) -> None:
    """The build writes its collections as flat files (`store.snapshot`); a reader loads
    those, never the Qdrant folder, and finds what Qdrant's own search finds."""
    import shutil

    from retriever import KnowledgeBase

    location = StoreLocation.parse(tmp_path / "kb")
    report = build_index(catalog, location, template_services(), CONFIG)
    build = location.build_dir(location.current() or "")
    assert (build / "snapshot" / "questions.npy").is_file()
    fast = KnowledgeBase.open(location)
    slow = KnowledgeBase.open(location, in_memory=False)
    try:
        assert fast.client is None and fast.question_count() == report.questions
        assert slow.client is not None
        fast_entries, fast_vectors = fast.table_entries()
        slow_entries, slow_vectors = slow.table_entries()
        assert fast_entries == slow_entries
        np.testing.assert_allclose(fast_vectors, slow_vectors, atol=1e-6)
        embedder = HashingEmbedder(256)
        for question in ("How many pets are older than 3?", "singers from France"):
            vector = embedder.embed_query(question)
            ours, theirs = fast.search_questions(vector, 8), slow.search_questions(vector, 8)
            assert [(h.db_id, h.question) for h in ours] == [(h.db_id, h.question) for h in theirs]
            np.testing.assert_allclose(
                [h.score for h in ours], [h.score for h in theirs], atol=1e-5
            )
    finally:
        fast.close()
        slow.close()
    shutil.rmtree(build / "snapshot")  # a build from before snapshots: read through Qdrant
    older = KnowledgeBase.open(location)
    try:
        assert older.in_memory and older.question_count() == report.questions
    finally:
        older.close()


def snapshot_rows(build: Path, name: str) -> dict[str, tuple[dict[str, Any], np.ndarray]]:
    """A snapshot's rows by point id (questions: from its keys file) or by table."""
    vectors = np.load(build / "snapshot" / f"{name}.npy")
    payloads = [json.loads(line) for line in (build / "snapshot" / f"{name}.jsonl").open()]
    if name == "tables":
        ids = [f"{p['db_id']}.{p['table']}" for p in payloads]
    else:
        ids = (build / "snapshot" / f"{name}.keys").read_text().splitlines()
    assert len(ids) == len(set(ids)) == len(payloads) == len(vectors)
    return {i: (p, v) for i, p, v in zip(ids, payloads, vectors, strict=True)}


def collection_rows(build: Path, name: str) -> dict[str, tuple[dict[str, Any], np.ndarray]]:
    """The same rows read from the build's Qdrant collection."""
    rows = {}
    for p in build_points(build, name, vectors=True):
        payload = p.payload or {}
        vector = np.asarray(p.vector, dtype=np.float32)
        vector /= np.linalg.norm(vector)
        if name == "tables":
            rows[f"{payload['db_id']}.{payload['table']}"] = (payload, vector)
        else:
            fields = {f: payload[f] for f in QUESTION_FIELDS if f in payload}
            rows[f"{p.id}\t{payload['traversal_key']}"] = (fields, vector)
    return rows


def assert_same_rows(build: Path) -> None:
    for name in ("questions", "tables"):
        ours, theirs = snapshot_rows(build, name), collection_rows(build, name)
        assert ours.keys() == theirs.keys()
        for key, (payload, vector) in ours.items():
            assert payload == theirs[key][0]
            np.testing.assert_allclose(vector, theirs[key][1], atol=1e-6)


def test_an_incremental_snapshot_is_derived_and_equals_the_collections(
    sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build writes its snapshot from the base snapshot, the journal and the new table
    documents, never by reading Qdrant back; it holds exactly what the collections hold, after
    a change, a removed database, and from a base snapshot written without keys. Only changed
    databases are sampled again for their table documents."""
    import shutil

    import indexer.building.load
    import indexer.building.synthesize

    sampled: set[str] = set()
    sample = indexer.building.load.sample_database

    def spy(db: Database, **options: Any) -> DatabaseSample | None:
        sampled.add(db.id)
        return sample(db, **options)

    for step in (indexer.building.load, indexer.building.synthesize):
        monkeypatch.setattr(step, "sample_database", spy)
    source = f"sqlite:{sample_copy / 'database'}"
    location = StoreLocation.parse(tmp_path / "kb")
    build_index(load_catalog([source]), location, template_services(), CONFIG)
    assert_same_rows(location.build_dir(location.current() or ""))
    assert len(sampled) == 8
    with sqlite3.connect(sample_copy / "database" / "pets_1" / "pets_1.sqlite") as conn:
        conn.execute("ALTER TABLE Pets ADD COLUMN color TEXT")
    sampled.clear()
    report = build_index(load_catalog([source]), location, template_services(), CONFIG)
    assert report.removed > 0 and report.traversals_synthesized > 0
    assert sampled == {"pets_1"}
    build = location.build_dir(location.current() or "")
    assert_same_rows(build)
    assert "color" in snapshot_rows(build, "tables")["pets_1.Pets"][0]["columns"]
    (build / "snapshot" / "questions.keys").unlink()  # as written before snapshots kept keys
    (build / "snapshot" / "tables.keys").unlink()
    shutil.rmtree(sample_copy / "database" / "concert_singer")
    sampled.clear()
    report = build_index(load_catalog([source]), location, template_services(), CONFIG)
    assert report.traversals_removed > 0 and not sampled
    newest = location.build_dir(location.current() or "")
    assert_same_rows(newest)
    for name in ("questions", "tables"):  # read back, keyed again for the next build
        assert (newest / "snapshot" / f"{name}.keys").is_file()
    assert {p["db_id"] for p, _ in snapshot_rows(newest, "tables").values()} == {
        db.id for db in load_catalog([source])
    }


@dataclass(frozen=True)
class _HalfSaid:
    """Counts a traversal's first table's rows; for every other traversal, the question leaves
    out the query's filter."""

    name: str = "half-said"

    def synthesize(self, request: SynthesisRequest) -> list[QAPair]:
        table = request.db.table(request.traversal.tables[0])
        column = table.columns[-1].name
        sql = f'SELECT COUNT(*) FROM "{table.name}"'
        if int(hashlib.sha256(request.traversal.id.encode()).hexdigest(), 16) % 2:
            return [QAPair(f"How many rows does {table.name} have?", f'{sql} WHERE "{column}" > 3')]
        return [QAPair(f"How many rows does {table.name} have?", sql)]


def test_pairs_whose_question_leaves_out_their_sql_are_dropped_and_counted(
    catalog: Catalog, tmp_path: Path
) -> None:
    runner = make_chain_runner(_HalfSaid(), make_feedback("rule", None), chains=1, iterations=0)
    location = StoreLocation.parse(tmp_path / "kb")
    report = build_index(catalog, location, template_services(runner=runner), CONFIG)
    assert report.dropped_unsaid > 0 and report.questions > 0
    assert report.drop_reasons[UNSAID] == report.dropped_unsaid <= report.dropped
    assert report.as_dict()["dropped_unsaid"] == report.dropped_unsaid
    line = f"{report.dropped_unsaid} pairs dropped: question does not say what the SQL does"
    assert any(line in text for text in report.lines())
    stored = points(location)
    assert len(stored) == report.questions
    assert all(" WHERE " not in payload["sql"] for payload in stored.values())


def test_a_warehouse_question_is_embedded_with_its_tables_words(
    fixtures: Path, tmp_path: Path
) -> None:
    """A readable warehouse question leaves out its dataset and table; the build embeds it
    with their words and stores it as written. A SQLite question is embedded as written."""
    folder = fixtures / "warehouse"
    warehouse = load_catalog([f"infoschema:{folder / 'bigquery'}"])
    location = StoreLocation.parse(str(tmp_path / "kb"))
    build_index(warehouse, location, template_services(), CONFIG)
    build = location.current()
    assert build is not None
    found = build_points(location.build_dir(build), vectors=True)
    assert found
    db = warehouse.databases[0]
    embedder = HashingEmbedder(256)
    for point in found:
        payload = point.payload or {}
        text = indexed_text(db, payload)
        assert text.startswith(payload["question"] + " (") and text != payload["question"]
        assert np.allclose(point.vector, embedder.embed_documents([text])[0], atol=1e-5)
    sqlite = Database("s", (db.tables[0],))
    assert indexed_text(sqlite, {"question": "q?", "tables": [db.tables[0].name]}) == "q?"


def test_a_warehouse_gets_routing_keys_that_vote_and_are_never_shown(
    fixtures: Path, sample_dir: Path, tmp_path: Path
) -> None:
    """With `routing_keys`, each warehouse traversal's pairs come with the same traversal's
    pairs written as for SQLite: stored as routing keys, counted in the report, found by the
    question search, and never an example. A SQLite database gets none; without the setting,
    no database does (its keys are the default build's)."""
    folder = fixtures / "warehouse"
    catalog = load_catalog([f"infoschema:{folder / 'bigquery'}", f"spider:{sample_dir}"])
    location = StoreLocation.parse(str(tmp_path / "kb"))
    config = dataclasses.replace(CONFIG, routing_keys=True)
    report = build_index(catalog, location, template_services(), config)
    stored = list(points(location).values())
    routing = [p for p in stored if p["origin"] == ROUTING]
    shown = [p for p in stored if p["origin"] == SYNTHETIC]
    assert routing and shown and report.routing_keys == len(routing)
    assert any(f"routing keys: {len(routing)} " in line for line in report.lines())
    warehouse = {db.id for db in catalog if db.dialect == "bigquery"}
    assert {p["db_id"] for p in routing} == warehouse
    for key in routing:  # SQLite's SQL: quoted names, no backquoted project.dataset.table
        sqlglot.parse_one(key["sql"], read="sqlite")
        assert "`" not in key["sql"]
    with Retriever.open(location, HashingEmbedder(256)) as retriever:
        for key in routing[:20]:
            result = retriever.retrieve(key["question"])
            hits = retriever.kb.search_questions(
                np.asarray(retriever.embedder.embed_query(key["question"]), np.float32), 1
            )
            assert hits[0].origin == ROUTING and hits[0].question == key["question"]
            assert all(e.origin != ROUTING for e in result.examples)
            assert all(e.question != key["question"] for e in result.examples)
    plain = build_index(
        catalog, StoreLocation.parse(str(tmp_path / "kb0")), template_services(), CONFIG
    )
    assert plain.routing_keys == 0 and plain.questions == len(shown)
