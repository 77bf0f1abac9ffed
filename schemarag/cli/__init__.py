"""The `schemarag` command line.

Each command group lives in its own module with a `register(subparsers)` function that adds its
parsers and sets `func` to a handler `(args) -> int`. User mistakes raise one of the packages'
error roots and are printed as one line, never as a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from schemarag.cli import ask, bench, catalog, demo, index, retrieve, serve, sql
from schemarag.cli.common import Parser, UsageError, check_outputs
from schemarag.errors import USER_ERRORS

CLI_ERRORS: tuple[type[Exception], ...] = (*USER_ERRORS, UsageError)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="schemarag",
        description="Schema retrieval and text-to-SQL over many databases.",
        epilog="Exit status: 0 done; 1 the command ran and its answer is negative (no index yet, "
        "a query refused or failed); 2 bad input or a missing prerequisite (one line on stderr "
        "names it); 130 interrupted (SIGINT, Ctrl-C); 143 terminated (SIGTERM).",
    )
    parser.add_argument("--version", action="version", version=f"schemarag {_version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in (catalog, index, retrieve, serve, ask, bench, sql, demo):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    from schemarag.cli.stopping import Terminated, raise_on_sigterm

    restore = raise_on_sigterm()
    try:
        check_outputs(args)
        return int(args.func(args) or 0)
    except CLI_ERRORS as exc:
        print(f"schemarag: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("schemarag: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("schemarag: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except BrokenPipeError:
        return 0
    finally:
        restore()


def _version() -> str:
    try:
        return version("schemarag")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"
