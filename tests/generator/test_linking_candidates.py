"""PreSQL linking, candidate generation (LLMs × temperatures × samples) and execution."""

from __future__ import annotations

from collections.abc import Callable

from generator import (
    Candidate,
    Executed,
    SamplingPlan,
    build_prompt,
    generate_candidates,
    link_tables,
    result_key,
    run_candidates,
)
from generator.execution import Runner, cached_runner
from providers import LLMRequest, ScriptedLLM, UsageMeter
from schemagraph import Database
from schemagraph.sql import QueryResult


def test_linking_maps_presql_tables_to_catalog_names(concert: Database) -> None:
    linking = link_tables(
        concert,
        "SELECT T1.name FROM SINGER AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = "
        "T2.singer_id",
        ["stadium"],
    )
    assert linking.tables == ("singer", "singer_in_concert")
    assert not linking.fallback and linking.hardness == "easy"


def test_linking_reports_unknown_tables_and_keeps_known_ones(concert: Database) -> None:
    linking = link_tables(concert, "SELECT * FROM singer JOIN artists ON 1", ["stadium"])
    assert linking.tables == ("singer",) and linking.unknown == ("artists",)


def test_linking_falls_back_on_missing_or_broken_presql(concert: Database) -> None:
    schema = ["stadium", "singer"]
    for presql, reason in [
        (None, "no PreSQL"),
        ("SELECT FROM WHERE (", "does not parse"),
        ("SELECT * FROM nowhere", "no table of the database"),
    ]:
        linking = link_tables(concert, presql, schema)
        assert linking.fallback and linking.tables == tuple(schema)
        assert reason in linking.reason


def test_candidates_cover_every_llm_temperature_and_sample(concert: Database) -> None:
    prompt = build_prompt("How many singers?", concert)

    def reply(request: LLMRequest) -> str:
        return f"```sql\nSELECT {request.temperature} + {request.sample}\n```"

    first, second = ScriptedLLM(reply, model="a"), ScriptedLLM("no idea", model="b")
    meter = UsageMeter({})
    candidates = generate_candidates(
        [first, second], prompt, SamplingPlan(temperatures=(0.0, 0.5), samples=2), meter=meter
    )
    assert [c.index for c in candidates] == list(range(8))
    assert [(c.llm, c.temperature, c.sample) for c in candidates[:4]] == [
        ("scripted:a", 0.0, 0),
        ("scripted:a", 0.0, 1),
        ("scripted:a", 0.5, 0),
        ("scripted:a", 0.5, 1),
    ]
    assert candidates[3].sql == "SELECT 0.5 + 1"
    assert all(c.sql is None and c.reply == "no idea" for c in candidates[4:])  # malformed
    assert meter.report()["stages"]["candidates"]["calls"] == 8


def test_run_candidates_records_results_errors_and_missing_sql(
    run_all: Callable[..., list[Executed]],
) -> None:
    executed = run_all(
        "SELECT count(*) FROM singer", "SELECT nope FROM singer", None, "DROP TABLE singer"
    )
    assert executed[0].ok and executed[0].result is not None
    assert executed[0].result.rows == ((6,),)
    assert not executed[1].ok and "no such column" in (executed[1].error or "")
    assert executed[2].error == "the reply contained no SQL"
    assert executed[3].error is not None and executed[3].error.startswith("refused")
    summary = executed[1].as_dict()
    assert summary["ok"] is False and summary["sql"] == "SELECT nope FROM singer"


def test_result_key_ignores_row_order_column_order_and_int_float() -> None:
    a = QueryResult(("x", "y"), ((1, "a"), (2, "b")))
    b = QueryResult(("y", "x"), (("b", 2.0), ("a", 1)))
    c = QueryResult(("x", "y"), ((1, "a"), (2, "c")))
    d = QueryResult(("x", "y"), ((1, "a"), (1, "a"), (2, "b")))
    assert result_key(a) == result_key(b)
    assert result_key(a) != result_key(c)
    assert result_key(a) != result_key(d)  # multiplicity counts
    assert result_key(QueryResult(("x",), ())) == result_key(QueryResult(("y", "z"), ()))


def test_cached_runner_runs_each_sql_once(concert_runner: Runner) -> None:
    calls: list[str] = []

    def counting(sql: str) -> object:
        calls.append(sql)
        return concert_runner(sql)

    run = cached_runner(counting)  # type: ignore[arg-type]
    candidates = [Candidate(i, "SELECT 1", "m") for i in range(3)]
    assert all(e.ok for e in run_candidates(candidates, run))
    assert calls == ["SELECT 1"]
