"""`schemarag bench ex|actor-critic|voting`: the generation benchmarks.

`register_bench_commands(bench_subparsers)` adds the three commands to the `bench` group (whose
parser lives in `schemarag.cli.bench`):

- `actor-critic`: AC-SQL Theorem 1, simulated through the real actor-critic loop (offline);
- `voting`: every selector on gold + mutated candidate sets (offline; Spider dev databases, or
  the bundled sample when the Spider data is absent);
- `ex`: end-to-end execution accuracy with a real LLM (exits non-zero without one).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from evaluation import actor_critic as bench_actor_critic
from evaluation import execution_accuracy as bench_ex
from evaluation import selection as bench_voting
from evaluation.gold import sample_questions
from generator.errors import GeneratorConfigError
from generator.strategies import Models
from providers import CachedLLM, ProviderCache
from schemagraph import load_spider
from schemarag.cli.ask import add_generation_options, generation_config, make_models
from schemarag.cli.common import add_output
from schemarag.samples import SPIDER_SAMPLE
from schemarag.settings import Settings


def register_bench_commands(bench_sub: argparse._SubParsersAction) -> None:
    """Add `ex`, `actor-critic` and `voting` to the `bench` group's subparsers."""
    ac = bench_sub.add_parser(
        "actor-critic", help="AC-SQL Theorem 1: predicted vs simulated accuracy (offline)"
    )
    ac.add_argument("--trials", type=int, default=5000, help="trials per grid point")
    ac.add_argument("--seed", type=int, default=0)
    add_output(ac, "--json", metavar="OUT", help="write the report as JSON")
    ac.set_defaults(func=cmd_actor_critic)

    voting = bench_sub.add_parser(
        "voting", help="selectors on gold + mutated candidates (offline, scripted judges)"
    )
    voting.add_argument("--data", type=Path, default=None, help="Spider folder")
    voting.add_argument("--limit", type=int, default=None, help="first N usable questions")
    voting.add_argument("--seed", type=int, default=0)
    voting.add_argument("--critic-accuracy", type=float, default=0.7)
    voting.add_argument("--oracle-accuracy", type=float, default=0.8)
    add_output(voting, "--json", metavar="OUT", help="write the report as JSON")
    voting.set_defaults(func=cmd_voting)

    ex = bench_sub.add_parser("ex", help="end-to-end execution accuracy (needs an LLM)")
    ex.add_argument("--dataset", default="spider-dev", help="spider-dev, spider-syn or spider-dk")
    ex.add_argument("--data", type=Path, default=None, help="Spider folder")
    ex.add_argument(
        "--settings",
        nargs="+",
        choices=bench_ex.SETTINGS,
        default=None,
        help="default: gold-tables and gold-database, plus retrieved with --store",
    )
    ex.add_argument("--store", default=None, help="knowledge base for the retrieved setting")
    ex.add_argument("--collection", default="schemarag", help=argparse.SUPPRESS)
    ex.add_argument("--embedder", default=None, help="query embedder spec for retrieval")
    ex.add_argument("--limit", type=int, default=None, help="first N questions")
    ex.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="N questions stratified by hardness, drawn with --seed (ids in the report)",
    )
    ex.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="FILE",
        help="answer repeated LLM calls from this cache (SQLite file), so a rerun, or another "
        "selection strategy over the same candidates, costs no new calls",
    )
    add_output(ex, "--json", metavar="OUT", help="write the report as JSON")
    add_output(
        ex,
        "--result",
        metavar="OUT",
        help="write a result file (EX by setting and hardness, command, commit, machine, date) "
        "for benchmarks/render_report.py",
    )
    add_generation_options(ex)
    ex.set_defaults(func=cmd_ex)


def spider_folder(given: Path | None) -> Path | None:
    """--data, else SCHEMARAG_SPIDER_DIR, else ../shared/data/spider when it exists."""
    if given is not None:
        return given
    env = os.environ.get("SCHEMARAG_SPIDER_DIR", "").strip()
    if env:
        return Path(env)
    default = Path("../shared/data/spider")
    return default if (default / "dev.json").exists() else None


def _write(report: dict[str, Any], out: Path | None) -> None:
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False))


def _progress(label: str) -> Any:
    def show(done: int, total: int) -> None:
        print(f"{label}: {done}/{total}", file=sys.stderr, flush=True)

    return show


def cmd_actor_critic(args: argparse.Namespace) -> int:
    db = load_spider(SPIDER_SAMPLE / "tables.json").database("concert_singer")
    report = bench_actor_critic.run_actor_critic_bench(
        db, trials=args.trials, seed=args.seed, progress=_progress("grid points")
    )
    print(report["meaning"])
    for line in bench_actor_critic.table_lines(report):
        print(line)
    summary = report["summary"]
    print(
        f"{summary['within_2se']}/{summary['points']} points within 2 standard errors, "
        f"{summary['within_3se']} within 3; max |z| {summary['max_abs_z_score']}; "
        f"chi-square {summary['chi_square']} on {summary['points']} degrees of freedom"
    )
    _write(report, args.json)
    return 0


def cmd_voting(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        raise GeneratorConfigError(f"--limit must be >= 1, got {args.limit}")
    folder = spider_folder(args.data)
    if folder is not None:
        from evaluation.datasets import load_dataset

        dataset = load_dataset("spider-dev", folder)
        catalog = dataset.catalog
        cases = [
            bench_voting.BenchCase(q.db_id, q.question, q.sql)
            for q in dataset.questions
            if q.db_id in catalog and catalog.database(q.db_id).path is not None
        ]
        name = f"spider-dev ({folder})"
    else:
        catalog = load_spider(SPIDER_SAMPLE / "tables.json")
        cases = [bench_voting.BenchCase(*q) for q in sample_questions()]
        name = "spider-dev questions on the bundled sample databases"
        print(f"no Spider data found; using {len(cases)} {name}", file=sys.stderr)
    report = bench_voting.run_voting_bench(
        catalog,
        cases,
        dataset=name,
        seed=args.seed,
        critic_accuracy=args.critic_accuracy,
        oracle_accuracy=args.oracle_accuracy,
        limit=args.limit,
        progress=_progress("questions"),
    )
    for line in bench_voting.table_lines(report):
        print(line)
    print(f"{report['cases']} cases; left out: {report['skipped']}")
    _write(report, args.json)
    return 0


def cmd_ex(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    models = make_models(settings, args.llm, args.critic)  # no LLM: one-line error, exit 2
    if args.cache is not None:
        cache = ProviderCache(args.cache)
        models = Models(
            tuple(CachedLLM(llm, cache) for llm in models.generators),
            CachedLLM(models.critic, cache) if models.critic is not None else None,
        )
    config = generation_config(args, models)
    folder = spider_folder(args.data)
    if folder is None:
        raise GeneratorConfigError("no Spider folder: pass --data DIR or set SCHEMARAG_SPIDER_DIR")
    from evaluation.datasets import load_dataset

    dataset = load_dataset(args.dataset, folder)
    chosen = args.settings or (
        ["gold-tables", "gold-database"] + (["retrieved"] if args.store else [])
    )
    retriever = None
    if "retrieved" in chosen:
        from schemarag.cli.ask import open_retriever

        retriever = open_retriever(args, settings)
    try:
        report = bench_ex.run_ex_bench(
            dataset,
            folder / "database",
            models,
            config,
            prices=settings.prices,
            settings=chosen,
            retriever=retriever,
            limit=args.limit,
            sample=args.sample,
            seed=args.seed,
            progress=lambda s, d, t: print(f"{s}: {d}/{t}", file=sys.stderr, flush=True),
        )
    finally:
        close = getattr(retriever, "close", None)
        if close is not None:
            close()
    for line in bench_ex.table_lines(report):
        print(line)
    for name, row in report["settings"].items():
        rates = row.get("actor_critic")
        if rates:
            print(
                f"{name}: actor-critic p {rates['p']}, q {rates['q']}, s {rates['s']}, "
                f"z {rates['z']}: Theorem 1 expects {rates['theorem_1_expected_accuracy']}, "
                f"measured {row['execution_accuracy']}"
            )
    _write(report, args.json)
    if args.result:
        from schemarag.cli.result_file import generation_result, provenance

        head = provenance("generation", "", args.arguments)
        _write(generation_result(report, head), args.result)
    return 0
