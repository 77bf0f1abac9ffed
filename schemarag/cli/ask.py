"""`schemarag ask QUESTION`: SQL for a question, with the trace of every generation stage.

The database is `--db ID` from `--source` (default: the sources the knowledge base at
`--store` was built from, else the bundled sample), or, without `--db`, the one the retriever
chooses from that knowledge base. The LLMs come from `--llm`
(repeatable: cross-consistency candidates) or SCHEMARAG_LLM; without any, the command stops
with a one-line message naming the settings to provide.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from generator import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    ActorCriticConfig,
    GenerateRequest,
    GenerateResult,
    GenerationConfig,
    GeneratorConfigError,
    Models,
    PromptConfig,
    SamplingPlan,
    VoterSets,
    generate,
)
from generator.reranking import TestCaseConfig
from generator.service import SchemaRetriever
from providers import UsageMeter
from schemarag.cli.common import (
    add_command,
    load,
    load_given_sources,
    print_json,
    query_store,
    question_text,
    use_remembered_sources,
)
from schemarag.samples import SAMPLE_SOURCE
from schemarag.settings import Settings
from store import StoreLocation

NO_LLM = (
    "no language model configured: set SCHEMARAG_LLM=anthropic:MODEL and ANTHROPIC_API_KEY, "
    "or SCHEMARAG_LLM=openai:MODEL and SCHEMARAG_OPENAI_BASE_URL for a local server, "
    "or SCHEMARAG_LLM=llamacpp:PATH.gguf for a model run in process (or pass --llm SPEC)"
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = add_command(sub, "ask")
    parser.add_argument("question", type=question_text, help="the question, in quotes")
    parser.add_argument("--db", default=None, metavar="ID", help="database id (else: retrieval)")
    parser.add_argument(
        "--source",
        action="append",
        metavar="KIND:PATH",
        help="catalog source, repeatable (default: the sources the --store index was built "
        f"from, else the bundled sample, {SAMPLE_SOURCE})",
    )
    parser.add_argument("--tables", nargs="+", metavar="TABLE", help="tables to show the LLM")
    parser.add_argument(
        "--dialect",
        default=None,
        help="retrieval ranks only the databases whose SQL is written in this dialect "
        "(bigquery, snowflake, sqlite, ...)",
    )
    parser.add_argument(
        "--store", default=None, help="knowledge base for retrieval (default SCHEMARAG_STORE)"
    )
    parser.add_argument("--collection", default="schemarag", help=argparse.SUPPRESS)
    parser.add_argument("--embedder", default=None, help="query embedder spec for retrieval")
    parser.add_argument("--execute", action="store_true", help="run the SQL and show the rows")
    parser.add_argument("--max-rows", type=int, default=20, help="rows to show with --execute")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_generation_options(parser)
    parser.set_defaults(func=cmd_ask)


def add_generation_options(parser: argparse.ArgumentParser) -> None:
    """The LLM and strategy options shared by `ask` and `bench ex`."""
    parser.add_argument(
        "--llm",
        action="append",
        metavar="SPEC",
        help="generator LLM spec, repeatable (default SCHEMARAG_LLM)",
    )
    parser.add_argument("--critic", default=None, metavar="SPEC", help="critic LLM spec")
    parser.add_argument(
        "--strategy",
        choices=list(STRATEGIES),
        default=DEFAULT_STRATEGY,
        help="; ".join(f"{k}: {v}" for k, v in STRATEGIES.items()),
    )
    parser.add_argument(
        "--temperature",
        type=float,
        action="append",
        help="candidate temperature, repeatable (default 0)",
    )
    parser.add_argument("--samples", type=int, default=1, help="candidates per LLM and temperature")
    parser.add_argument("--attempts", type=int, default=3, help="actor-critic attempts (z)")
    parser.add_argument("--budget", type=int, default=6000, help="prompt budget in tokens")
    parser.add_argument(
        "--voters",
        action="append",
        metavar="LEVEL=N,N",
        help="fine-vote voters: hardness level and 1-based --llm positions, e.g. hard=1,3",
    )
    parser.add_argument("--seed", type=int, default=0)


def make_models(settings: Settings, specs: list[str] | None, critic: str | None) -> Models:
    """The LLMs named on the command line or by SCHEMARAG_LLM; `NO_LLM` when there are none."""
    chosen = list(specs or ([settings.llm_spec] if settings.llm_spec else []))
    if not chosen:
        raise GeneratorConfigError(NO_LLM)
    generators = tuple(settings.llm(spec) for spec in chosen)
    return Models(generators, settings.llm(critic) if critic else None)


def generation_config(args: argparse.Namespace, models: Models) -> GenerationConfig:
    return GenerationConfig(
        strategy=args.strategy,
        prompt=PromptConfig(budget_tokens=args.budget, seed=args.seed),
        sampling=SamplingPlan(temperatures=tuple(args.temperature or (0.0,)), samples=args.samples),
        actor_critic=ActorCriticConfig(attempts=args.attempts),
        tests=TestCaseConfig(seed=args.seed),
        voters=_voters(args.voters, models),
    )


def _voters(given: list[str] | None, models: Models) -> VoterSets | None:
    if not given:
        return None
    sets: dict[str, tuple[str, ...]] = {}
    for item in given:
        level, _, positions = item.partition("=")
        try:
            numbers = [int(p) for p in positions.split(",") if p.strip()]
        except ValueError:
            numbers = []
        if not numbers or any(not 1 <= n <= len(models.generators) for n in numbers):
            raise GeneratorConfigError(
                f"--voters {item!r}: expected LEVEL=N[,N...] with N between 1 and "
                f"{len(models.generators)} (positions of --llm)"
            )
        sets[level.strip()] = tuple(models.generators[n - 1].name for n in numbers)
    return VoterSets(sets)


def open_retriever(args: argparse.Namespace, settings: Settings) -> Any:
    """The retriever over `--store`, when the retriever package provides one."""
    try:
        from schemarag.cli.retrieve import open_retriever as open_store
    except ImportError:  # pragma: no cover - the retriever is part of the package
        return None
    return open_store(args, settings)


def cmd_ask(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    models = make_models(settings, args.llm, args.critic)
    config = generation_config(args, models)
    if args.db is None:  # retrieval: the store asked for, or the demo's
        args.store = query_store(args, settings)
    if not args.source:
        store = args.store or settings.store_path
        location = StoreLocation.parse(
            store, collection=args.collection, api_key=settings.qdrant_api_key
        )
        use_remembered_sources(args, location, say=False)
    catalog = load_given_sources(args) if args.source else load([SAMPLE_SOURCE])
    request = GenerateRequest(
        args.question,
        db_id=args.db,
        tables=tuple(args.tables) if args.tables else None,
        strategy=args.strategy,
        execute=args.execute,
        max_rows=args.max_rows,
        dialect=args.dialect,
    )
    meter = UsageMeter(settings.prices)
    retriever: SchemaRetriever | None = None
    if args.db is None:
        retriever = open_retriever(args, settings)
    try:
        result = generate(
            request,
            catalog=catalog,
            models=models,
            config=config,
            retriever=retriever,
            meter=meter,
        )
    finally:
        close = getattr(retriever, "close", None)
        if close is not None:
            close()
    if args.json:
        print_json(result.as_dict())
    else:
        for line in describe(result):
            print(line)
    refused = result.generation.refused if result.generation is not None else None
    if refused is not None:
        print(f"schemarag: refused: {refused}", file=sys.stderr)
        return 1
    if result.sql is None:
        print("schemarag: no SQL was generated (see the trace)", file=sys.stderr)
        return 1
    if result.execution is not None and not result.execution.get("ok"):
        return 1
    return 0


def describe(result: GenerateResult) -> list[str]:
    """The result for a terminal: database, trace, SQL and rows."""
    data = result.as_dict()
    lines: list[str] = []
    if data["retrieval"] is not None:
        retrieval = data["retrieval"]
        lines.append(f"retrieval: confidence {retrieval['confidence']:.2f}")
        if data["abstained"]:
            lines.append("no database in the knowledge base seems to fit the question")
            return lines
    lines.append(f"database: {data['db_id']}  strategy: {data['strategy']}")
    lines.append(f"tables: {', '.join(data['tables'])}")
    lines.append("trace:")
    for event in data["trace"]:
        lines.append(f"  {event['stage']}: {_event_text(event)}")
    lines.append("SQL:")
    lines.append(f"  {data['sql']}" if data["sql"] else "  (none)")
    execution = data["execution"]
    if execution is not None:
        if execution["ok"]:
            lines.append(f"rows ({execution['row_count']}):")
            lines.append("  " + " | ".join(execution["columns"]))
            lines += ["  " + " | ".join(str(v) for v in row) for row in execution["rows"]]
        else:
            lines.append(f"execution failed: {execution['error']}")
    if data["usage"] is not None:
        total = data["usage"]["total"]
        lines.append(
            f"usage: {total['calls']} calls, {total['input_tokens']} input and "
            f"{total['output_tokens']} output tokens, ${total['cost_usd']:.4f}"
        )
    return lines


def _event_text(event: dict[str, Any]) -> str:
    stage = event["stage"]
    if stage.endswith("prompt"):
        cuts = "; ".join(event["cuts"]["notes"]) or "nothing cut"
        return (
            f"{event['tokens']}/{event['budget']} tokens, {len(event['tables'])} table(s), "
            f"{event['examples']} example(s), {event['sample_rows']} row(s) per table ({cuts})"
        )
    if stage == "linking":
        note = f" (fallback: {event['reason']})" if event["fallback"] else ""
        return f"{', '.join(event['tables'])}; hardness {event['hardness']}{note}"
    if stage == "actor-critic":
        parts = [
            f"#{a['attempt']} {a['verdict']} by {a['decided_by']}: {a['sql']}"
            for a in event["attempts"]
        ]
        return "\n    " + "\n    ".join(parts)
    if stage == "candidates":
        parts = [
            f"[{c['index']}] {c['llm']} "
            f"{'ok, ' + str(c['row_count']) + ' row(s)' if c['ok'] else c['error']}: {c['sql']}"
            for c in event["items"]
        ]
        return "\n    " + "\n    ".join(parts)
    if stage == "guard":
        return f"refused {event['sql']}: {event['refused']}"
    if stage == "selection":
        return f"{event['method']} chose position {event['position']}: {event['reason']}"
    return str(event.get("sql") or event.get("reply") or "")
