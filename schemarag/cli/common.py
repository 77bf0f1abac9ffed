"""Helpers shared by the CLI command modules."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from generator.limits import MAX_QUESTION_CHARS
from providers.precision import PRECISIONS
from schemagraph.source_kinds import sources_help

if TYPE_CHECKING:
    from schemagraph import Catalog, TraversalConfig
    from schemarag.settings import Settings
    from store import StoreLocation
    from store.manifest import Manifest

#: command: (the module under `schemarag.cli` that registers it, its one-line help)
COMMANDS = {
    "catalog": ("catalog", "inspect the databases of sources"),
    "graph": ("catalog", "the schema graph and its traversals"),
    "index": ("index", "build and inspect the knowledge base"),
    "retrieve": ("retrieve", "rank the databases and tables for a question"),
    "serve": ("serve", "serve the retrieval HTTP API (FastAPI + uvicorn)"),
    "ask": ("ask", "generate SQL for a question (needs an LLM)"),
    "bench": ("bench", "benchmarks"),
    "sql": ("sql", "run untrusted SQL safely, evaluate predictions"),
    "demo": ("demo", "run the main job on the bundled sample databases"),
    "mcp": ("mcp", "serve the knowledge base to assistants (Model Context Protocol)"),
}


def add_command(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    """The parser of top-level command `name`, with its help from `COMMANDS`."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=COMMANDS[name][1])
    return parser


class Parser(argparse.ArgumentParser):
    """argparse with usage mistakes on one line (exit status 2), like every other user error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def question_text(value: str) -> str:
    """An argparse type: a question that is UTF-8 text, not blank, and not too long.

    Bytes that are not UTF-8 reach Python as lone surrogates (PEP 383); they are refused here,
    before any model or index is loaded, rather than deep inside a tokenizer."""
    bad = next((i for i, ch in enumerate(value) if "\udc80" <= ch <= "\udcff"), None)
    if bad is not None:
        byte = ord(value[bad]) - 0xDC00
        raise argparse.ArgumentTypeError(
            f"not UTF-8 text (byte 0x{byte:02x} at position {bad}); pass the question as UTF-8"
        )
    if not value.strip():
        raise argparse.ArgumentTypeError("the question is empty")
    if len(value) > MAX_QUESTION_CHARS:
        raise argparse.ArgumentTypeError(
            f"the question has {len(value):,} characters; at most {MAX_QUESTION_CHARS:,} are read"
        )
    return value


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= `minimum`."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {number}")
        return number

    return parse


def fraction(value: str) -> float:
    """An argparse type: a number from 0 to 1."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not 0.0 <= number <= 1.0:
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {value}")
    return number


class UsageError(Exception):
    """A command-line argument that cannot be used (printed as one line, exit status 2)."""


def add_output(parser: argparse.ArgumentParser, flag: str, **options: Any) -> None:
    """Add `flag`, naming a file the command writes. `check_outputs` (called by `main` before
    the command runs) makes sure it can be written, so no work is lost to a bad path."""
    action = parser.add_argument(flag, type=Path, **options)
    outputs = parser.get_default("outputs") or ()
    parser.set_defaults(outputs=(*outputs, (action.dest, flag)))


def add_precision(parser: argparse.ArgumentParser, *, default: str, help: str) -> None:
    """Add `--precision`: MiniLM's precision, one of `PRECISIONS`."""
    parser.add_argument("--precision", choices=PRECISIONS, default=default, help=help)


def add_served_store(parser: argparse.ArgumentParser) -> None:
    """Add what a server reads its index from: `--store`, `--collection`, `--embedder`."""
    parser.add_argument(
        "--store",
        default=None,
        help="folder (embedded Qdrant) or http(s) URL of a Qdrant server "
        "(default SCHEMARAG_STORE or .schemarag/store)",
    )
    parser.add_argument("--collection", default="schemarag", help="collection name prefix")
    parser.add_argument(
        "--embedder", default=None, help="query embedder spec (default: the one each build used)"
    )


def check_outputs(args: argparse.Namespace) -> None:
    for dest, flag in getattr(args, "outputs", ()):
        path = getattr(args, dest)
        if path is not None and (problem := _unwritable(path)):
            raise UsageError(f"argument {flag}: {problem}")


def _unwritable(path: Path) -> str | None:
    if path.is_dir():
        return f"{path} is a folder; name a file to write"
    if not path.parent.is_dir():
        return f"{path}: the folder {path.parent} does not exist"
    if not os.access(path.parent, os.W_OK | os.X_OK) or (
        path.exists() and not os.access(path, os.W_OK)
    ):
        return f"{path}: not writable"
    return None


def add_sources(parser: argparse.ArgumentParser) -> None:
    """The SOURCE arguments (and `--schemas`, `--exclude`), the source kinds listed after the
    options (`schemagraph.source_kinds`)."""
    list_source_kinds(parser)
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="KIND:PATH, a database URL or env:NAME, repeatable (the kinds are listed below)",
    )
    parser.add_argument(
        "--schemas",
        action="append",
        default=[],
        type=_patterns,
        metavar="GLOB",
        help="only these schemas of database URLs (glob patterns, comma-separated or repeated; "
        "default every schema)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        type=_patterns,
        metavar="GLOB",
        help="leave out these schemas of database URLs (glob patterns)",
    )


def list_source_kinds(parser: argparse.ArgumentParser, intro: str | None = None) -> None:
    """End `parser`'s help with every kind of source and what it reads; `intro`: the line
    above them (default: how sources combine)."""
    parser.epilog = sources_help(intro) if intro is not None else sources_help()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def _patterns(value: str) -> list[str]:
    patterns = [p.strip() for p in value.split(",") if p.strip()]
    if not patterns:
        raise argparse.ArgumentTypeError("give a schema name or glob pattern (e.g. 'sales_*')")
    return patterns


def load_sources(args: argparse.Namespace) -> Catalog:
    """The catalog of the sources `add_sources` added to `args`."""
    return load(
        args.sources,
        schemas=[p for group in args.schemas for p in group],
        exclude=[p for group in args.exclude for p in group],
    )


def load(
    sources: list[str], *, schemas: Sequence[str] = (), exclude: Sequence[str] = ()
) -> Catalog:
    """The catalog of `sources`; what the sources skipped is reported on stderr. Database URLs
    (`env:NAME` read from the environment) are restricted to `schemas` minus `exclude`."""
    from schemagraph import counted, load_catalog

    catalog = load_catalog(sources, schemas=schemas, exclude=exclude, environ=os.environ)
    for problem in catalog.problems:
        print(f"schemarag: warning: {problem}", file=sys.stderr)
    if catalog.problems:
        print(
            f"schemarag: {counted(len(catalog.problems), 'problem')} while loading; see above",
            file=sys.stderr,
        )
    return catalog


#: where `make demo` (`schemarag demo`) builds its knowledge base
DEMO_STORE = Path(".schemarag/demo-store")


def query_store(args: argparse.Namespace, settings: Settings) -> str:
    """The store a command that queries one reads: `--store`, else SCHEMARAG_STORE or
    `.schemarag/store`; when SCHEMARAG_STORE is unset, `.schemarag/store` holds no build and
    the demo's store does (`.schemarag/demo-store`, what `make demo` built), the demo's, said
    on stderr."""
    from store import StoreLocation

    if args.store:
        return str(args.store)
    default = StoreLocation.parse(settings.store_path)
    if default.current() is None and not os.environ.get("SCHEMARAG_STORE"):
        demo = StoreLocation.parse(DEMO_STORE)
        if demo.current() is not None:
            print(
                f"schemarag: no knowledge base at {settings.store_path}; using the demo's, "
                f"{DEMO_STORE} (--store chooses another)",
                file=sys.stderr,
            )
            return str(DEMO_STORE)
    return str(settings.store_path)


def use_remembered_sources(
    args: argparse.Namespace, location: StoreLocation, *, say: bool = True
) -> Manifest | None:
    """Without `--source`, the sources the served build of `location` was built from (its
    manifest's `sources`), set as `args.source` (and `args.sources_remembered`) with the schemas
    a URL source was restricted to (`args.source_schemas`, `args.source_exclude`) and, with
    `say`, named on stderr (a server's log says where its catalog came from). A remembered file
    or folder that is not there any more is a `UsageError` naming it and `--source`. Nothing
    changes when `--source` is given or the store has no build, or none that recorded its
    sources. Returns the manifest it read (None when it read none)."""
    from schemagraph.sources.remembered import moved_source
    from store.manifest import read_manifest

    if args.source:
        return None
    build = location.current()
    if build is None:
        return None
    manifest = read_manifest(location, build)
    records = [
        r for r in manifest.sources if isinstance(r, dict) and isinstance(r.get("spec"), str)
    ]
    if not records:
        return manifest
    for record in records:
        moved = moved_source(record["spec"])
        if moved is not None:
            raise UsageError(
                f"the store {location.where} was built from {record['spec']}, and {moved} is not "
                "there any more; pass --source KIND:PATH to say where that catalog is now"
            )
    url_records = [r for r in records if "schemas" in r or "exclude" in r]
    args.source = [r["spec"] for r in records]
    args.sources_remembered = True
    args.source_schemas = list(url_records[0].get("schemas", ())) if url_records else []
    args.source_exclude = list(url_records[0].get("exclude", ())) if url_records else []
    if say:
        print(
            "schemarag: catalog from the sources the store was built from: "
            f"{' '.join(args.source)} (--source overrides)",
            file=sys.stderr,
        )
    return manifest


def load_given_sources(args: argparse.Namespace) -> Catalog:
    """The catalog of `args.source` (given, or remembered by `use_remembered_sources`)."""
    return load(
        args.source,
        schemas=getattr(args, "source_schemas", None) or (),
        exclude=getattr(args, "source_exclude", None) or (),
    )


def add_traversal_options(parser: argparse.ArgumentParser) -> None:
    from schemagraph.traversals import TraversalConfig

    defaults = TraversalConfig()
    parser.add_argument(
        "--cutoff", type=int, default=defaults.cutoff, help="most tables per traversal"
    )
    parser.add_argument(
        "--max-per-database",
        type=int,
        default=defaults.max_per_database,
        help="most multi-table traversals per database",
    )
    parser.add_argument(
        "--walks",
        type=int,
        default=defaults.walks,
        help=f"random walks tried per database (default {defaults.walks}); one is kept when "
        "its tables were not enumerated already",
    )
    parser.add_argument("--seed", type=int, default=defaults.seed)


def traversal_config(args: argparse.Namespace) -> TraversalConfig:
    from schemagraph.traversals import TraversalConfig

    return TraversalConfig(
        cutoff=args.cutoff,
        max_per_database=args.max_per_database,
        walks=args.walks,
        seed=args.seed,
    )


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))
