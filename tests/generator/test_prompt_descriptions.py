"""Descriptions in generation prompts: SQL comments in the schema, the first thing the budget
cuts, and words that keep a described table when tables must go."""

from __future__ import annotations

from dataclasses import replace

import sqlglot

from generator import FewShot, PromptConfig, build_prompt
from schemagraph import Catalog, Column, Database, Table, create_table_text
from schemagraph.documentation import describe

LAB = Table(
    "Laboratory",
    (Column("ID", "INTEGER", True), Column("T-BIL", "REAL"), Column("GOT", "REAL")),
)
WARD = Table("Ward", (Column("ID", "INTEGER", True), Column("name", "TEXT")))
PLAIN = Database("clinic", (WARD, LAB))
DESCRIBED = next(
    iter(
        describe(
            Catalog((PLAIN,)),
            {
                ("clinic", "laboratory", ""): "Results of laboratory tests",
                ("clinic", "laboratory", "t-bil"): "total bilirubin\nin mg/dL",
            },
        )
    )
)
QUESTION = "Which patients have a total bilirubin above 2?"
EXAMPLE = FewShot("How many wards are there?", "SELECT count(*) FROM Ward")


def test_schema_text_shows_descriptions_as_sql_comments_that_still_parse() -> None:
    text = create_table_text(DESCRIBED)
    assert "-- Results of laboratory tests\nCREATE TABLE Laboratory (" in text
    assert '  "T-BIL" REAL, -- total bilirubin in mg/dL\n' in text
    assert [e.sql(comments=False) for e in sqlglot.parse(text)] == [
        e.sql() for e in sqlglot.parse(create_table_text(PLAIN))
    ]
    assert create_table_text(DESCRIBED, descriptions=False) == create_table_text(PLAIN)


def test_descriptions_are_cut_first_when_over_budget() -> None:
    config = PromptConfig()
    full = build_prompt(QUESTION, DESCRIBED, examples=[EXAMPLE], config=config)
    assert "-- total bilirubin" in full.user and not full.cuts.any
    cut = build_prompt(
        QUESTION,
        DESCRIBED,
        examples=[EXAMPLE],
        config=replace(config, budget_tokens=full.tokens - 1),
    )
    assert "total bilirubin" not in cut.user.split("### Question")[0]
    assert cut.cuts.descriptions_dropped and cut.examples == 1
    assert cut.cuts.notes() == ["dropped the descriptions"]
    plain = build_prompt(QUESTION, PLAIN, examples=[EXAMPLE], config=config)
    assert not plain.cuts.descriptions_dropped


def test_a_table_whose_description_matches_the_question_is_kept_longest() -> None:
    # Laboratory shares no name word with the question, only description words: without them
    # it is the later table of two equals and goes first
    for db, kept in ((PLAIN, "Ward"), (DESCRIBED, "Laboratory")):
        one_table = build_prompt(QUESTION, db, tables=[kept], config=PromptConfig(sample_rows=0))
        prompt = build_prompt(
            QUESTION, db, config=PromptConfig(sample_rows=0, budget_tokens=one_table.tokens)
        )
        assert prompt.tables == (kept,)
