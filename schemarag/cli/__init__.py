"""The `schemarag` command line.

Each command group lives in its own module with a `register(subparsers)` function that adds its
parsers and sets `func` to a handler `(args) -> int`. Only the module of the command being run
is imported (`COMMANDS` names them), so `--version`, `--help` and light commands start without
loading models, Qdrant or the web stack. User mistakes raise one of the packages' error roots
and are printed as one line, never as a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

from schemarag.cli.common import COMMANDS, Parser, check_outputs


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command's full options, or, given `command`, with that command's
    options and a one-line entry for each other command (enough for `--help`)."""
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
    modules = dict.fromkeys(
        module for name, (module, _) in COMMANDS.items() if command in (None, name)
    )
    for name, (module, summary) in COMMANDS.items():
        if module not in modules:
            sub.add_parser(name, help=summary)
    for module in modules:
        import_module(f"schemarag.cli.{module}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(next((a for a in arguments if not a.startswith("-")), ""))
    args = parser.parse_args(arguments)
    args.arguments = arguments  # as given: result files record the command
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    from schemarag.cli.stopping import Terminated, raise_on_sigterm
    from schemarag.errors import rule_for

    restore = raise_on_sigterm()
    try:
        check_outputs(args)
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("schemarag: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("schemarag: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except BrokenPipeError:
        return 0
    except Exception as exc:  # one line for what the error table lists; a bug stays a traceback
        rule = rule_for(exc)
        if rule is None:
            raise
        print(f"schemarag: error: {exc}", file=sys.stderr)
        return rule.exit
    finally:
        restore()


def _version() -> str:
    try:
        return version("schemarag")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"
