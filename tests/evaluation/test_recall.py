"""The recall benchmark: metrics, the leakage assertion, datasets and the JSON contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.datasets import BenchQuestion, load_dataset, load_files
from evaluation.errors import BenchmarkDataError, LeakageError
from evaluation.metrics import METRIC_KEYS, Ranking, recall, table_keys
from evaluation.recall import check_leakage, plot_recall, run_recall
from providers import HashingEmbedder
from retriever import Retriever
from schemagraph import Catalog
from schemagraph.model import Column, Database, Table
from schemarag.cli import main
from tests.retriever.conftest import RECORDS, write_store

CONTRACT = {*METRIC_KEYS, "latency_ms_p50", "latency_ms_p99"}

QUESTIONS = [
    {"db_id": "pets_1", "question": "How many dogs are there?", "query": "SELECT count(*) FROM Pets WHERE PetType = 'dog'"},  # noqa: E501
    {"db_id": "concert_singer", "question": "Names of singers in concerts of 2014?", "query": "SELECT T1.Name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.Singer_ID = T2.Singer_ID JOIN concert AS T3 ON T2.concert_ID = T3.concert_ID WHERE T3.Year = 2014"},  # noqa: E501
    {"db_id": "flight_2", "question": "How many flights arrive at APG?", "query": "SELECT count(*) FROM flights WHERE DestAirport = 'APG'"},  # noqa: E501
    {"db_id": "car_1", "question": "Which makers are from Japan?", "SQL": "SELECT Maker FROM car_makers AS T1 JOIN countries AS T2 ON T1.Country = T2.CountryId WHERE T2.CountryName = 'japan'"},  # noqa: E501
]  # fmt: skip


def _question(db: str, *tables: str, hardness: str = "easy") -> BenchQuestion:
    return BenchQuestion("q", "SELECT 1", db, frozenset((db, t) for t in tables), hardness)


def test_metrics_follow_their_definitions() -> None:
    questions = [_question("a", "t1", "t2"), _question("b", "u1")]
    rankings = [
        Ranking(("a", "b"), (("a", "t1"), ("b", "x"), ("a", "t2")), 1.0),
        Ranking(("a", "b"), (("a", "t1"),) * 5 + (("b", "u1"),), 3.0),
    ]
    m = recall(questions, rankings)
    assert m["db_R@1"] == 50.0 and m["db_R@5"] == 100.0
    assert m["tab_R@5"] == pytest.approx(100 * 2 / 3, abs=0.01)  # micro: 2 of 3 gold tables
    assert m["tab_R@10"] == 100.0
    assert m["all_tabs@5"] == 50.0 and m["all_tabs@10"] == 100.0
    assert m["db_R@1_twins"] == m["db_R@1"]  # no twins: the same
    # "b" answered with its twin "a": right when twins count as one, wrong strictly
    assert (
        recall(questions, rankings, {"a": frozenset("ab"), "b": frozenset("ab")})["db_R@1_twins"]
        == 100.0
    )


def test_holds_counts_a_first_database_that_holds_every_gold_table() -> None:
    questions = [_question("a", "t1", "ds__1x"), _question("a", "t1", "t3")]
    # an extended copy in another engine: upper case, `_` before a part that starts with a digit
    plus = Database(
        "A_PLUS_SF",
        tuple(Table(n, (Column("c", "text"),)) for n in ("T1", "DS___1X", "EXTRA")),
    )
    tables = table_keys([plus])
    assert tables == {"a_plus_sf": {"t1": "t1", "ds___1x": "ds__1x", "extra": "extra"}}
    rankings = [Ranking(("A_PLUS_SF", "a"), (), 1.0), Ranking(("a_plus_sf", "a"), (), 1.0)]
    m = recall(questions, rankings, None, tables)
    assert m["db_R@1"] == 0.0 and m["db_R@1_holds"] == 50.0  # t3 is not in the copy
    assert recall(questions, rankings)["db_R@1_holds"] == 0.0  # no tables known: strict
    gold_first = [Ranking(("a",), (), 1.0)] * 2
    assert recall(questions, gold_first, None, tables)["db_R@1_holds"] == 100.0


def test_holds_matches_a_bare_export_name_to_its_dataset_in_a_copy() -> None:
    # an export of one dataset names its tables bare (`badges`); the copy that adds datasets
    # names the same table `stackoverflow__badges`: the engine's names say they are one table
    base = Database(
        "stackoverflow",
        (Table("badges", (Column("id", "INT64"),), engine_name=("p", "stackoverflow", "badges")),),
    )
    plus = Database(
        "STACKOVERFLOW_PLUS",
        tuple(
            Table(f"{ds}__{t}", (Column("id", "INT64"),), engine_name=("P", ds, t))
            for ds, t in (("stackoverflow", "badges"), ("hackernews", "comments"))
        ),
    )
    questions = [_question("stackoverflow", "badges")]
    rankings = [Ranking(("STACKOVERFLOW_PLUS", "stackoverflow"), (), 1.0)]
    assert recall(questions, rankings, None, table_keys([base, plus]))["db_R@1_holds"] == 100.0


def test_leakage_check_rejects_an_indexed_evaluated_question() -> None:
    questions = [BenchQuestion("How many singers do we have?", "", "s", frozenset(), "easy")]
    indexed = [("How many pets?", "llm"), ("How many singers are there?", "llm")]
    assert check_leakage(indexed, questions) == frozenset()
    with pytest.raises(LeakageError, match="How many singers do we have"):
        check_leakage([("how many SINGERS do we have ?", "anthropic:claude")], questions)


def test_a_template_record_that_equals_an_evaluated_question_is_masked() -> None:
    questions = [BenchQuestion("How many continents are there?", "", "c", frozenset(), "easy")]
    masked = check_leakage([("How many continents are there?", "template")], questions)
    assert masked == {"how many continents are there"}


def test_run_recall_refuses_a_knowledge_base_holding_an_evaluated_question(
    tmp_path: Path, sample_dir: Path, sample_catalog: Catalog, embedder: HashingEmbedder
) -> None:
    leaked = (*RECORDS, ("pets_1", "How many dogs are there?", "SELECT 1", ("Pets",)))
    store = write_store(tmp_path / "kb", sample_catalog, embedder, leaked, synthesizer="llm")
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    dataset = load_files(sample_dir / "tables.json", questions)
    with Retriever.open(store, embedder) as retriever, pytest.raises(LeakageError):
        run_recall(dataset, retriever, embedder)


def test_run_recall_masks_coincidental_template_records(
    tmp_path: Path, sample_dir: Path, sample_catalog: Catalog, embedder: HashingEmbedder
) -> None:
    leaked = (*RECORDS, ("pets_1", "How many dogs are there?", "SELECT 1", ("Pets",)))
    store = write_store(tmp_path / "kb", sample_catalog, embedder, leaked)
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    dataset = load_files(sample_dir / "tables.json", questions)
    with Retriever.open(store, embedder) as retriever:
        report = run_recall(dataset, retriever, embedder)
        hits, _ = retriever.signals("How many dogs are there?")[1:]
    assert report["masked_records"] == ["how many dogs are there"]
    assert "How many dogs are there?" not in {h.question for h in hits}


def test_datasets_read_spider_and_bird_gold_sql(tmp_path: Path, sample_dir: Path) -> None:
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps([*QUESTIONS, {**QUESTIONS[0], "db_id": "nowhere"}]))
    dataset = load_files(sample_dir / "tables.json", questions)
    assert len(dataset.questions) == 4 and len(dataset.skipped) == 1
    assert dataset.questions[1].gold == {
        ("concert_singer", "singer"),
        ("concert_singer", "singer_in_concert"),
        ("concert_singer", "concert"),
    }
    assert dataset.questions[3].gold == {("car_1", "car_makers"), ("car_1", "countries")}
    assert dataset.questions[1].hardness in {"easy", "medium", "hard", "extra"}


def test_gold_tables_given_a_dialect_or_a_list_and_views_skipped_with_their_names(
    tmp_path: Path, sample_dir: Path
) -> None:
    rows = [
        # BigQuery reads `project.dataset.table` as a table; SQLite as one odd name
        {"question": "q1", "db_id": "pets_1", "SQL": "SELECT count(*) FROM `shop.pets_1.Pets`"},
        {"question": "q2", "db_id": "pets_1", "gold_tables": ["Student", "Has_Pet"]},
        {"question": "q3", "db_id": "pets_1", "SQL": "SELECT * FROM `Sales by Category`"},
    ]
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(rows))
    dataset = load_files(sample_dir / "tables.json", questions, dialect="bigquery")
    assert [q.gold for q in dataset.questions] == [
        {("pets_1", "pets")},
        {("pets_1", "student"), ("pets_1", "has_pet")},
    ]
    assert dataset.questions[1].hardness is None
    (reason,) = dataset.skipped
    assert "sales by category" in reason and "a view, or a table its tables.json lacks" in reason
    questions.write_text(json.dumps([{"question": "q", "db_id": "pets_1", "gold_tables": "Pets"}]))
    with pytest.raises(BenchmarkDataError, match="gold_tables must be a list"):
        load_files(sample_dir / "tables.json", questions)
    questions.write_text(json.dumps(rows[:1]))
    assert not load_files(sample_dir / "tables.json", questions).questions  # read as SQLite


def test_the_shards_of_a_family_are_one_gold_table_its_newest_member(tmp_path: Path) -> None:
    shards = [f"ga_sessions_201707{day:02d}" for day in range(1, 6)]
    names = [*shards, "products"]
    columns = [[-1, "*"]] + [[i, c] for i in range(len(names)) for c in ("visitid", "totals")]
    tables = [
        {
            "db_id": "ga360",
            "table_names_original": names,
            "table_names": names,
            "column_names_original": columns,
            "column_names": columns,
            "column_types": ["text"] * len(columns),
            "primary_keys": [],
            "foreign_keys": [],
        }
    ]
    (tmp_path / "tables.json").write_text(json.dumps(tables))
    rows = [
        {"question": "July", "db_id": "ga360", "gold_tables": shards[:3]},
        {"question": "July and products", "db_id": "ga360", "gold_tables": [*shards, "products"]},
    ]
    (tmp_path / "q.json").write_text(json.dumps(rows))

    dataset = load_files(tmp_path / "tables.json", tmp_path / "q.json")

    newest = ("ga360", "ga_sessions_20170705")
    assert [q.gold for q in dataset.questions] == [{newest}, {newest, ("ga360", "products")}]


def test_colliding_database_ids_across_files_are_an_error(tmp_path: Path, sample_dir: Path) -> None:
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    with pytest.raises(BenchmarkDataError, match="appears twice"):
        load_files([sample_dir / "tables.json", sample_dir / "tables.json"], questions)


def test_bench_recall_cli_writes_the_json_contract_and_a_plot(
    tmp_path: Path, sample_dir: Path, sample_catalog: Catalog, embedder: HashingEmbedder
) -> None:
    store = write_store(tmp_path / "kb", sample_catalog, embedder, RECORDS)
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    out, png = tmp_path / "recall.json", tmp_path / "recall.png"
    code = main(
        [
            "bench", "recall", "--tables", str(sample_dir / "tables.json"),
            "--questions", str(questions), "--store", str(store), "--embedder", embedder.name,
            "--json", str(out), "--plot", str(png), "--per-question",
        ]
    )  # fmt: skip
    assert code == 0
    report = json.loads(out.read_text())
    first = report["per_question"][0]
    assert first["question"] == QUESTIONS[0]["question"] and first["gold_tables"]
    assert set(first["rankings"]) == {"schemarag", "bm25_table", "dense_table"}
    assert all(len(r["databases"]) >= 1 for r in first["rankings"].values())
    assert all("." in t for t in first["rankings"]["schemarag"]["tables"])
    assert {"dataset", "questions", "databases", "methods"} <= set(report)
    assert report["questions"] == 4 and report["databases"] == 8
    # the query embedder as it ran (a precision only for embedders that have one: MiniLM)
    assert report["embedder"] == embedder.name and "precision" not in report
    assert set(report["methods"]) == {"schemarag", "bm25_table", "dense_table"}
    for metrics in report["methods"].values():
        assert set(metrics) == CONTRACT
        assert all(0.0 <= metrics[k] <= 100.0 for k in METRIC_KEYS)
    assert set(report["breakdowns"]["hardness"]["schemarag"]) <= {"easy", "medium", "hard", "extra"}
    assert set(report["breakdowns"]["gold_tables"]["schemarag"]) <= {"1", "2", "3", "4+"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_recall_samples_by_hardness_and_pools_with_an_llm(
    tmp_path: Path, sample_dir: Path, sample_catalog: Catalog, embedder: HashingEmbedder
) -> None:
    """--sample N --seed S evaluates N questions and names them; --pool LLM lets the model
    reorder schemarag's five best candidates (here a model that always lists every database in
    one fixed order) and leaves the rest of the ranking as it was."""
    store = write_store(tmp_path / "kb", sample_catalog, embedder, RECORDS)
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    order = sorted((db.id for db in sample_catalog), reverse=True)
    reply = json.dumps({"databases": [{"db_id": d, "tables": []} for d in order]})

    def run(*extra: str) -> dict[str, Any]:
        out = tmp_path / f"recall{len(extra)}.json"
        code = main(
            [
                "bench", "recall", "--tables", str(sample_dir / "tables.json"),
                "--questions", str(questions), "--store", str(store), "--embedder", embedder.name,
                "--json", str(out), "--sample", "3", "--seed", "1", "--per-question", *extra,
            ]
        )  # fmt: skip
        assert code == 0
        return dict(json.loads(out.read_text()))

    plain, pooled = run(), run("--pool", f"scripted:{reply}")
    assert plain["questions"] == 3 and plain["sample"] == {"size": 3, "seed": 1}
    ids = plain["question_ids"]
    assert ids == pooled["question_ids"] and len(set(ids)) == 3
    assert [r["question"] for r in plain["per_question"]] == [QUESTIONS[i]["question"] for i in ids]
    assert pooled["pool"].startswith("scripted") and "pool" not in plain
    for before, after in zip(plain["per_question"], pooled["per_question"], strict=True):
        ranked = before["rankings"]["schemarag"]["databases"]
        expected = sorted(ranked[:5], key=order.index) + ranked[5:]
        assert after["rankings"]["schemarag"]["databases"] == expected
    assert pooled["pooling_failures"] == {"count": 0, "reasons": {}}

    # The 0.5B once listed table names until its tokens ran out: that question keeps the
    # retriever's ranking and is counted, and the run finishes.
    cut = '{"databases": ["concert", "singer", "concert", "singer", "concert", "sin'
    botched = run("--pool", f"scripted:{cut}")
    assert botched["pooling_failures"]["count"] == 3
    assert [r["rankings"] for r in botched["per_question"]] == [
        r["rankings"] for r in plain["per_question"]
    ]


def test_plot_needs_only_the_report(tmp_path: Path) -> None:
    curve = {"k": [1.0, 2.0], "db_R": [50.0, 100.0], "tab_R": [40.0, 80.0]}
    report = {"dataset": "x", "questions": 2, "databases": 3, "curves": {"m": curve}}
    plot_recall(report, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 1000


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--dialect", "nosuch"], "no dialect 'nosuch'"),
        (["--per-question"], "add --json"),
        (["--limit", "2", "--sample", "3"], "give one"),
    ],
)
def test_bench_recall_flags_are_checked_first(
    extra: list[str],
    words: str,
    tmp_path: Path,
    sample_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    argv = ["bench", "recall", "--tables", str(sample_dir / "tables.json")]
    assert main([*argv, "--questions", str(questions), *extra]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_bench_cli_reports_user_mistakes_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", "recall", "--questions", str(tmp_path / "q.json")])
    assert code == 2
    assert "--tables (or --source) and --questions go together" in capsys.readouterr().err


@pytest.mark.spider
def test_spider_dev_has_gold_tables_for_every_question(spider_dir: Path) -> None:
    dataset = load_dataset("spider-dev", spider_dir)
    assert len(dataset.catalog) == 166
    assert len(dataset.questions) + len(dataset.skipped) == 1034
    assert len(dataset.questions) >= 1030
    syn = load_dataset("spider-syn", spider_dir)
    assert syn.questions[0].question != dataset.questions[0].question
    assert syn.questions[0].gold == dataset.questions[0].gold


def test_bench_recall_adds_users_examples_and_refuses_an_evaluated_one(
    tmp_path: Path, sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    rows = [
        {"question": "Which crooners hail from France?", "db_id": "concert_singer",
         "sql": "SELECT Name FROM singer WHERE Country = 'France'"},
        {"question": "Heavy pets?", "db_id": "pets_1",
         "sql": "SELECT * FROM Pets WHERE weight > 10"},
        {"question": "Broken.", "db_id": "pets_1", "sql": "SELECT nope FROM Pets"},
    ]  # fmt: skip
    examples = tmp_path / "examples.jsonl"
    examples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "recall.json"
    common = [
        "bench", "recall", "--tables", str(sample_dir / "tables.json"), "--questions",
        str(questions), "--embedder", "hashing:256", "--cache-dir", str(tmp_path / "cache"),
    ]  # fmt: skip
    assert main([*common, "--examples", str(examples), "--json", str(out)]) == 0
    added = json.loads(out.read_text())["user_examples"]
    assert (added["rows"], added["in_index"], added["rejected"]) == (3, 2, 1)
    assert added["rejected_by_reason"] == {"bad column reference": 1}
    capsys.readouterr()

    leaked = tmp_path / "leaked.jsonl"
    evaluated = QUESTIONS[0]
    leaked.write_text(
        json.dumps(
            {"question": evaluated["question"], "sql": evaluated["query"], "db_id": "pets_1"}
        )
    )
    assert main([*common, "--examples", str(leaked)]) == 2
    assert "evaluated question" in capsys.readouterr().err


def test_bench_recall_reads_a_pool_from_any_source_without_a_tables_json(
    tmp_path: Path, embedder: HashingEmbedder
) -> None:
    """--source takes the specs `index build` takes: a warehouse export is measured as it is,
    gold tables named as the export names them."""
    from schemarag.cli.common import load

    warehouse = Path(__file__).resolve().parents[1] / "fixtures" / "warehouse"
    sources = [f"infoschema:{warehouse / 'bigquery'}", f"infoschema:{warehouse / 'snowflake'}"]
    store = write_store(tmp_path / "kb", load(sources), embedder, [])
    questions = tmp_path / "q.json"
    rows = [
        {"db_id": "SHOP_DB", "question": "Orders by status", "gold_tables": ["ORDERS"]},
        {
            "db_id": "acme-retail-prod",
            "question": "Customers by country",
            "gold_tables": ["crm__customers"],
        },
    ]
    questions.write_text(json.dumps(rows))
    out = tmp_path / "recall.json"
    argv = ["bench", "recall", *(a for s in sources for a in ("--source", s))]
    argv += ["--questions", str(questions), "--store", str(store), "--embedder", embedder.name]
    assert main([*argv, "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["questions"] == 2 and report["databases"] == 2


def test_bench_recall_engine_given_ranks_each_question_among_its_engines_databases(
    tmp_path: Path,
    embedder: HashingEmbedder,
    sample_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    warehouse = Path(__file__).resolve().parents[1] / "fixtures" / "warehouse"
    sources = [
        f"infoschema:{warehouse / 'bigquery'}",
        f"infoschema:{warehouse / 'snowflake'}",
        f"spider:{sample_dir}",
    ]
    store = tmp_path / "kb"  # a real build: it records each database's dialect
    build = ["index", "build", *sources, "--store", str(store), "--embedder", embedder.name]
    assert main([*build, "--no-cache", "--chains", "1"]) == 0
    rows = [
        {"db_id": "SHOP_DB", "question": "Sessions by traffic source", "gold_tables": ["ORDERS"]},
        {
            "db_id": "acme-retail-prod",
            "question": "Orders by status",
            "gold_tables": ["crm__customers"],
        },
        {"db_id": "concert_singer", "question": "Orders by status", "gold_tables": ["singer"]},
    ]
    engines = ["snowflake", "BigQuery", "sqlite"]
    questions = tmp_path / "q.json"
    given = [{**row, "engine": e} for row, e in zip(rows, engines, strict=True)]
    questions.write_text(json.dumps(given))
    argv = ["bench", "recall", *(a for s in sources for a in ("--source", s))]
    argv += ["--questions", str(questions), "--store", str(store), "--embedder", embedder.name]
    out = tmp_path / "recall.json"
    assert main([*argv, "--engine-given", "--per-question", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["engine_given"] is True
    # the only database of each warehouse engine comes first, whatever the question says
    for row in report["per_question"][:2]:
        for method, ranking in row["rankings"].items():
            assert ranking["databases"] == [row["db_id"]], method
    sqlite = report["per_question"][2]["rankings"]
    assert all("SHOP_DB" not in r["databases"] for r in sqlite.values())
    questions.write_text(json.dumps(rows))
    capsys.readouterr()
    assert main([*argv, "--engine-given"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no `engine`" in err[0], err
