"""`check` (schemagraph.sql.check) on Spider 2.0-lite's gold SQL and on seeded mutations of it.

The catalog is the estate as the engines export it (`infoschema/`: BigQuery, Snowflake, the
SQLite DDL); each question's database is its `db_id`. Measured:

- the gold SQL of `questions_dev.json` (136 queries): the share `check` accepts, and every
  rejection with its reason;
- `--mutations` (500) seeded mutations of the accepted gold SQL, made on the sqlglot tree, a
  quarter of each kind:
  - `column_renamed`: a column renamed to a near name (one letter dropped, doubled, swapped or
    changed) that no table of the database and no name of the query has;
  - `table_swapped`: a table replaced by a sibling (same dataset or schema) that lacks a column
    the query reads through it;
  - `nested_path_broken`: a RECORD field path (`totals.pageviews`, `h.page.pagePath`) with a
    field misspelt, dropped, or taken from another RECORD, so that no column has the path;
  - `column_moved`: `a.col` written `b.col`, where `b` is another table of the same FROM that
    has no column `col`;
  each counts as caught when `check` rejects it with a problem naming the wrong name;
- time per check (p50, p99) on the gold SQL after a warm-up pass (the per-database index is
  built by the first check of a database: that first time is reported apart).

Mutations are made only from gold SQL whose sqlglot rendering `check` still accepts, so a
rejection is the mutation's. Nothing runs: the catalog has no connection.

    flock /tmp/heavy.lock nice -n 10 .venv/bin/python benchmarks/bench_check.py \\
        [--data ../shared/data/spider2-lite] [--mutations 500] [--seed 0] \\
        [--result benchmarks/results/check.json]
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from schemagraph.dialects import dialect_of, name_parts
from schemagraph.model import Catalog, Database, Table, fold
from schemagraph.sources import load_catalog
from schemagraph.sql.check import CheckResult, check_sql
from schemarag.cli.result_file import commit, machine

REPO = Path(__file__).resolve().parent.parent
KINDS = ("column_renamed", "table_swapped", "nested_path_broken", "column_moved")
ATTEMPTS = 500  # failed tries in a row after which a kind is given up
EXAMPLES = 2  # mutations of each kind shown in the result file with the problem found


@dataclass(frozen=True)
class Mutation:
    kind: str
    instance_id: str
    db_id: str
    sql: str
    wrong: tuple[str, ...]  # a rejection must name one of these
    change: str  # what was changed, for the list of misses


@dataclass(frozen=True)
class Gold:
    instance_id: str
    db: Database
    sql: str


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/spider2-lite")
    parser.add_argument("--mutations", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--result", type=Path, default=None, help="write the result file here")
    args = parser.parse_args(argv)

    infoschema = args.data / "infoschema"
    sources = [
        f"infoschema:{infoschema}/bigquery",
        f"infoschema:{infoschema}/snowflake",
        f"ddl[sqlite]:{infoschema}/sqlite",
    ]
    started = time.perf_counter()
    catalog = load_catalog(sources)
    load_s = time.perf_counter() - started
    print(f"catalog: {len(catalog)} databases, {catalog.table_count} tables, {load_s:.1f} s")
    questions = json.loads((args.data / "questions_dev.json").read_text())
    golds = [
        Gold(q["instance_id"], catalog.database(q["db_id"]), q["gold_sql"])
        for q in questions
        if q.get("gold_sql")
    ]

    first_ms: list[float] = []
    seen: set[str] = set()
    for gold in golds:  # warm-up: each database's index is built by its first check
        ms, _ = timed(gold.db, gold.sql, catalog)
        if gold.db.id not in seen:
            seen.add(gold.db.id)
            first_ms.append(ms)
    gold_ms: list[float] = []
    rejected: list[dict[str, Any]] = []
    by_engine: Counter[str] = Counter()
    accepted_by_engine: Counter[str] = Counter()
    for gold in golds:
        ms, result = timed(gold.db, gold.sql, catalog)
        gold_ms.append(ms)
        by_engine[result.dialect] += 1
        if result.ok:
            accepted_by_engine[result.dialect] += 1
        else:
            rejected.append(
                {
                    "instance_id": gold.instance_id,
                    "db_id": gold.db.id,
                    "problems": [f"{p.kind.value}: {p.message}" for p in result.problems],
                }
            )
    accepted = len(golds) - len(rejected)
    print(f"gold: {accepted} of {len(golds)} accepted ({100 * accepted / len(golds):.1f} %)")
    for item in rejected:
        print(f"  rejected {item['instance_id']} ({item['db_id']}): {item['problems']}")

    usable = [g for g in golds if _renders_accepted(g, catalog)]
    mutations = make_mutations(usable, args.mutations, args.seed)
    caught: Counter[str] = Counter()
    rejected_kind: Counter[str] = Counter()
    made: Counter[str] = Counter()
    mutation_ms: list[float] = []
    misses: list[dict[str, Any]] = []
    examples: list[dict[str, Any]] = []
    for mutation in mutations:
        db = catalog.database(mutation.db_id)
        ms, result = timed(db, mutation.sql, catalog)
        mutation_ms.append(ms)
        made[mutation.kind] += 1
        named = names_wrong(result, mutation.wrong)
        rejected_kind[mutation.kind] += not result.ok
        caught[mutation.kind] += named
        if made[mutation.kind] <= EXAMPLES and result.problems:
            examples.append(
                {
                    "kind": mutation.kind,
                    "instance_id": mutation.instance_id,
                    "change": mutation.change,
                    "problem": f"{result.problems[0].kind.value}: {result.problems[0].message}",
                }
            )
        if not named:
            misses.append(
                {
                    "kind": mutation.kind,
                    "instance_id": mutation.instance_id,
                    "change": mutation.change,
                    "verdict": "accepted"
                    if result.ok
                    else "rejected naming " + "; ".join(p.name for p in result.problems),
                }
            )
    total = len(mutations)
    print(
        f"mutations: {sum(caught.values())} of {total} rejected naming the wrong name "
        f"({100 * sum(caught.values()) / max(total, 1):.1f} %)"
    )
    for kind in KINDS:
        print(f"  {kind}: {caught[kind]} of {made[kind]}")
    for miss in misses:
        print(
            f"  missed {miss['kind']} {miss['instance_id']}: {miss['change']} ({miss['verdict']})"
        )
    print(
        f"time per check: gold p50 {percentile(gold_ms, 0.5):.2f} ms, p99 "
        f"{percentile(gold_ms, 0.99):.2f} ms; mutations p50 {percentile(mutation_ms, 0.5):.2f} ms"
    )

    if args.result is not None:
        result_file = {
            "benchmark": "check",
            "label": "check on Spider 2.0-lite gold SQL (infoschema/ export)",
            "command": shlex.join(["benchmarks/bench_check.py", *(argv or sys.argv[1:])]),
            "commit": commit(REPO),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine(),
            "catalog": {
                "sources": [s.replace(str(args.data), "$D") for s in sources],
                "databases": len(catalog),
                "tables": catalog.table_count,
            },
            "gold": {
                "queries": len(golds),
                "accepted": accepted,
                "accepted_pct": round(100 * accepted / len(golds), 1),
                "by_dialect": {
                    d: {"queries": n, "accepted": accepted_by_engine[d]}
                    for d, n in sorted(by_engine.items())
                },
                "rejected": rejected,
            },
            "mutations": {
                "seed": args.seed,
                "made": total,
                "from_queries": len(usable),
                "rejected": sum(rejected_kind.values()),
                "rejected_naming_the_wrong_name": sum(caught.values()),
                "caught_pct": round(100 * sum(caught.values()) / max(total, 1), 1),
                "by_kind": {
                    k: {"made": made[k], "rejected": rejected_kind[k], "caught": caught[k]}
                    for k in KINDS
                },
                "missed": misses,
                "examples": examples,
            },
            "time_ms": {
                "gold_p50": round(percentile(gold_ms, 0.5), 2),
                "gold_p99": round(percentile(gold_ms, 0.99), 2),
                "gold_max": round(max(gold_ms), 2),
                "mutations_p50": round(percentile(mutation_ms, 0.5), 2),
                "mutations_p99": round(percentile(mutation_ms, 0.99), 2),
                "first_check_of_a_database_p50": round(percentile(first_ms, 0.5), 2),
                "first_check_of_a_database_max": round(max(first_ms), 2),
            },
        }
        args.result.write_text(json.dumps(result_file, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {args.result}")
    return 0


def timed(db: Database, sql: str, catalog: Catalog) -> tuple[float, CheckResult]:
    started = time.perf_counter()
    result = check_sql(db, sql, catalog)
    return (time.perf_counter() - started) * 1000, result


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def names_wrong(result: CheckResult, wrong: tuple[str, ...]) -> bool:
    """Rejected, with a problem whose name holds one of the wrong names."""
    if result.ok:
        return False
    return any(fold(w) in fold(p.name) for p in result.problems for w in wrong)


# --- mutations ------------------------------------------------------------------------------


def _parse(gold: Gold) -> list[exp.Expr]:
    dialect = dialect_of(gold.db)
    return [t for t in sqlglot.parse(gold.sql, read=dialect) if t is not None]


def _render(trees: list[exp.Expr], dialect: str) -> str:
    return ";\n".join(t.sql(dialect=dialect) for t in trees)


def _renders_accepted(gold: Gold, catalog: Catalog) -> bool:
    """Whether sqlglot's rendering of the gold SQL (what mutations are written as) passes."""
    try:
        rendered = _render(_parse(gold), dialect_of(gold.db))
    except sqlglot.errors.SqlglotError:
        return False
    return check_sql(gold.db, rendered, catalog).ok


class _Names:
    """A database's names, folded: every column path and each of its parts, every table."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[frozenset[str], frozenset[str]]] = {}

    def of(self, db: Database) -> tuple[frozenset[str], frozenset[str]]:
        """(every name or path part, every full column path)."""
        held = self.cache.get(db.id)
        if held is None:
            words: set[str] = set()
            paths: set[str] = set()
            for table in db.tables:
                words.update(fold(p) for p in name_parts(table))
                words.add(fold(table.name))
                for column in table.columns:
                    paths.add(fold(column.name))
                    words.update(fold(p) for p in column.name.split("."))
            held = (frozenset(words), frozenset(paths))
            self.cache[db.id] = held
        return held


def _query_words(tree: exp.Expr) -> set[str]:
    return {fold(i.name) for i in tree.find_all(exp.Identifier)}


def near_name(name: str, rng: random.Random) -> str:
    """One edit of `name`: a letter dropped, doubled, swapped with the next, or changed."""
    letters = "aeiourstnl"
    i = rng.randrange(len(name))
    edit = rng.choice(("drop", "double", "swap", "change"))
    if edit == "drop" and len(name) > 3:
        return name[:i] + name[i + 1 :]
    if edit == "swap" and i + 1 < len(name) and name[i] != name[i + 1]:
        return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    if edit == "change" and name[i].isalpha():
        choice = rng.choice([c for c in letters if c != name[i].lower()])
        return name[:i] + (choice.upper() if name[i].isupper() else choice) + name[i + 1 :]
    return name[:i] + name[i] + name[i:]


def _aliases(tree: exp.Expr) -> set[str]:
    """Every name a FROM item goes by in the query (tables, CTEs, subqueries, UNNESTs)."""
    out = {fold(t.alias_or_name) for t in tree.find_all(exp.Table)}
    out |= {fold(c.alias) for c in tree.find_all(exp.CTE)}
    for node in tree.find_all(exp.Subquery, exp.Unnest, exp.Lateral, exp.TableFromRows):
        alias = node.args.get("alias")
        if isinstance(alias, exp.TableAlias):
            if alias.name:
                out.add(fold(alias.name))
            elif isinstance(node, exp.Unnest) and alias.columns:
                out.add(fold(alias.columns[0].name))
    return out


def _catalog_table(db: Database, node: exp.Table, ctes: set[str]) -> Table | None:
    """The table of `db` a FROM item names, by the last part of its engine name (and its
    qualifier where written); None for a CTE, a function, a wildcard or a miss."""
    if not isinstance(node.this, exp.Identifier) or node.name.endswith("*"):
        return None
    if not node.args.get("db") and fold(node.name) in ctes:
        return None
    parts = [fold(p.name) for p in node.parts]
    for table in db.tables:
        engine = [fold(p) for p in name_parts(table)]
        if engine[-1] != parts[-1] and fold(table.name) != parts[-1]:
            continue
        if len(parts) > 1 and engine[-len(parts) + 1 : -1] != parts[-len(parts) + 1 : -1]:
            continue
        return table
    return None


def _set_name(identifier: exp.Identifier, name: str, dialect: str) -> None:
    identifier.set("this", name)
    if dialect == "snowflake" and name != name.upper():
        identifier.set("quoted", True)


def mutate_column_renamed(gold: Gold, tree: exp.Expr, rng: random.Random, names: _Names) -> str:
    words, _ = names.of(gold.db)
    taken = words | _query_words(tree)
    columns = [
        c
        for c in tree.find_all(exp.Column)
        if not c.is_star and isinstance(c.this, exp.Identifier) and len(c.name) >= 3
    ]
    if not columns:
        return ""
    column = rng.choice(columns)
    new = near_name(column.name, rng)
    if fold(new) in taken:
        return ""
    old = column.sql(dialect=dialect_of(gold.db))
    _set_name(column.this, new, dialect_of(gold.db))
    return f"{old} -> {column.sql(dialect=dialect_of(gold.db))}|{new}"


def mutate_table_swapped(gold: Gold, tree: exp.Expr, rng: random.Random, names: _Names) -> str:
    ctes = {fold(c.alias) for c in tree.find_all(exp.CTE)}
    dialect = dialect_of(gold.db)
    options = []
    for node in tree.find_all(exp.Table):
        table = _catalog_table(gold.db, node, ctes)
        select = node.find_ancestor(exp.Select)
        if table is None or select is None:
            continue
        alias = fold(node.alias_or_name)
        used = {
            fold(c.parts[1].name)
            for c in select.find_all(exp.Column)
            if len(c.parts) >= 2
            and fold(c.parts[0].name) == alias
            and not c.is_star
            and c.find_ancestor(exp.Select) is select
        }
        if not used:
            continue
        qualifier = name_parts(table)[:-1]
        for sibling in gold.db.tables:
            if sibling is table or name_parts(sibling)[:-1] != qualifier:
                continue
            top = {fold(c.name.split(".")[0]) for c in sibling.columns}
            missing = sorted(used - top)
            if missing:
                options.append((node, sibling, missing))
    if not options:
        return ""
    node, sibling, missing = rng.choice(options)
    old = node.sql(dialect=dialect)
    _set_name(node.this, name_parts(sibling)[-1], dialect)
    return f"{old} -> {node.sql(dialect=dialect)}|" + ",".join(missing)


def mutate_nested_path_broken(gold: Gold, tree: exp.Expr, rng: random.Random, names: _Names) -> str:
    words, paths = names.of(gold.db)
    aliases = _aliases(tree)
    records = sorted({p.rsplit(".", 1)[0] for p in paths if "." in p})
    options = []
    for column in tree.find_all(exp.Column):
        parts = [p.name for p in column.parts]
        start = 1 if fold(parts[0]) in aliases and len(parts) > 2 else 0
        if fold(parts[0]) in aliases and len(parts) == 2:
            continue
        tail = ".".join(parts[start:])
        if len(parts) - start < 2 or not any(
            p == fold(tail) or p.endswith("." + fold(tail)) for p in paths
        ):
            continue
        options.append((column, parts, start))
    if not options:
        return ""
    column, parts, start = rng.choice(options)
    segment = rng.randrange(start, len(parts) - 1)
    edit = rng.choice(("misspell", "drop", "other_record"))
    new = list(parts)
    if edit == "misspell":
        new[segment] = near_name(parts[segment], rng)
        if fold(new[segment]) in words:
            return ""
    elif edit == "drop":
        del new[segment]
        if len(new) - start < 1 or (start and len(new) == 1):
            return ""
    else:
        others = [
            r.rsplit(".", 1)[-1] for r in records if r.rsplit(".", 1)[-1] != fold(parts[segment])
        ]
        if not others:
            return ""
        new[segment] = rng.choice(others)
    tail = fold(".".join(new[start:]))
    if any(p == tail or p.endswith("." + tail) for p in paths):
        return ""
    dialect = dialect_of(gold.db)
    old = column.sql(dialect=dialect)
    replacement = sqlglot.parse_one(".".join(new), read=dialect)
    column.replace(replacement)
    return f"{old} -> {replacement.sql(dialect=dialect)}|{'.'.join(new)}"


def mutate_column_moved(gold: Gold, tree: exp.Expr, rng: random.Random, names: _Names) -> str:
    ctes = {fold(c.alias) for c in tree.find_all(exp.CTE)}
    dialect = dialect_of(gold.db)
    options = []
    for select in tree.find_all(exp.Select):
        items = []
        from_ = select.args.get("from_")
        if from_ is not None:
            items.append(from_.this)
        items.extend(j.this for j in select.args.get("joins") or [])
        tables = {}
        for item in items:
            if isinstance(item, exp.Table):
                table = _catalog_table(gold.db, item, ctes)
                if table is not None:
                    tables[fold(item.alias_or_name)] = (item.alias_or_name, table)
        if len(tables) < 2:
            continue
        for column in select.find_all(exp.Column):
            if len(column.parts) != 2 or column.is_star:
                continue
            if column.find_ancestor(exp.Select) is not select:
                continue
            qualifier = fold(column.parts[0].name)
            if qualifier not in tables:
                continue
            for other, (written, table) in tables.items():
                if other == qualifier:
                    continue
                if not any(fold(c.name) == fold(column.name) for c in table.columns):
                    options.append((column, written))
    if not options:
        return ""
    column, written = rng.choice(options)
    old = column.sql(dialect=dialect)
    column.set("table", exp.to_identifier(written))
    return f"{old} -> {column.sql(dialect=dialect)}|{written}.{column.name}"


MUTATORS: dict[str, Callable[[Gold, exp.Expr, random.Random, _Names], str]] = {
    "column_renamed": mutate_column_renamed,
    "table_swapped": mutate_table_swapped,
    "nested_path_broken": mutate_nested_path_broken,
    "column_moved": mutate_column_moved,
}


def make_mutations(golds: list[Gold], count: int, seed: int) -> list[Mutation]:
    """`count` distinct mutations, the kinds in turn, each from a gold query drawn with a
    generator seeded by `seed`."""
    rng = random.Random(seed)
    names = _Names()
    made: list[Mutation] = []
    texts: set[str] = set()
    kinds = list(KINDS)
    failures = dict.fromkeys(KINDS, 0)
    turn = 0
    while len(made) < count and kinds:
        kind = kinds[turn % len(kinds)]
        gold = rng.choice(golds)
        trees = _parse(gold)
        change = MUTATORS[kind](gold, trees[-1], rng, names)
        sql = _render(trees, dialect_of(gold.db)) if change else ""
        if not change or sql in texts:
            failures[kind] += 1
            if failures[kind] >= ATTEMPTS:  # this kind finds no more: the others go on
                kinds.remove(kind)
            continue
        failures[kind] = 0
        texts.add(sql)
        described, wrong = change.rsplit("|", 1)
        made.append(
            Mutation(kind, gold.instance_id, gold.db.id, sql, tuple(wrong.split(",")), described)
        )
        turn += 1
    return made


if __name__ == "__main__":
    sys.exit(main())
