"""The one table of the errors the application answers in one line: the CLI's exit status, the
HTTP status and error code, and what the MCP server's tool error says.

Every package keeps its own error root; `ERRORS` lists them (and the few narrower classes that
are answered differently) by dotted name, `module.Class`, so that reading the table imports
none of them: the CLI's commands load only what they run (`evaluation` only for `bench`). An
error is answered by the nearest of its classes in the table (`rule_for` walks its method
resolution order: a `StoreBusyError` by its own row, a `BuildError` by `IndexerError`'s); an
error of no class here is a bug (a traceback in the CLI, 500 over HTTP, a logged tool error in
MCP).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ERRORS", "ErrorRule", "error_class", "rule_for"]


@dataclass(frozen=True)
class ErrorRule:
    """How an error is answered. `exit`: the CLI's status; `status` and `code`: HTTP's;
    `prefix`: what an HTTP message starts with (`{provider}`: what the route calls); `field`:
    the request field at fault, when the request named one; `retry_after`: seconds for an HTTP
    Retry-After header."""

    status: int
    code: str
    exit: int = 2
    prefix: str = ""
    field: str | None = None
    retry_after: int | None = None


INVALID = ErrorRule(422, "invalid_request")
NOT_READY = ErrorRule(503, "not_ready")
UNAVAILABLE = ErrorRule(503, "store_unavailable", prefix="vector store: ")

ERRORS: Mapping[str, ErrorRule] = {
    # the application's own
    "schemarag.api.generation.GenerationUnavailableError": ErrorRule(501, "not_configured"),
    "schemarag.api.examples.ExamplesUnavailableError": ErrorRule(501, "not_configured"),
    "schemarag.cli.common.UsageError": INVALID,
    "schemarag.pending_catalog.CatalogNotReadyError": ErrorRule(503, "not_ready", retry_after=2),
    # narrower classes of the packages' roots
    "retriever.errors.StoreNotReadyError": NOT_READY,
    "generator.errors.RetrievalNeededError": NOT_READY,
    "store.errors.StoreBusyError": ErrorRule(409, "busy", retry_after=5),
    "store.errors.LayoutError": INVALID,
    "schemagraph.errors.CatalogError": ErrorRule(422, "invalid_request", field="db_id"),
    # the packages' roots
    "schemagraph.errors.SchemaGraphError": INVALID,
    "retriever.errors.RetrieverError": INVALID,
    "generator.errors.GeneratorError": INVALID,
    "indexer.errors.IndexerError": INVALID,
    "store.errors.StoreError": ErrorRule(503, "not_ready", retry_after=5),
    "providers.errors.ProviderError": ErrorRule(502, "upstream_error", prefix="{provider}: "),
    "evaluation.errors.EvaluationError": INVALID,
    # a Qdrant server that cannot be reached or fails
    "qdrant_client.http.exceptions.ResponseHandlingException": UNAVAILABLE,
    "qdrant_client.http.exceptions.UnexpectedResponse": UNAVAILABLE,
    "httpx.TransportError": UNAVAILABLE,
}


def rule_for(error: BaseException) -> ErrorRule | None:
    """How `error` is answered: the row of the nearest of its classes, or None (a bug)."""
    for cls in type(error).__mro__:
        rule = ERRORS.get(f"{cls.__module__}.{cls.__qualname__}")
        if rule is not None:
            return rule
    return None


def error_class(name: str) -> type[Exception]:
    """The class a row of `ERRORS` names (imported now)."""
    module, _, qualname = name.rpartition(".")
    cls = getattr(importlib.import_module(module), qualname)
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        raise TypeError(f"{name} is not an exception class")
    return cls
