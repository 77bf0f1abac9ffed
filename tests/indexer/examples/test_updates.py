"""Users' examples in the knowledge base, end to end on the bundled sample (template synthesis,
hashing embedder): validated with file:line reasons, published at once without synthesis,
kept across rebuilds, left out when one of their tables changes, removable by file and by id,
counted in `index status`, used for routing and as few-shot examples."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

from evaluation import LeakageError, check_leakage, load_files
from indexer import (
    BuildConfig,
    BuildServices,
    ExampleStore,
    add_examples,
    build_index,
    index_status,
    make_chain_runner,
    make_feedback,
    make_synthesizer,
    read_examples,
    remove_examples,
)
from indexer.building.metered import CallCounter, CountingEmbedder
from providers import HashingEmbedder
from retriever import Retriever
from schemagraph import Catalog, TraversalConfig, load_catalog
from store import CollectionLayout, StoreError, StoreLocation
from store.errors import StoreBusyError
from store.location import QUESTIONS, TABLES, build_lock
from tests.store_points import build_points

EMBEDDER = HashingEmbedder(256)
CONFIG = BuildConfig(traversal=TraversalConfig(max_per_database=2, walks=0), chains=1, iterations=0)
#: the database the base build leaves out (examples about it are not in the served build)
LEFT_OUT = "student_transcripts_tracking"

GOOD = [
    {
        "question": "Which crooners hail from the Hexagon?",
        "sql": "SELECT Name FROM singer WHERE Country = 'France'",
        "db_id": "concert_singer",
    },
    {
        "question": "Which stadiums seat more than five thousand fans?",
        "sql": "SELECT Name FROM stadium WHERE Capacity > 5000",
        "db_id": "concert_singer",
    },
    {
        "question": "How many pets weigh over ten kilos?",
        "sql": "SELECT count(*) FROM Pets WHERE weight > 10",
        "db_id": "pets_1",
    },
]
BAD = [
    ({"question": "q1", "sql": "SELECT 1 FROM nowhere", "db_id": "pets_1"}, "unknown table"),
    ({"question": "q2", "sql": "SELECT nope FROM Pets", "db_id": "pets_1"}, "bad column"),
    ({"question": "q3", "sql": "DELETE FROM Pets", "db_id": "pets_1"}, "refused"),
    (
        {"question": "q4", "sql": "SELECT abs(-9223372036854775808) FROM Pets", "db_id": "pets_1"},
        "fails to run",
    ),
    ({"question": "q5", "sql": "SELECT 1", "db_id": "no_such_db"}, "not in the catalog"),
    (
        {"question": "q6", "sql": "SELECT count(*) FROM Students", "db_id": LEFT_OUT},
        "not in the served build",
    ),
    ({"question": "q7", "db_id": "pets_1"}, "no sql"),
]


def services(counter: CallCounter | None = None) -> BuildServices:
    return BuildServices(
        synthesize=make_chain_runner(
            make_synthesizer("template", None), make_feedback("rule", None), chains=1, iterations=0
        ),
        synthesizer_name="template",
        embedder=CountingEmbedder(EMBEDDER, counter or CallCounter()),
    )


def without(catalog: Catalog, db_id: str) -> Catalog:
    return Catalog(tuple(db for db in catalog if db.id != db_id))


def with_changed_table(catalog: Catalog, db_id: str, table: str) -> Catalog:
    """`catalog` with one column of `db_id.table` documented: the table's fingerprint changes."""
    databases = []
    for db in catalog:
        if db.id == db_id:
            tables = []
            for t in db.tables:
                if t.name == table:
                    first = dataclasses.replace(t.columns[0], description="what it means")
                    t = dataclasses.replace(t, columns=(first, *t.columns[1:]))
                tables.append(t)
            db = dataclasses.replace(db, tables=tuple(tables))
        databases.append(db)
    return Catalog(tuple(databases))


def user_points(location: StoreLocation) -> dict[str, dict[str, Any]]:
    """The served build's user records, by example id."""
    build = location.current()
    assert build is not None
    return {
        p.payload["example_id"]: p.payload
        for p in build_points(location.build_dir(build))
        if p.payload and p.payload.get("origin") == "user"
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def catalog(sample_dir: Path) -> Catalog:
    return load_catalog([f"spider:{sample_dir}"])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Path:
    """A build of the sample without `LEFT_OUT`. Read-only: tests copy it."""
    store = tmp_path_factory.mktemp("examples") / "kb"
    build_index(without(catalog, LEFT_OUT), StoreLocation.parse(store), services(), CONFIG)
    return store


@pytest.fixture
def location(built: Path, tmp_path: Path) -> StoreLocation:
    shutil.copytree(built, tmp_path / "kb")
    return StoreLocation.parse(tmp_path / "kb")


@pytest.fixture
def examples_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "log.jsonl", GOOD)


def test_added_examples_are_validated_and_searchable_at_once_without_synthesis(
    catalog: Catalog, location: StoreLocation, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "mixed.jsonl", [*GOOD[:2], *[row for row, _ in BAD], GOOD[2]])
    found = read_examples(path)
    before = location.current()
    counter = CallCounter()
    report = add_examples(
        catalog,
        location,
        CountingEmbedder(EMBEDDER, counter),
        found.examples,
        rejected=found.rejected,
    )
    # every bad row reported with its line, in file order, and counted
    assert [(r.line, r.where) for r in report.rejected] == [
        (line, f"{path.resolve()}:{line}") for line in range(3, 3 + len(BAD))
    ]
    for rejected, (_, words) in zip(report.rejected, BAD, strict=True):
        assert words in rejected.reason, rejected.reason
    assert len(report.accepted) == 3 and report.unchanged == 0
    assert report.total == report.in_build == 3
    # published as a new build, by embedding the three questions only (one call, no synthesis)
    assert report.build_id == location.current() != before
    assert counter.calls == 1
    stored = user_points(location)
    assert set(stored) == set(report.accepted)
    payload = stored[found.examples[0].id]
    assert payload["question"] == GOOD[0]["question"] and payload["sql"] == GOOD[0]["sql"]
    assert (payload["db_id"], payload["tables"], payload["origin"]) == (
        "concert_singer",
        ["singer"],
        "user",
    )
    assert payload["source"] == str(path.resolve()) and payload["line"] == 1
    status = index_status(location)
    assert (status["user_examples"], status["user_examples_kept"]) == (3, 3)


def test_adding_the_same_examples_again_publishes_nothing(
    catalog: Catalog, location: StoreLocation, examples_file: Path
) -> None:
    add_examples(catalog, location, EMBEDDER, read_examples(examples_file).examples)
    current = location.current()
    again = add_examples(catalog, location, EMBEDDER, read_examples(examples_file).examples)
    assert (again.accepted, again.unchanged, again.build_id) == ((), 3, current)
    assert location.current() == current


def test_examples_survive_unchanged_incremental_and_full_rebuilds(
    catalog: Catalog, location: StoreLocation, examples_file: Path
) -> None:
    base = without(catalog, LEFT_OUT)
    add_examples(base, location, EMBEDDER, read_examples(examples_file).examples)
    ids = set(user_points(location))
    assert len(ids) == 3

    unchanged = build_index(base, location, services(), CONFIG)
    assert unchanged.up_to_date and unchanged.user_examples == 3

    # a table of another database changes: its traversals are re-synthesized, examples kept
    changed = build_index(
        with_changed_table(base, "car_1", "cars_data"), location, services(), CONFIG
    )
    assert not changed.up_to_date and changed.traversals_synthesized > 0
    assert changed.user_examples == 3 and changed.user_examples_added == 0
    assert set(user_points(location)) == ids

    full = build_index(base, location, services(), dataclasses.replace(CONFIG, full=True))
    assert full.user_examples == full.user_examples_added == 3
    assert set(user_points(location)) == ids


def test_a_changed_table_drops_its_examples_until_they_are_validated_again(
    catalog: Catalog, location: StoreLocation, examples_file: Path
) -> None:
    base = without(catalog, LEFT_OUT)
    found = read_examples(examples_file)
    add_examples(base, location, EMBEDDER, found.examples)
    singer_example = found.examples[0].id  # the only one on concert_singer.singer

    changed = with_changed_table(base, "concert_singer", "singer")
    report = build_index(changed, location, services(), CONFIG)
    assert report.user_examples == 2 and report.user_examples_stale == 1
    [dropped] = report.user_examples_dropped
    assert dropped["id"] == singer_example
    assert dropped["where"] == f"{examples_file.resolve()}:1"
    assert "table 'singer' of concert_singer changed" in dropped["reason"]
    assert any("left out" in line for line in report.lines())
    assert singer_example not in user_points(location)
    # still kept (not silently lost): listed by the store, counted by status
    assert singer_example in {e.id for e in ExampleStore.read(location)}
    status = index_status(location)
    assert (status["user_examples"], status["user_examples_kept"]) == (2, 3)

    # adding the file again validates it against the changed table: it is back
    again = add_examples(changed, location, EMBEDDER, found.examples)
    assert again.accepted == (singer_example,) and again.unchanged == 2
    assert singer_example in user_points(location)
    # and the next build over the same catalog keeps it
    assert build_index(changed, location, services(), CONFIG).user_examples == 3


def test_examples_are_removable_by_file_and_by_id(
    catalog: Catalog, location: StoreLocation, examples_file: Path, tmp_path: Path
) -> None:
    other = write_jsonl(
        tmp_path / "other.jsonl",
        [{"question": "List all pet types.", "sql": "SELECT PetType FROM Pets", "db_id": "pets_1"}],
    )
    add_examples(catalog, location, EMBEDDER, read_examples(examples_file).examples)
    add_examples(catalog, location, EMBEDDER, read_examples(other).examples)
    assert len(user_points(location)) == 4

    by_file = remove_examples(location, sources=[str(examples_file.resolve())])
    assert len(by_file.removed) == 3 and by_file.total == by_file.in_build == 1
    [(remaining, payload)] = user_points(location).items()
    assert payload["source"] == str(other.resolve())

    by_id = remove_examples(location, ids=[remaining])
    assert by_id.removed == (remaining,) and by_id.total == 0
    assert user_points(location) == {}
    assert index_status(location)["user_examples"] == 0
    # a later build does not bring them back
    build_index(without(catalog, LEFT_OUT), location, services(), CONFIG)
    assert user_points(location) == {}

    with pytest.raises(Exception, match="no user example matches ex_nope"):
        remove_examples(location, ids=["ex_nope"])


def test_adding_needs_a_build_the_builds_embedder_and_a_free_store(
    catalog: Catalog, location: StoreLocation, examples_file: Path, tmp_path: Path
) -> None:
    examples = read_examples(examples_file).examples
    with pytest.raises(StoreError, match="no build to add examples to"):
        add_examples(catalog, StoreLocation.parse(tmp_path / "empty"), EMBEDDER, examples)
    with pytest.raises(StoreError, match="built with embedder 'hashing:256', not 'hashing:64'"):
        add_examples(catalog, location, HashingEmbedder(64), examples)
    with build_lock(location), pytest.raises(StoreBusyError, match="another build is running"):
        add_examples(catalog, location, EMBEDDER, examples)
    assert ExampleStore.read(location) == []


def test_a_question_near_a_user_example_routes_to_its_database_and_gets_it_as_few_shot(
    catalog: Catalog, location: StoreLocation, examples_file: Path
) -> None:
    question = "Which crooners come from the Hexagon?"
    with Retriever.open(location.root, EMBEDDER) as retriever:
        before = retriever.retrieve(question)
    # nothing in the schema says "crooner" or "Hexagon": without the example it routes elsewhere
    assert before.databases[0].db_id != "concert_singer"
    assert all(e.origin == "synthetic" for e in before.examples)

    add_examples(catalog, location, EMBEDDER, read_examples(examples_file).examples)
    with Retriever.open(location.root, EMBEDDER) as retriever:
        after = retriever.retrieve(question)
    assert after.databases[0].db_id == "concert_singer"
    assert after.databases[0].chosen_tables[0] == "singer"
    first = after.examples[0]
    assert (first.origin, first.question, first.sql) == (
        "user",
        GOOD[0]["question"],
        GOOD[0]["sql"],
    )
    assert after.as_dict()["examples"][0]["origin"] == "user"


def test_the_benchmark_refuses_a_user_example_equal_to_an_evaluated_question(
    catalog: Catalog, location: StoreLocation, examples_file: Path, sample_dir: Path, tmp_path: Path
) -> None:
    add_examples(catalog, location, EMBEDDER, read_examples(examples_file).examples)
    questions = tmp_path / "dev.json"
    evaluated = {"question": GOOD[2]["question"], "query": GOOD[2]["sql"], "db_id": "pets_1"}
    questions.write_text(json.dumps([evaluated]))
    dataset = load_files(sample_dir / "tables.json", questions)
    with Retriever.open(location.root, EMBEDDER) as retriever:
        assert retriever.kb is not None
        with pytest.raises(LeakageError, match="written by user"):
            check_leakage(retriever.kb.question_texts(), dataset.questions)


class SharedQdrant(QdrantClient):
    """One in-memory Qdrant standing in for a server (closing a client leaves it running)."""

    def close(self, grpc_grace: float | None = None, **kwargs: object) -> None:
        pass


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect")
def test_on_a_qdrant_server_examples_make_a_build_with_the_same_layout(
    catalog: Catalog, examples_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import qdrant_client

    server = SharedQdrant(":memory:")
    monkeypatch.setattr(qdrant_client, "QdrantClient", lambda *args, **kwargs: server)
    created: dict[str, dict[str, Any]] = {}
    create = server.create_collection

    def record(name: str, **options: Any) -> bool:
        created[name] = options
        return create(name, **options)

    monkeypatch.setattr(server, "create_collection", record)
    location = StoreLocation.parse("http://qdrant.invalid:6333", state_dir=tmp_path / "state")
    layout = CollectionLayout(shards=3, replicas=2)
    build_index(catalog, location, services(), dataclasses.replace(CONFIG, layout=layout))
    first = location.current()
    assert first is not None
    tables_before = server.count(location.collection_name(TABLES, first)).count

    report = add_examples(catalog, location, EMBEDDER, read_examples(examples_file).examples)
    second = location.current()
    assert second == report.build_id != first
    questions = location.collection_name(QUESTIONS, second)
    assert created[questions]["shard_number"] == 3
    assert created[questions]["replication_factor"] == 2
    assert server.count(location.collection_name(TABLES, second)).count == tables_before
    aliases = {a.alias_name: a.collection_name for a in server.get_aliases().aliases}
    assert aliases[location.alias(QUESTIONS)] == questions
    users = server.scroll(questions, limit=100, with_payload=True)[0]
    assert sorted(
        p.payload["example_id"] for p in users if p.payload["origin"] == "user"
    ) == sorted(report.accepted)
    before = server.count(questions).count
    removed = remove_examples(location, ids=[report.accepted[0]])
    third = location.collection_name(QUESTIONS, removed.build_id or "")
    assert server.count(third).count == before - 1
