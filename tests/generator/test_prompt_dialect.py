"""Generation prompts speak the database's engine: its name, its table names, its rules."""

from __future__ import annotations

from generator.prompt import INSTRUCTION, SYSTEM_PROMPT, build_prompt
from schemagraph import Column, Database, Table


def _shards(dialect: str) -> Database:
    columns = (
        Column("fullVisitorId", "STRING"),
        Column("hits", "ARRAY<STRUCT>"),
        Column("hits.type", "STRING"),
    )
    return Database(
        "ga360",
        tuple(
            Table(
                f"web__ga_sessions_2017080{day}",
                columns,
                engine_name=("acme-prod", "web", f"ga_sessions_2017080{day}"),
            )
            for day in range(1, 5)
        ),
        dialect=dialect,
    )


def test_a_bigquery_prompt_asks_for_bigquery_in_its_own_names() -> None:
    prompt = build_prompt("How many sessions had a page hit?", _shards("bigquery"))
    system, user = prompt.system, prompt.user
    assert "BigQuery" in system and "SQLite" not in system + user
    assert "UNNEST" in user
    assert "CREATE TABLE `acme-prod.web.ga_sessions_20170804`" in user
    assert "`acme-prod.web.ga_sessions_*`" in user and "_TABLE_SUFFIX BETWEEN '20170801'" in user
    assert "web__ga_sessions" not in user


def test_a_sqlite_prompt_is_as_before() -> None:
    prompt = build_prompt("How many sessions had a page hit?", _shards(""))
    assert prompt.system == SYSTEM_PROMPT
    assert INSTRUCTION in prompt.user
    assert "UNION ALL" in prompt.user


def test_linking_reads_warehouse_sql_in_its_dialect_and_wildcards_cover_their_family() -> None:
    from generator.linking import link_tables

    db = _shards("bigquery")
    sql = (
        "SELECT COUNT(*) FROM `acme-prod.web.ga_sessions_2017080*`, UNNEST(hits) AS h "
        "WHERE _TABLE_SUFFIX BETWEEN '20170801' AND '20170803'"
    )
    linked = link_tables(db, sql, ["web__ga_sessions_20170804"])
    assert not linked.fallback and linked.unknown == ()
    assert set(linked.tables) == {t.name for t in db.tables}
    assert link_tables(db, "SELECT 1 FROM `acme-prod.web.nope`", []).unknown == ("nope",)
