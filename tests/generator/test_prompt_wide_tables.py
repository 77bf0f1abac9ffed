"""Wide tables in the prompt: over the budget, columns are left out before whole tables; the
judges read the prompt's columns and those the candidates name."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from generator import (
    CritiqueConfig,
    GenerationConfig,
    Models,
    PromptBudgetError,
    PromptConfig,
    SamplingPlan,
    build_prompt,
    generate_sql,
)
from generator.prompt import judge_schema
from generator.text import approx_tokens
from providers import ScriptedLLM
from schemagraph import Database, DatabaseSample, TableSample, create_table_text
from schemagraph.model import Column, ForeignKey, Table

QUESTION = "How many customers are there in each loyalty tier of the North region?"
WIDE = 300


def estate() -> Database:
    """A 300-column customer table between a region table and an orders table."""
    customers = Table(
        "customer_360",
        (
            Column("customer_id", "integer", primary_key=True),
            Column("full_name", "text"),
            Column("region_id", "integer"),
            *(Column(f"attr_{i:03d}", "real") for i in range(WIDE - 4)),
            Column("loyalty_tier", "text"),
        ),
        (ForeignKey("customer_360", ("region_id",), "region", ("region_id",)),),
    )
    region = Table(
        "region",
        (Column("region_id", "integer", primary_key=True), Column("region_name", "text")),
    )
    orders = Table(
        "orders",
        (
            Column("order_id", "integer", primary_key=True),
            Column("customer_id", "integer"),
            Column("amount", "real"),
        ),
        (ForeignKey("orders", ("customer_id",), "customer_360", ("customer_id",)),),
    )
    return Database("crm", (customers, region, orders))


def sample(db: Database) -> DatabaseSample:
    tables = {}
    for table in db.tables:
        names = tuple(c.name for c in table.columns)
        row = tuple(f"{table.name}-{c}" for c in names)
        tables[table.name.lower()] = TableSample(table.name, names, (row,), 1, {})
    return DatabaseSample(db.id, tables)


def size(db: Database, **kwargs: object) -> int:
    config = PromptConfig(budget_tokens=100_000)
    return build_prompt(QUESTION, db, config=config, **kwargs).tokens  # type: ignore[arg-type]


def shown_columns(prompt_text: str, table: str) -> list[str]:
    statement = re.search(rf"CREATE TABLE {table} \(\n(.*?)\n\);", prompt_text, re.DOTALL)
    assert statement is not None
    return [
        line.split()[0]
        for line in statement.group(1).splitlines()
        if line.strip() and not line.strip().startswith(("/*", "PRIMARY", "FOREIGN"))
    ]


def test_columns_go_before_tables_and_keys_stay() -> None:
    db = estate()
    full = size(db, sample=sample(db))
    budget = size(db, tables=["region", "orders"]) + 400  # far below the wide table's size
    assert budget < full / 3
    prompt = build_prompt(
        QUESTION, db, sample=sample(db), config=PromptConfig(budget_tokens=budget)
    )
    assert prompt.tokens <= budget
    assert prompt.tables == ("customer_360", "region", "orders")  # no table dropped
    assert prompt.cuts.tables_dropped == ()
    shown = shown_columns(prompt.user, "customer_360")
    # the keys, the first column and the column the question names are kept
    for column in ("customer_id", "full_name", "region_id", "loyalty_tier"):
        assert column in shown
    hidden = WIDE - len(shown)
    assert hidden > WIDE // 2
    assert prompt.cuts.columns_dropped == (("customer_360", hidden),)
    assert f"/* {hidden} more columns not shown */" in prompt.user
    assert f"left out column(s): {hidden} of customer_360" in prompt.cuts.notes()
    assert prompt.cuts.as_dict()["columns_dropped"] == {"customer_360": hidden}
    # the narrow tables are whole, and the sample rows show only the columns shown
    assert shown_columns(prompt.user, "orders") == ["order_id", "customer_id", "amount"]
    assert "customer_360-loyalty_tier" in prompt.user or prompt.sample_rows == 0
    assert "customer_360-attr_200" not in prompt.user
    assert "attr_200" not in prompt.user


def test_narrow_tables_go_whole_and_only_the_last_one_is_cut() -> None:
    db = estate()
    narrow = Database("crm", db.tables[1:])  # region and orders: a few columns each
    question = "How many orders are there?"
    one = build_prompt(question, narrow, tables=["orders"]).tokens
    prompt = build_prompt(question, narrow, config=PromptConfig(budget_tokens=one))
    assert prompt.tables == ("orders",) and prompt.cuts.tables_dropped == ("region",)
    assert prompt.cuts.columns_dropped == ()  # the table left fits whole
    prompt = build_prompt(question, narrow, config=PromptConfig(budget_tokens=one - 2))
    assert prompt.tables == ("orders",) and prompt.cuts.columns_dropped
    assert shown_columns(prompt.user, "orders")[0] == "order_id"


def test_the_last_columns_go_first() -> None:
    db = estate()
    whole = size(db)
    prompt = build_prompt(QUESTION, db, config=PromptConfig(budget_tokens=whole - 20))
    shown = shown_columns(prompt.user, "customer_360")
    assert prompt.cuts.columns_dropped and "attr_000" in shown and "attr_295" not in shown


def test_a_schema_that_fits_is_not_cut() -> None:
    db = estate()
    prompt = build_prompt(QUESTION, db, config=PromptConfig(budget_tokens=size(db)))
    assert not prompt.cuts.any and len(shown_columns(prompt.user, "customer_360")) == WIDE


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=120, max_value=4000))
def test_any_budget_is_kept_and_shown_tables_keep_their_keys(budget: int) -> None:
    db = estate()
    try:
        config = PromptConfig(budget_tokens=budget)
        prompt = build_prompt(QUESTION, db, sample=sample(db), config=config)
    except PromptBudgetError:
        return
    assert approx_tokens(prompt.system) + approx_tokens(prompt.user) == prompt.tokens <= budget
    for name in prompt.tables:
        table = db.table(name)
        shown = shown_columns(prompt.user, table.name)
        assert table.columns[0].name in shown and set(table.primary_key) <= set(shown)
        hidden = dict(prompt.cuts.columns_dropped).get(table.name.lower(), 0)
        assert len(shown) + hidden == len(table.columns)
        left_out = prompt.hidden.get(table.name.lower(), frozenset())
        assert len(left_out) == hidden and not left_out & set(shown)


def test_judges_read_the_prompts_columns_and_those_the_candidates_name() -> None:
    db = estate()
    budget = size(db, tables=["region", "orders"]) + 400
    prompt = build_prompt(QUESTION, db, config=PromptConfig(budget_tokens=budget))
    assert "attr_250" in prompt.hidden["customer_360"]
    assert "loyalty_tier" not in prompt.hidden["customer_360"]
    schema = judge_schema(QUESTION, db, prompt)
    for table in prompt.tables:
        assert shown_columns(schema, table) == shown_columns(prompt.user, table)
    # every column of the prompt's tables, as judges read before, is three times as long
    assert len(create_table_text(db, list(prompt.tables))) > 3 * len(schema)
    named = judge_schema(
        QUESTION,
        db,
        prompt,
        ["SELECT attr_250 FROM customer_360 WHERE ATTR_251 > 0", None, "SELEC((("],
    )
    extra = set(shown_columns(named, "customer_360")) - set(shown_columns(schema, "customer_360"))
    assert extra == {"attr_250", "attr_251"}
    assert shown_columns(named, "orders") == ["order_id", "customer_id", "amount"]


def test_a_prompt_with_nothing_left_out_gives_judges_its_whole_tables() -> None:
    db = estate()
    prompt = build_prompt(QUESTION, db, tables=["region", "orders"])
    assert prompt.hidden == {}
    assert judge_schema(QUESTION, db, prompt) == create_table_text(db, ["region", "orders"])


def test_a_judges_schema_over_its_length_is_cut_by_columns_not_clipped() -> None:
    db = estate()
    prompt = build_prompt(QUESTION, db, config=PromptConfig(budget_tokens=100_000))
    assert not prompt.cuts.any
    whole = judge_schema(QUESTION, db, prompt)
    limit = len(whole) // 3
    sql = "SELECT attr_250 FROM customer_360"
    schema = judge_schema(QUESTION, db, prompt, [sql], max_chars=limit)
    assert len(schema) <= limit < len(whole)
    shown = shown_columns(schema, "customer_360")
    assert {"customer_id", "region_id", "loyalty_tier", "attr_250", "attr_000"} <= set(shown)
    assert "attr_249" not in shown and "attr_294" not in shown
    assert f"/* {WIDE - len(shown)} more columns not shown */" in schema
    # the narrow tables keep every column; the wide one its first other columns
    assert shown_columns(schema, "orders") == ["order_id", "customer_id", "amount"]
    assert shown_columns(schema, "region") == ["region_id", "region_name"]
    attrs = [c for c in shown if c.startswith("attr_") and c != "attr_250"]
    assert attrs == [f"attr_{i:03d}" for i in range(len(attrs))]
    # nothing fits: the tightest cut, left to the judge's clip
    tightest = judge_schema(QUESTION, db, prompt, max_chars=10)
    assert "attr_000" not in shown_columns(tightest, "customer_360")
    assert "CREATE TABLE orders" in tightest


def test_the_critique_sees_the_cut_schema_with_the_candidates_columns(tmp_path: Path) -> None:
    path = tmp_path / "crm.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(create_table_text(estate()))
    db = Database("crm", estate().tables, path=path)
    linked = "SELECT loyalty_tier FROM customer_360 JOIN region USING (region_id)"
    first = "SELECT loyalty_tier, count(*) FROM customer_360 GROUP BY loyalty_tier"
    second = "SELECT attr_250, count(*) FROM customer_360 GROUP BY attr_250"
    writer = ScriptedLLM([f"```sql\n{sql}\n```" for sql in (linked, first, second)])
    judge = ScriptedLLM('{"best": 1}', model="judge")
    budget = size(db, tables=["region"]) + 300
    config = GenerationConfig(
        strategy="critique",
        prompt=PromptConfig(budget_tokens=budget, sample_rows=0),
        sampling=SamplingPlan(temperatures=(0.0, 0.8), max_concurrency=1),
        critique=CritiqueConfig(budget_tokens=20_000),
    )
    result = generate_sql(QUESTION, db, Models((writer,), critic=judge), config=config)
    assert result.sql == first
    shown = shown_columns(judge.calls[0].messages[-1].content, "customer_360")
    assert {"loyalty_tier", "region_id", "attr_000", "attr_250"} <= set(shown)
    assert "attr_200" not in shown and len(shown) < WIDE // 2


def test_a_critique_pair_over_its_budget_reads_a_cut_schema_not_a_clipped_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "crm.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(create_table_text(estate()))
    db = Database("crm", estate().tables, path=path)
    sqls = (
        "SELECT loyalty_tier FROM customer_360 JOIN region USING (region_id)",
        "SELECT loyalty_tier, count(*) FROM customer_360 GROUP BY loyalty_tier",
        "SELECT attr_250, count(*) FROM customer_360 GROUP BY attr_250",
    )
    writer = ScriptedLLM([f"```sql\n{sql}\n```" for sql in sqls])
    judge = ScriptedLLM('{"best": 1}', model="judge")
    config = GenerationConfig(
        strategy="critique",
        prompt=PromptConfig(budget_tokens=100_000, sample_rows=0),
        sampling=SamplingPlan(temperatures=(0.0, 0.4, 0.8), max_concurrency=1),
        # two candidates a call, and a pair with the whole schema is over the budget
        critique=CritiqueConfig(budget_tokens=900, max_per_call=2),
    )
    generate_sql(QUESTION, db, Models((writer,), critic=judge), config=config)
    assert judge.call_count == 2
    for call in judge.calls:
        text = call.messages[-1].content
        schema = re.search(r"<schema>\n(.*?)\n</schema>", text, re.DOTALL)
        assert schema is not None and not schema.group(1).endswith("…")
        # every table whole but for the wide one's columns, which keep their keys
        assert re.findall(r"CREATE TABLE \w+", schema.group(1)) == [
            "CREATE TABLE customer_360",
            "CREATE TABLE region",
        ]
        shown = shown_columns(schema.group(1), "customer_360")
        assert {"customer_id", "region_id", "loyalty_tier"} <= set(shown)
        # the column a candidate of this pair names, and only then
        assert ("attr_250" in shown) == ("attr_250, count(*)" in text)
    assert any("attr_250, count(*)" in call.messages[-1].content for call in judge.calls)


def test_a_judge_loses_the_descriptions_before_any_column() -> None:
    region = Table(
        "region",
        (
            Column("region_id", "integer", primary_key=True, description="the region's number"),
            Column("region_name", "text", description="North, South, East or West"),
        ),
    )
    db = Database("crm", (region,))
    prompt = build_prompt(QUESTION, db)
    described = judge_schema(QUESTION, db, prompt)
    bare = create_table_text(db, descriptions=False)
    assert "North, South" in described and len(bare) < len(described)
    assert judge_schema(QUESTION, db, prompt, max_chars=len(bare)) == bare


def test_a_wide_tables_own_columns_stay_before_its_column_families() -> None:
    columns = [Column("sale_id", "integer", primary_key=True)]
    for month in range(1, 13):
        columns.append(Column(f"m{month}_revenue", "real"))
        columns += [Column(f"w{4 * month + k - 4}_cost", "real") for k in range(1, 5)]
        if month in (3, 6, 9):
            columns.append(Column({3: "region", 6: "product", 9: "channel"}[month], "text"))
    db = Database("sales", (Table("sales_wide", tuple(columns)),))
    question = "How many sales are there per region?"
    whole = build_prompt(question, db, config=PromptConfig(budget_tokens=100_000)).tokens
    prompt = build_prompt(question, db, config=PromptConfig(budget_tokens=whole * 2 // 3))
    shown = shown_columns(prompt.user, "sales_wide")
    assert shown[:1] == ["sale_id"] and {"region", "product", "channel"} <= set(shown)
    # then each family's first member, then the other members in schema order, as fit
    assert {"m1_revenue", "w1_cost"} <= set(shown)
    firsts = {"sale_id", "region", "product", "channel", "m1_revenue", "w1_cost"}
    later = [c.name for c in columns if c.name not in firsts]
    kept = [c for c in shown if c in later]
    assert 0 < len(kept) < len(later) and kept == later[: len(kept)]
    assert f"/* {len(later) - len(kept)} more columns not shown */" in prompt.user
