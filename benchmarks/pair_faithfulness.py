"""Do a knowledge base's synthetic questions say what their SQL does? The share of pairs whose
question leaves out a filter, aggregate, grouping, ordering or limit of its query
(`indexer.synthesis.faithful`), by template and by the part left out.

    python benchmarks/pair_faithfulness.py STORE spider:../shared/data/spider [SOURCE...]
    python benchmarks/pair_faithfulness.py STORE SOURCES --show 20 --sample 50 --seed 0

STORE is a built index (its current build's snapshot is read) or a snapshot's questions.jsonl;
SOURCES are the sources it was built from (the checker reads the catalog's names and
descriptions). The template of a pair is
read from its query's shape: group (GROUP BY), superlative (ORDER BY ... LIMIT 1), top (ORDER BY
... LIMIT N), count (COUNT only), aggregate (other aggregates only), list (the rest).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

from sqlglot import exp, parse_one

from indexer.synthesis.faithful import says_what_sql_does
from schemagraph import load_catalog

TEMPLATES = ("list", "count", "aggregate", "group", "superlative", "top")


def template_of(tree: exp.Expr) -> str:
    if not isinstance(tree, exp.Select):
        return "other"
    if tree.args.get("group") is not None:
        return "group"
    limit = tree.args.get("limit")
    if tree.args.get("order") is not None and limit is not None:
        return "superlative" if limit.expression.sql() == "1" else "top"
    funcs = [type(n) for item in tree.expressions for n in item.find_all(exp.AggFunc)]
    if funcs and all(f is exp.Count for f in funcs):
        return "count"
    return "aggregate" if funcs else "list"


def snapshot(store: Path) -> Path:
    if store.is_file():  # a questions.jsonl
        return store
    current = (store / "CURRENT").read_text().strip()
    return store / "builds" / current / "snapshot" / "questions.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--show", type=int, default=0, help="print N failing pairs")
    parser.add_argument("--sample", type=int, default=0, help="print N random pairs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    args = parser.parse_args()

    catalog = load_catalog(args.sources)
    rows = [json.loads(line) for line in snapshot(args.store).read_text().splitlines()]
    rows = [r for r in rows if r.get("origin", "synthetic") == "synthetic" and r.get("sql")]
    total: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    parts: Counter[str] = Counter()
    failures = []
    for row in rows:
        tree = parse_one(row["sql"], dialect="sqlite")
        template = template_of(tree)
        verdict = says_what_sql_does(row["question"], tree, catalog.database(row["db_id"]))
        total[template] += 1
        if not verdict.ok:
            failed[template] += 1
            parts.update(set(verdict.parts))
            failures.append((row, verdict))
    print(f"{args.store}: {len(rows)} synthetic pairs")
    print("| template | pairs | failing | share |")
    print("|---|---:|---:|---:|")
    for name in [*TEMPLATES, "other"]:
        if total[name]:
            share = 100 * failed[name] / total[name]
            print(f"| {name} | {total[name]:,} | {failed[name]:,} | {share:.1f} % |")
    share = 100 * sum(failed.values()) / max(1, len(rows))
    print(f"| all | {len(rows):,} | {sum(failed.values()):,} | {share:.1f} % |")
    print("\n| part left out | failing pairs | share of all pairs |")
    print("|---|---:|---:|")
    for part, count in parts.most_common():
        print(f"| {part} | {count:,} | {100 * count / max(1, len(rows)):.1f} % |")
    rng = random.Random(args.seed)
    for row, verdict in rng.sample(failures, min(args.show, len(failures))):
        print(f"\n[{row['db_id']}] {row['question']}\n  {row['sql']}")
        for line in verdict.missing:
            print(f"  - {line}")
    for row in rng.sample(rows, min(args.sample, len(rows))):
        print(f"\n[{row['db_id']}] {row['question']}\n  {row['sql']}")
    if args.json:
        figures = {
            "pairs": len(rows),
            "failing": sum(failed.values()),
            "by_template": {k: {"pairs": total[k], "failing": failed[k]} for k in total},
            "by_part": dict(parts),
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
