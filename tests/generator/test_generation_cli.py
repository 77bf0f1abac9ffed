"""`schemarag ask` and `schemarag bench ex|actor-critic|voting`."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from evaluation.gold import sample_questions
from retriever import RankedDatabase, RankedTable, RetrievalResult
from schemarag.cli import ask as ask_cli
from schemarag.cli import main
from schemarag.cli.bench_generation import register_bench_commands
from schemarag.errors import rule_for

GOOD = "SELECT count(*) FROM singer WHERE Country = 'France'"
SCRIPTED = f"scripted:```sql\n{GOOD}\n```"


@pytest.fixture(autouse=True)
def no_llm_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SCHEMARAG_LLM", "ANTHROPIC_API_KEY", "SCHEMARAG_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def bench(argv: Sequence[str]) -> int:
    """Run a generation benchmark command the way `schemarag bench ...` does."""
    parser = argparse.ArgumentParser(prog="schemarag bench")
    register_bench_commands(parser.add_subparsers(dest="bench_command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except Exception as exc:
        if rule_for(exc) is None:
            raise
        print(f"schemarag: error: {exc}", file=sys.stderr)
        return 2


def test_ask_without_an_llm_names_the_settings_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ask", "How many singers?", "--db", "concert_singer"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    for setting in ("SCHEMARAG_LLM", "ANTHROPIC_API_KEY", "SCHEMARAG_OPENAI_BASE_URL", "--llm"):
        assert setting in err


def test_ask_with_the_scripted_llm_prints_sql_trace_and_rows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        [
            "ask",
            "How many singers are from France?",
            "--db",
            "concert_singer",
            "--llm",
            SCRIPTED,
            "--execute",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "trace:" in out and "presql:" in out and "linking: singer" in out
    assert f"SQL:\n  {GOOD}" in out
    assert "rows (1):\n  count(*)\n  4" in out


def test_ask_json_with_several_llms_and_a_vote(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "ask",
            "How many singers are from France?",
            "--db",
            "concert_singer",
            "--llm",
            SCRIPTED,
            "--llm",
            "scripted:SELECT count(*) FROM singer",
            "--llm",
            SCRIPTED,
            "--strategy",
            "fine-vote",
            "--voters",
            "easy=1,3",
            "--execute",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["sql"] == GOOD and data["strategy"] == "fine-vote"
    assert data["execution"]["rows"] == [[4]]
    selection = data["trace"][-1]
    assert selection["stage"] == "selection" and selection["hardness"] == "easy"


def test_ask_reports_bad_voters_and_unknown_databases_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        main(["ask", "q", "--db", "concert_singer", "--llm", SCRIPTED, "--voters", "hard=5"]) == 2
    )
    assert "--voters" in capsys.readouterr().err
    assert main(["ask", "q", "--db", "nowhere", "--llm", SCRIPTED]) == 2
    assert "unknown database 'nowhere'" in capsys.readouterr().err


def test_ask_without_db_uses_the_retriever(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = RetrievalResult(
        "q",
        (RankedDatabase("concert_singer", 0.9, (RankedTable("singer", 1.0, chosen=True),)),),
        (("concert_singer", "singer"),),
        0.9,
        False,
    )

    class Fake:
        closed = False
        dialects: ClassVar[list[str | None]] = []

        def retrieve(
            self, question: str, top_databases: int = 5, top_tables: int = 10, *, dialect=None
        ):
            Fake.dialects.append(dialect)
            return result

        def close(self) -> None:
            Fake.closed = True

    monkeypatch.setattr(ask_cli, "open_retriever", lambda args, settings: Fake())
    code = main(["ask", "How many singers are from France?", "--llm", SCRIPTED, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["db_id"] == "concert_singer" and data["sql"] == GOOD
    assert data["retrieval"]["confidence"] == 0.9 and Fake.closed
    assert main(["ask", "How many singers?", "--llm", SCRIPTED, "--dialect", "sqlite"]) == 0
    assert Fake.dialects == [None, "sqlite"]  # retrieval told the engine


def test_ask_without_db_and_without_a_store_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["ask", "q", "--llm", SCRIPTED, "--store", str(tmp_path / "empty")])
    assert code == 2
    assert "no built knowledge base" in capsys.readouterr().err


def test_ask_exits_1_when_no_sql_comes_back(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "q", "--db", "pets_1", "--llm", "scripted:I do not know"]) == 1
    assert "no SQL was generated" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("DROP TABLE singer;", "DROP TABLE modifies the database"),
        ("```sql\nPRAGMA table_info(singer)\n```", "PRAGMA is not a query"),
        ("SQL: VACUUM", "VACUUM is not a query"),
    ],
)
def test_ask_says_refused_when_the_model_replies_with_a_statement_that_is_not_a_query(
    reply: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["ask", "q", "--db", "concert_singer", "--llm", f"scripted:{reply}", "--execute"])
    assert code == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"schemarag: refused: {reason}") and err.count("\n") == 1
    assert "SQL:\n  (none)" in out and "guard: refused" in out


def test_bench_actor_critic_writes_the_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ac.json"
    assert bench(["actor-critic", "--trials", "40", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert len(report["rows"]) >= 10
    for row in report["rows"]:
        assert {"p", "q", "s", "z", "predicted", "measured", "trials"} <= row.keys()
        assert row["trials"] == 40 and 0 <= row["measured"] <= 1
    assert "| p | q | s | z |" in capsys.readouterr().out


def test_bench_voting_on_the_bundled_sample_writes_the_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SCHEMARAG_SPIDER_DIR", raising=False)
    monkeypatch.chdir(tmp_path)  # no ../shared/data/spider from here
    out = tmp_path / "voting.json"
    assert bench(["voting", "--limit", "12", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert set(report["selectors"]) >= {
        "naive vote",
        "fine-grained vote",
        "multi-sample critique",
        "test-case re-ranking",
        "random",
    }
    for row in report["selectors"].values():
        assert 0 <= row["accuracy"] <= 1 and row["cases"] == report["cases"] > 0
    assert "bundled sample" in report["dataset"]


def test_bench_ex_without_an_llm_says_so_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench(["ex", "--dataset", "spider-dev"]) == 2
    assert "SCHEMARAG_LLM" in capsys.readouterr().err


def _tiny_spider(root: Path, sample_dir: Path) -> Path:
    folder = root / "spider"
    folder.mkdir()
    shutil.copy(sample_dir / "tables.json", folder / "tables.json")
    (folder / "database").symlink_to(sample_dir / "database")
    questions = [q for q in sample_questions() if q[0] == "concert_singer"][:3]
    (folder / "dev.json").write_text(
        json.dumps([{"db_id": d, "question": q, "query": s} for d, q, s in questions])
    )
    return folder


def test_bench_ex_with_a_scripted_llm_scores_both_gold_settings(
    tmp_path: Path, sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _tiny_spider(tmp_path, sample_dir)
    out = tmp_path / "ex.json"
    code = bench(
        [
            "ex",
            "--data",
            str(folder),
            "--llm",
            "scripted:SELECT count(*) FROM singer",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert set(report["settings"]) == {"gold-tables", "gold-database"}
    for setting in report["settings"].values():
        assert setting["count"] == 3
        assert setting["execution_accuracy"] == pytest.approx(100 / 3, abs=0.01)
        assert setting["tokens_per_question"] > 0 and setting["cost_per_question_usd"] == 0
        assert "easy" in setting["by_hardness"]
    assert "| gold-tables |" in capsys.readouterr().out


def test_bench_ex_measures_the_critics_p_q_s_from_the_actor_critic_attempts(
    tmp_path: Path, sample_dir: Path
) -> None:
    folder = _tiny_spider(tmp_path, sample_dir)
    out = tmp_path / "ex.json"
    argv = ["ex", "--data", str(folder), "--settings", "gold-database", "--json", str(out)]
    argv += ["--strategy", "actor-critic", "--llm", "scripted:SELECT count(*) FROM singer"]
    assert bench([*argv, "--critic", "scripted:True"]) == 0
    setting = json.loads(out.read_text())["settings"]["gold-database"]
    # one question of three asks for the count of singers: p = 1/3; the critic accepts all
    rates = setting["actor_critic"]
    assert (rates["p"], rates["q"], rates["s"]) == (0.3333, 1.0, 0.0)
    assert (rates["checked_wrong"], rates["checked_correct"], rates["attempts"]) == (2, 1, 3)
    assert rates["theorem_1_expected_accuracy"] == pytest.approx(33.33, abs=0.01)
    assert [q["correct"] for q in setting["per_question"]].count(True) == 1

    assert bench([*argv, "--critic", "scripted:False", "--attempts", "2"]) == 0
    rates = json.loads(out.read_text())["settings"]["gold-database"]["actor_critic"]
    # every first attempt is checked and rejected, every second one is returned unchecked
    assert (rates["q"], rates["s"], rates["attempts"]) == (0.0, 1.0, 6)


def test_bench_ex_retrieved_names_the_database_each_question_was_routed_to(
    tmp_path: Path, sample_dir: Path
) -> None:
    folder = _tiny_spider(tmp_path, sample_dir)
    # the second question is about singers but its gold database is pets_1: routed elsewhere
    questions = [
        ("concert_singer", "How many singers do we have?", "SELECT count(*) FROM singer"),
        ("pets_1", "How many singers do we have?", "SELECT count(*) FROM Pets"),
    ]
    (folder / "dev.json").write_text(
        json.dumps([{"db_id": d, "question": q, "query": sql} for d, q, sql in questions])
    )
    store = str(tmp_path / "kb")
    embedder = ["--embedder", "hashing:64"]
    build = ["index", "build", f"spider:{folder}", "--store", store, *embedder, "--no-cache"]
    assert main([*build, "--chains", "1", "--max-per-database", "2"]) == 0
    out = tmp_path / "ex.json"
    argv = ["ex", "--data", str(folder), "--settings", "retrieved", "--store", store, *embedder]
    argv += ["--llm", "scripted:SELECT count(*) FROM singer", "--json", str(out)]
    assert bench(argv) == 0
    setting = json.loads(out.read_text())["settings"]["retrieved"]
    answers = [(q["database"], q["correct"], q["pred_error"]) for q in setting["per_question"]]
    assert answers == [
        ("concert_singer", True, None),
        ("concert_singer", False, "wrong database"),
    ]
    assert setting["database_accuracy"] == 50.0


def test_bench_ex_sample_is_stratified_and_names_its_questions(
    tmp_path: Path, sample_dir: Path
) -> None:
    folder = _tiny_spider(tmp_path, sample_dir)
    out = tmp_path / "ex.json"
    argv = ["ex", "--data", str(folder), "--settings", "gold-database", "--json", str(out)]
    assert bench([*argv, "--llm", "scripted:SELECT 1", "--sample", "2", "--seed", "3"]) == 0
    report = json.loads(out.read_text())
    assert report["sample"] == {"size": 2, "seed": 3} and len(report["question_ids"]) == 2
    assert report["settings"]["gold-database"]["count"] == 2
    assert len(report["settings"]["gold-database"]["per_question"]) == 2


def test_bench_ex_with_a_cache_replays_the_calls_and_counts_their_tokens(
    tmp_path: Path, sample_dir: Path
) -> None:
    folder = _tiny_spider(tmp_path, sample_dir)
    out = tmp_path / "ex.json"
    argv = ["ex", "--data", str(folder), "--settings", "gold-database", "--json", str(out)]
    argv += ["--llm", "scripted:SELECT count(*) FROM singer", "--cache", str(tmp_path / "c.db")]
    runs = []
    for _ in range(2):
        assert bench(argv) == 0
        runs.append(json.loads(out.read_text())["settings"]["gold-database"])
    assert runs[0]["cached_calls"] == 0 < runs[0]["calls_per_question"]
    assert runs[1]["cached_calls"] == 3 * runs[1]["calls_per_question"]
    assert runs[1]["tokens_per_question"] == runs[0]["tokens_per_question"] > 0
    assert runs[1]["execution_accuracy"] == runs[0]["execution_accuracy"]
