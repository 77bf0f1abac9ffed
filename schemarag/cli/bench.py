"""`schemarag bench recall`: retrieval recall of schemarag and the baselines, in one run."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from sqlglot.dialects.dialect import Dialect

from evaluation.datasets import (
    DATASETS,
    BenchDataset,
    load_dataset,
    load_files,
    questions_over,
    stratified_sample,
)
from evaluation.errors import BenchmarkDataError
from evaluation.indexes import ensure_examples_index, ensure_index, pool_key
from evaluation.recall import plot_recall, run_recall, table_lines
from indexer import read_examples
from providers import at_precision, parse_embedder_spec
from retriever import Retriever
from schemagraph.errors import SchemaGraphError
from schemagraph.sources import apply_overlay
from schemarag.cli.bench_generation import register_bench_commands
from schemarag.cli.common import add_command, add_output, add_precision, list_source_kinds
from schemarag.cli.index import progress_printer
from schemarag.cli.result_file import provenance, recall_result
from schemarag.cli.retrieve import make_query_embedder
from schemarag.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    bench = add_command(sub, "bench")
    bench_sub = bench.add_subparsers(dest="bench_command", metavar="COMMAND", required=True)
    register_bench_commands(bench_sub)
    recall = bench_sub.add_parser(
        "recall", help="database and table recall against the table-document baselines"
    )
    list_source_kinds(
        recall,
        "pool: --data as spider:, --tables and --databases as spider: and sqlite:, --docs as "
        "docs:;\n--store: an index built from any of these (schemarag index build SOURCE... "
        "--store DIR):",
    )
    recall.add_argument("--dataset", choices=DATASETS, default="spider-dev")
    recall.add_argument("--data", type=Path, default=None, help="Spider folder")
    recall.add_argument(
        "--tables", type=Path, nargs="+", help="tables.json file(s) (any benchmark)"
    )
    recall.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="SPEC",
        help="the pool as `index build` reads it (infoschema:DIR, ddl:DIR, spider:DIR, ...; "
        "repeatable), instead of --tables: a store built from any sources, with --questions",
    )
    recall.add_argument(
        "--questions",
        type=Path,
        help="questions file (Spider or BIRD format; a question may list its `gold_tables`)",
    )
    recall.add_argument(
        "--dialect",
        default="sqlite",
        help="sqlglot dialect of the gold SQL in --questions (default sqlite; e.g. bigquery)",
    )
    recall.add_argument("--databases", type=Path, nargs="*", default=[], help="SQLite folders")
    recall.add_argument(
        "--docs",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="descriptions for the pool (a docs: file, YAML or JSON; repeatable)",
    )
    recall.add_argument("--store", default=None, help="a built index to reuse (never rebuilt)")
    recall.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(".schemarag/bench"),
        help="where the index is built without --store",
    )
    recall.add_argument(
        "--embedder", default="minilm+schema", help="embedder spec (default minilm+schema)"
    )
    add_precision(
        recall,
        default="auto",
        help="MiniLM's precision for the questions (default auto, as the server and the Python "
        "API run it: bf16 where the CPU has it natively)",
    )
    recall.add_argument(
        "--examples",
        type=Path,
        default=None,
        metavar="FILE",
        help="users' examples (.json, .jsonl, .csv) added to the index first; an example equal "
        "to an evaluated question stops the benchmark",
    )
    recall.add_argument("--limit", type=int, default=None, help="evaluate the first N questions")
    recall.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="evaluate N questions stratified by hardness, drawn with --seed (their positions "
        "among the questions read go into the report)",
    )
    recall.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    recall.add_argument(
        "--pool",
        default=None,
        metavar="LLM",
        help="LLM spec for schema pooling on top of schemarag's ranking (e.g. llamacpp:M.gguf)",
    )
    add_output(recall, "--json", metavar="OUT", help="write the report as JSON")
    recall.add_argument(
        "--per-question",
        action="store_true",
        help="put every question's gold and rankings in the --json report",
    )
    recall.add_argument(
        "--engine-given",
        action="store_true",
        help="rank each question among the databases of its `engine` only (a field of the "
        "questions file, as in Spider 2.0-lite), as a caller connected to that engine would; "
        "every method",
    )
    add_output(recall, "--plot", metavar="OUT.png", help="write recall@k curves")
    add_output(
        recall,
        "--result",
        metavar="OUT",
        help="write a result file (summary figures, curves, command, commit, machine, date) "
        "for benchmarks/render_report.py, e.g. benchmarks/results/recall-spider-dev.json",
    )
    recall.add_argument(
        "--label",
        default=None,
        help="the pool's name in the report's tables (default: the dataset's name)",
    )
    recall.set_defaults(func=cmd_recall)


def spider_dir(given: Path | None) -> Path:
    if given is not None:
        return given
    env = os.environ.get("SCHEMARAG_SPIDER_DIR", "").strip()
    if env:
        return Path(env)
    default = Path("../shared/data/spider")
    if default.exists():
        return default
    raise BenchmarkDataError(
        "no Spider folder: pass --data DIR or set SCHEMARAG_SPIDER_DIR "
        "(or --tables FILE --questions FILE for another benchmark)"
    )


def with_docs(dataset: BenchDataset, files: list[Path]) -> BenchDataset:
    """`dataset` with the descriptions of `files` (docs: overlays) on its pool."""
    catalog = dataset.catalog
    try:
        for file in files:
            catalog = apply_overlay(catalog, "docs", file)
    except SchemaGraphError as exc:
        raise BenchmarkDataError(str(exc)) from None
    for problem in catalog.problems[len(dataset.catalog.problems) :]:
        print(f"warning: {problem}", file=sys.stderr)
    return replace(dataset, catalog=catalog)


def _progress(name: str, done: int, total: int) -> None:
    print(f"{name}: {done}/{total}", file=sys.stderr, flush=True)


def _dialect(name: str) -> str:
    try:
        Dialect.get_or_raise(name)
    except ValueError:
        raise BenchmarkDataError(
            f"--dialect: sqlglot has no dialect {name!r} (e.g. sqlite, postgres, bigquery, "
            "snowflake)"
        ) from None
    return name


def cmd_recall(args: argparse.Namespace) -> int:
    if args.source and args.tables is not None:
        raise BenchmarkDataError("--source and --tables are two pools; give one")
    if ((args.tables is None) and not args.source) != (args.questions is None):
        raise BenchmarkDataError("--tables (or --source) and --questions go together")
    if args.per_question and args.json is None:
        raise BenchmarkDataError("--per-question goes into the --json report; add --json OUT")
    if args.docs and args.store is not None:
        raise BenchmarkDataError(
            "--docs describes the pool of the index this command builds; drop --store (a built "
            "index keeps the documents it was built with)"
        )
    if args.limit is not None and args.limit < 1:
        raise BenchmarkDataError(f"--limit must be >= 1, got {args.limit}")
    if args.limit is not None and args.sample is not None:
        raise BenchmarkDataError("--limit and --sample choose the questions two ways; give one")
    if args.precision != "auto" and parse_embedder_spec(args.embedder).provider != "minilm":
        raise BenchmarkDataError("--precision applies to the minilm embedder only")
    if args.examples is not None:
        read_examples(args.examples)  # an unreadable file stops here, before any work
    if args.source:
        from schemarag.cli.common import load

        dataset = questions_over(
            load(args.source),
            args.questions,
            name=args.questions.stem,
            dialect=_dialect(args.dialect),
        )
    elif args.tables is not None:
        dataset = load_files(
            args.tables,
            args.questions,
            args.databases,
            name=args.questions.stem,
            dialect=_dialect(args.dialect),
        )
    else:
        dataset = load_dataset(args.dataset, spider_dir(args.data))
    if args.docs:
        dataset = with_docs(dataset, args.docs)
    question_ids = None
    if args.sample is not None:
        chosen = stratified_sample(dataset.questions, args.sample, args.seed)
        positions = {id(q): i for i, q in enumerate(dataset.questions)}
        question_ids = [positions[id(q)] for q in chosen]
        dataset = replace(dataset, questions=tuple(chosen))
    settings = Settings.from_env()
    embedder = at_precision(make_query_embedder(settings, args.embedder), args.precision)
    embedder.embed_query("warm up")
    store = args.store
    if store is not None and args.examples is not None:
        raise BenchmarkDataError(
            "--examples adds the examples to an index of its own; leave out --store"
        )
    added = None
    if store is None:
        folder = args.cache_dir / f"{pool_key(dataset.catalog)}-{embedder.name.replace(':', '_')}"
        print(f"index: {folder} (built or brought up to date)", file=sys.stderr)
        ensure_index(
            dataset.catalog,
            folder,
            embedder,
            progress=progress_printer(),
        )
        store = str(folder)
        if args.examples is not None:
            digest = hashlib.sha256(args.examples.read_bytes()).hexdigest()[:12]
            with_examples = folder.with_name(f"{folder.name}-examples-{digest}")
            print(f"index with examples: {with_examples}", file=sys.stderr)
            added = ensure_examples_index(
                dataset.catalog, folder, with_examples, embedder, args.examples
            )
            print(
                f"examples: {added['in_index']} of {added['rows']} rows in the index, "
                f"{added['rejected']} rejected {added['rejected_by_reason']}",
                file=sys.stderr,
            )
            store = str(with_examples)
    pool_llm = settings.llm(args.pool) if args.pool else None
    with Retriever.open(store, embedder, pool_llm=pool_llm) as retriever:
        report = run_recall(
            dataset,
            retriever,
            embedder,
            limit=args.limit,
            progress=_progress,
            per_question=args.per_question,
            engine_given=args.engine_given,
        )
    # the query embedder as it ran: with precision "auto" the figures depend on the CPU
    report["embedder"] = embedder.name
    if (precision := getattr(embedder, "precision", None)) is not None:
        report["precision"] = precision
    if added is not None:
        report["user_examples"] = added
    if question_ids is not None:
        report["sample"] = {"size": args.sample, "seed": args.seed}
        report["question_ids"] = question_ids
    if pool_llm is not None:
        report["pool"] = pool_llm.name
    for line in table_lines(report):
        print(line)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    if args.plot:
        plot_recall(report, args.plot)
    if args.result:
        label = args.label or str(report.get("dataset", "recall"))
        head = provenance("recall", label, args.arguments)
        result = recall_result(report, head)
        args.result.parent.mkdir(parents=True, exist_ok=True)
        args.result.write_text(json.dumps(result, indent=1) + "\n")
    return 0
