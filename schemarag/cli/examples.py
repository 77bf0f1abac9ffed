"""`schemarag index add-examples`, `index remove-examples` and `index examples`: users' own
(question, SQL) pairs in the knowledge base.

    schemarag index add-examples query_log.jsonl spider:dbs/ --store /data/kb
    schemarag index remove-examples --file query_log.jsonl --store /data/kb
    schemarag index examples --store /data/kb --json

`add-examples` reads the file first (one it cannot read stops the command: one line, exit
status 2), then validates every row against the catalog of the sources (the ones the index was
built from), prints each rejected row as `FILE:LINE: reason`, and publishes a build holding the
accepted ones (see `indexer.examples.updates`). Exit status 0, or 1 when the file gave no usable
example (every row rejected).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from indexer import ExampleStore, add_examples, read_examples, remove_examples
from providers import CachedEmbedder, Embedder, ProviderCache
from schemarag.cli.common import add_output, add_sources, load, print_json
from schemarag.settings import Settings
from store import StoreError, StoreLocation


def register_example_commands(
    index_sub: argparse._SubParsersAction, add_store_options: Any, store_location: Any
) -> None:
    """Add the example commands to `schemarag index` (whose store options they share)."""
    add = index_sub.add_parser(
        "add-examples",
        help="add users' (question, SQL) examples: validated, kept across builds",
        description="Validate the (question, sql, db_id) rows of FILE (.json, .jsonl or .csv) "
        "against the catalog of the sources the index was built from, and make the valid ones "
        "knowledge-base records: they route questions and serve as few-shot examples, and "
        "later builds keep them until one of their tables changes.",
    )
    add.add_argument("file", type=Path, metavar="FILE", help=".json, .jsonl or .csv examples")
    add_sources(add)
    add_store_options(add)
    add.add_argument(
        "--embedder", default=None, help="embedder spec (default: the one the build used)"
    )
    add.add_argument(
        "--no-execute", action="store_true", help="validate the SQL without running it"
    )
    add.add_argument("--no-cache", action="store_true", help="do not use the provider cache")
    add_output(add, "--report", metavar="OUT.json", help="write the report as JSON")
    add.set_defaults(func=cmd_add_examples, store_location=store_location)

    remove = index_sub.add_parser(
        "remove-examples", help="remove users' examples by file, source label or id"
    )
    remove.add_argument(
        "--file",
        type=Path,
        action="append",
        default=[],
        help="every example added from this file (repeatable)",
    )
    remove.add_argument(
        "--source",
        action="append",
        default=[],
        help="every example sent with this source label over HTTP (default label: http)",
    )
    remove.add_argument(
        "--id", dest="ids", action="append", default=[], help="one example (repeatable)"
    )
    add_store_options(remove)
    remove.set_defaults(func=cmd_remove_examples, store_location=store_location)

    listing = index_sub.add_parser("examples", help="list users' examples with their ids")
    add_store_options(listing)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=cmd_list_examples, store_location=store_location)


def cmd_add_examples(args: argparse.Namespace) -> int:
    found = read_examples(args.file)  # an unreadable file stops here, before any other work
    catalog = load(args.sources)
    settings = Settings.from_env()
    location: StoreLocation = args.store_location(args, settings)
    current = location.current()
    if current is None:
        where = location.where
        raise StoreError(
            f"{where}: no build to add examples to; run `schemarag index build SOURCE... "
            f"--store {where}` first"
        )
    from store.manifest import read_manifest

    spec = args.embedder or read_manifest(location, current).embedder_spec()
    cache = None if args.no_cache else ProviderCache(settings.cache_path)
    try:
        embedder: Embedder = settings.embedder(spec)
        if cache is not None:
            embedder = CachedEmbedder(embedder, cache)
        report = add_examples(
            catalog,
            location,
            embedder,
            found.examples,
            rejected=found.rejected,
            execute_sql=not args.no_execute,
        )
    finally:
        if cache is not None:
            cache.close()
    for line in report.lines():
        print(line)
    if args.report:
        args.report.write_text(json.dumps(report.as_dict(), indent=2))
    usable = report.accepted or report.unchanged
    return 0 if usable or not report.rejected else 1


def cmd_remove_examples(args: argparse.Namespace) -> int:
    if not (args.file or args.source or args.ids):
        raise StoreError("remove-examples: name what to remove with --file, --source or --id")
    location: StoreLocation = args.store_location(args, Settings.from_env())
    sources = [str(p.resolve()) for p in args.file] + list(args.source)
    report = remove_examples(location, ids=args.ids, sources=sources)
    for line in report.lines():
        print(line)
    return 0


def cmd_list_examples(args: argparse.Namespace) -> int:
    from store.manifest import read_manifest

    location: StoreLocation = args.store_location(args, Settings.from_env())
    examples = ExampleStore.read(location)
    current = location.current()
    held = set(read_manifest(location, current).examples if current else ())
    rows = [
        {
            "id": e.id,
            "db_id": e.db_id,
            "question": e.question,
            "sql": e.sql,
            "tables": list(e.tables),
            "source": e.source,
            "line": e.line,
            "added_at": e.added_at,
            "in_build": e.id in held,
        }
        for e in examples
    ]
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print(f"no users' examples in {location.where}")
        return 1
    for row in rows:
        mark = "" if row["in_build"] else "  [left out: a table changed since]"
        where = f"{row['source']}:{row['line']}" if row["line"] is not None else row["source"]
        print(f"{row['id']}  {row['db_id']}  {where}  {row['question']}{mark}")
    return 0
