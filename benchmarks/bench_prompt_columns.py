"""What a generation prompt keeps under its token budget: columns left out before tables.

For each question, the prompt (`generator.build_prompt`, no few-shot examples) is built over
the gold database's tables (all of them, or the gold tables only) at several budgets, twice: as
shipped (columns left out before whole tables) and with column cuts turned off (whole tables
dropped, the behaviour before). Reported per budget: prompts that do not fit at all, prompts
that keep every gold table, prompts that keep every gold column (each column name the gold SQL
uses that one of the gold tables has, shown in that table), and the median of the tokens used.
With column cuts on, also what a judge reads beside the candidates within the critique's schema
clip (`CritiqueConfig.max_schema_chars`, 8,000 characters) when the gold SQL is one of them:
before, every column of the prompt's tables (`create_table_text`), clipped; now, `judge_schema`
(the prompt's columns and those the candidates name, cut by columns to that length); and now
when no candidate names the gold columns (the columns the prompt showed, cut to that length).

Questions: a Spider-layout question file over its tables.json (schema-only pools: no sample
rows), or `--estate N`: a generated estate of N databases (`evaluation.estates`, seed 0, a
third of the tables wide: 100-400 columns) and, for every traversal through a wide table, two
template (question, SQL) pairs of the indexer's synthesizer, with 3 sample rows per table.

    .venv/bin/python benchmarks/bench_prompt_columns.py \
        --tables .schemarag/bird-train/tables.json --docs .schemarag/bird-train/docs.json \
        --questions .schemarag/bird-train/questions.json --budgets 6000 3000 1500
    .venv/bin/python benchmarks/bench_prompt_columns.py --estate 100 --budgets 6000 3000
"""

from __future__ import annotations

import argparse
import logging
import re
import statistics
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlglot
from sqlglot import exp

import generator.prompt as prompt_module
from evaluation.datasets import BenchQuestion, load_files
from evaluation.estates import EstateSpec, generate_estate
from generator import PromptBudgetError, PromptConfig, build_prompt
from generator.critique import CritiqueConfig
from generator.prompt import judge_schema, prompt_sample
from generator.text import clip
from indexer.synthesis.pairs import SynthesisRequest
from indexer.synthesis.templates import TemplateSynthesizer
from schemagraph import build_graph, enumerate_traversals, load_spider, sample_database
from schemagraph.model import Catalog, Database, fold
from schemagraph.serialize import create_table_text, ident
from schemagraph.sources.docs import apply_overlay
from schemagraph.sql import tables_in_sql

REPO = Path(__file__).resolve().parent.parent


@contextmanager
def without_column_cuts() -> Iterator[None]:
    """`build_prompt` as before column cuts: no column may go, so whole tables do."""
    shipped = prompt_module._cuttable
    prompt_module._cuttable = lambda db, tables, named: {fold(t): [] for t in tables}
    try:
        yield
    finally:
        prompt_module._cuttable = shipped


def gold_columns(sql: str, db: Database, tables: list[str]) -> set[tuple[str, str]]:
    """(folded table, folded column) for each column name of `sql` one of `tables` has."""
    names = {fold(c.name) for c in sqlglot.parse_one(sql, read="sqlite").find_all(exp.Column)}
    out = set()
    for table in tables:
        for column in db.table(table).columns:
            if fold(column.name) in names:
                out.add((fold(table), fold(column.name)))
    return out


def estate_questions(databases: int, work: Path) -> tuple[Catalog, list[BenchQuestion]]:
    """A generated estate with a third of its tables wide, and template pairs through them."""
    generate_estate(EstateSpec(databases, wide_share=1 / 3), work)
    catalog = load_spider(work)
    graph = build_graph(catalog)
    questions = []
    for db in catalog:
        wide = {fold(t.name) for t in db.tables if len(t.columns) >= 100}
        sample = sample_database(db)
        for traversal in enumerate_traversals(graph, databases=[db.id]):
            if not wide & {fold(t) for t in traversal.tables}:
                continue
            request = SynthesisRequest(db, traversal, sample, count=2, seed=0)
            for pair in TemplateSynthesizer().synthesize(request):
                gold = frozenset((fold(db.id), fold(t)) for t in tables_in_sql(pair.sql))
                questions.append(BenchQuestion(pair.question, pair.sql, db.id, gold, None))
    return catalog, questions


def measure(
    catalog: Catalog, questions: list[BenchQuestion], budget: int, gold_only: bool, rows: int
) -> dict[str, float]:
    failed = tables_kept = columns_kept = 0
    judged = {"before": 0, "now": 0, "alone": 0}
    clip_at = CritiqueConfig().max_schema_chars
    tokens: list[int] = []
    samples = {}
    for q in questions:
        db = catalog.database(q.db_id)
        if rows and db.id not in samples:
            samples[db.id] = prompt_sample(db, PromptConfig(sample_rows=rows))
        gold_tables = [db.table(t).name for d, t in sorted(q.gold)]
        wanted = gold_columns(q.sql, db, gold_tables)
        try:
            prompt = build_prompt(
                q.question,
                db,
                tables=gold_tables if gold_only else None,
                sample=samples.get(db.id) if rows else None,
                config=PromptConfig(budget_tokens=budget, sample_rows=rows),
            )
        except PromptBudgetError:
            failed += 1
            continue
        tokens.append(prompt.tokens)
        shown = {fold(t) for t in prompt.tables}
        if all(fold(t) in shown for t in gold_tables):
            tables_kept += 1
            if all(_shown(prompt.user, db.table(t).name, c) for t, c in wanted):
                columns_kept += 1
            schemas = {
                "before": create_table_text(db, list(prompt.tables)),
                "now": judge_schema(q.question, db, prompt, [q.sql], max_chars=clip_at),
                "alone": judge_schema(q.question, db, prompt, max_chars=clip_at),
            }
            for when, schema in schemas.items():
                text = clip(schema, clip_at)
                if all(_shown(text, db.table(t).name, c) for t, c in wanted):
                    judged[when] += 1
    n = len(questions)
    return {
        "failed": 100 * failed / n,
        "gold tables kept": 100 * tables_kept / n,
        "gold columns kept": 100 * columns_kept / n,
        "median tokens": statistics.median(tokens) if tokens else 0.0,
        "judge before": 100 * judged["before"] / n,
        "judge now": 100 * judged["now"] / n,
        "judge now, no candidate": 100 * judged["alone"] / n,
    }


def _shown(text: str, table: str, column: str) -> bool:
    """Whether `column` has its line in `table`'s CREATE TABLE statement of the prompt `text`."""
    start = text.find(f"CREATE TABLE {ident(table)} (")
    end = text.find("\n);", start)
    names = (_NAME.match(line) for line in text[start:end].splitlines()[1:])
    return any(fold(m.group(1).strip('"').replace('""', '"')) == column for m in names if m)


_NAME = re.compile(r'\s*("(?:[^"]|"")*"|\S+)')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path)
    parser.add_argument("--questions", type=Path)
    parser.add_argument("--docs", type=Path, action="append", default=[])
    parser.add_argument("--estate", type=int, metavar="N", help="a generated estate instead")
    parser.add_argument("--budgets", type=int, nargs="+", default=[6000, 3000, 1500])
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    if args.estate:
        work = Path(tempfile.mkdtemp(prefix="estate-"))
        catalog, questions = estate_questions(args.estate, work)
        rows = 3
    else:
        if args.tables is None or args.questions is None:
            parser.error("give --tables and --questions, or --estate N")
        dataset = load_files(args.tables, args.questions)
        catalog, questions, rows = dataset.catalog, list(dataset.questions), 0
        for file in args.docs:
            catalog = apply_overlay(catalog, "docs", file)
    print(f"{len(questions)} questions, {len(catalog.databases)} databases")
    print(
        "| tables shown | budget | column cuts | failed % | gold tables kept % "
        "| gold columns kept % | median tokens | judge sees them %, before | now "
        "| now, gold SQL not a candidate |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for gold_only in (False, True):
        for budget in args.budgets:
            for label in ("off (before)", "on"):
                if label == "on":
                    row = measure(catalog, questions, budget, gold_only, rows)
                else:
                    with without_column_cuts():
                        row = measure(catalog, questions, budget, gold_only, rows)
                print(
                    f"| {'gold' if gold_only else 'database'} | {budget} | {label} | "
                    + " | ".join(
                        f"{v:.1f}" if "tokens" not in k else f"{v:.0f}" for k, v in row.items()
                    )
                    + " |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
