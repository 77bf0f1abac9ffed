"""Template synthesis on a warehouse estate, without building an index: does the synthetic SQL
parse in its engine's dialect and pass `check`, do the questions say what it does, and do they
read as English (issue 45)?

    python benchmarks/bench_synthesis_warehouse.py --traversals 400 --seed 0 \\
        --result benchmarks/results/synthesis-warehouse.json

It loads the sources as a build does (table families collapsed to their newest member), draws a
seeded sample of the estate's traversals, runs the build's chain runner on each (template
synthesizer, rule feedback, 3 chains of 2 iterations, nothing executed: the estate has no data)
and measures over the pairs the chains keep, and over every pair the synthesizer wrote:

- `parse_rate`: the SQL parses with sqlglot in the database's dialect (`dialect_of`);
- `check_rate`: it passes `schemagraph.sql.check.check_sql` against the catalog (when that
  module exists; null otherwise);
- `unsaid_rate`: its question does not say what its SQL does (`indexer.synthesis.faithful`);
- `unreadable_rate`: its question fails `indexer.synthesis.readability`, by kind;

per engine, with the build's drop reasons, and 50 kept pairs drawn with the seed to read.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import random
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot.errors import SqlglotError

from indexer.synthesis.chains import make_chain_runner
from indexer.synthesis.faithful import says_what_sql_does
from indexer.synthesis.feedback import RuleFeedback
from indexer.synthesis.pairs import SynthesisRequest
from indexer.synthesis.readability import readability_problems
from indexer.synthesis.templates import TemplateSynthesizer
from schemagraph import Catalog, Database, build_graph, enumerate_traversals, load_catalog
from schemagraph.dialects import dialect_of
from schemagraph.families import collapse_families

SPIDER2 = "../shared/data/spider2-lite/infoschema"
SOURCES = (
    f"infoschema:{SPIDER2}/bigquery",
    f"infoschema:{SPIDER2}/snowflake",
    f"ddl[sqlite]:{SPIDER2}/sqlite",
)


def _checker() -> Any:
    try:
        check = importlib.import_module("schemagraph.sql.check")
    except ImportError:
        return None
    return getattr(check, "check_sql", None)


def _parses(sql: str, dialect: str) -> bool:
    try:
        return sqlglot.parse_one(sql, read=dialect) is not None
    except SqlglotError:
        return False


def _checks(checker: Any, catalog: Catalog, db: Database, sql: str) -> bool:
    return bool(checker(db, sql, catalog).ok)


class _Tally:
    def __init__(self) -> None:
        self.pairs = 0
        self.parsed = 0
        self.checked = 0
        self.check_ran = 0
        self.unsaid = 0
        self.unreadable = 0
        self.kinds: Counter[str] = Counter()
        self.failed_checks: list[dict[str, str]] = []

    def add(self, catalog: Catalog, db: Database, question: str, sql: str, checker: Any) -> None:
        self.pairs += 1
        self.parsed += _parses(sql, dialect_of(db))
        if checker is not None:
            self.check_ran += 1
            ok = _checks(checker, catalog, db, sql)
            self.checked += ok
            if not ok and len(self.failed_checks) < 20:
                self.failed_checks.append({"db": db.id, "sql": sql})
        self.unsaid += not says_what_sql_does(question, sql, db).ok
        problems = readability_problems(question)
        self.unreadable += bool(problems)
        self.kinds.update(problems)

    def summary(self) -> dict[str, Any]:
        n = max(self.pairs, 1)
        return {
            "pairs": self.pairs,
            "parse_rate": round(self.parsed / n, 4),
            "check_rate": round(self.checked / max(self.check_ran, 1), 4)
            if self.check_ran
            else None,
            "unsaid_rate": round(self.unsaid / n, 4),
            "unreadable_rate": round(self.unreadable / n, 4),
            "unreadable_kinds": dict(self.kinds.most_common()),
            "failed_checks": self.failed_checks,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", default=list(SOURCES))
    parser.add_argument("--traversals", type=int, default=400, help="traversals sampled")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--examples", type=int, default=50, help="kept pairs to show")
    parser.add_argument("--result", type=Path, help="write the result file here")
    parser.add_argument("--label", default="Spider 2.0-lite infoschema export")
    args = parser.parse_args()

    started = time.perf_counter()
    catalog = collapse_families(load_catalog(args.sources))
    traversals = enumerate_traversals(build_graph(catalog))
    rng = random.Random(args.seed)
    picked = rng.sample(traversals, min(args.traversals, len(traversals)))
    loaded = time.perf_counter()

    checker = _checker()
    synthesizer = TemplateSynthesizer()
    runner = make_chain_runner(
        synthesizer, RuleFeedback(), chains=3, iterations=2, execute_sql=False
    )
    kept: dict[str, _Tally] = defaultdict(_Tally)
    written: dict[str, _Tally] = defaultdict(_Tally)
    drops: Counter[str] = Counter()
    failed: list[str] = []
    examples: list[dict[str, str]] = []
    for i, traversal in enumerate(picked):
        db = catalog.database(traversal.db_id)
        engine = dialect_of(db)
        try:
            request = SynthesisRequest(db, traversal, None, count=3, seed=args.seed + i)
            for pair in synthesizer.synthesize(request):
                written[engine].add(catalog, db, pair.question, pair.sql, checker)
            records = runner(db, traversal, None, args.seed + i)
        except Exception as exc:  # a failed traversal is a figure, not a stop
            failed.append(f"{db.id} {list(traversal.tables)}: {type(exc).__name__}: {exc}")
            continue
        for record in records:
            drops.update(record["stats"].get("drop_reasons", {}))
            if "question" in record:
                kept[engine].add(catalog, db, record["question"], record["sql"], checker)
                examples.append({"db": db.id, "question": record["question"], "sql": record["sql"]})
    finished = time.perf_counter()

    total_kept, total_written = _Tally(), _Tally()
    for source, target in ((kept, total_kept), (written, total_written)):
        for tally in source.values():
            for name in ("pairs", "parsed", "checked", "check_ran", "unsaid", "unreadable"):
                setattr(target, name, getattr(target, name) + getattr(tally, name))
            target.kinds.update(tally.kinds)
            target.failed_checks += tally.failed_checks[: 20 - len(target.failed_checks)]
    shown = random.Random(args.seed).sample(examples, min(args.examples, len(examples)))
    result = {
        "benchmark": "synthesis-warehouse",
        "label": args.label,
        "sources": args.sources,
        "databases": len(catalog),
        "traversals": len(traversals),
        "sampled": len(picked),
        "failed_traversals": failed,
        "kept": {"all": total_kept.summary(), **{k: v.summary() for k, v in sorted(kept.items())}},
        "written": {
            "all": total_written.summary(),
            **{k: v.summary() for k, v in sorted(written.items())},
        },
        "drop_reasons": dict(drops.most_common()),
        "check_available": checker is not None,
        "seconds_load": round(loaded - started, 1),
        "seconds_synthesis": round(finished - loaded, 1),
        "examples": shown,
        "command": "python benchmarks/bench_synthesis_warehouse.py "
        + f"--traversals {args.traversals} --seed {args.seed}",
        "commit": _commit(),
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}, shared",
    }
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if args.result:
        args.result.write_text(text + "\n")
    summary = {k: v for k, v in result.items() if k != "examples"}
    print(json.dumps(summary, indent=1, ensure_ascii=False)[:6000])


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return ""
    return out.stdout.strip()


if __name__ == "__main__":
    main()
