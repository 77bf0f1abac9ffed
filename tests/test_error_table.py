"""The application's one error table: every row names a real exception class, and the CLI, the
HTTP app and the MCP server answer an error from it alike."""

from __future__ import annotations

import pytest

from schemarag.errors import ERRORS, error_class, rule_for


def test_every_row_names_an_exception_class_that_finds_its_own_row() -> None:
    for name, rule in ERRORS.items():
        cls = error_class(name)
        assert f"{cls.__module__}.{cls.__qualname__}" == name
        assert rule.exit == 2 and 400 <= rule.status < 600 and rule.code


def test_an_error_is_answered_by_its_nearest_class() -> None:
    from indexer.errors import BuildError, IndexerError
    from retriever.errors import RetrieverError
    from store.errors import LayoutError, StoreBusyError, StoreError

    assert rule_for(StoreBusyError("held")) == ERRORS["store.errors.StoreBusyError"]
    assert rule_for(StoreError("gone")).code == "not_ready"  # type: ignore[union-attr]
    assert rule_for(LayoutError("shards must be >= 1")).code == "invalid_request"  # type: ignore[union-attr]
    assert issubclass(BuildError, IndexerError)
    assert rule_for(BuildError("x")) == ERRORS["indexer.errors.IndexerError"]
    assert rule_for(RetrieverError("x")).code == "invalid_request"  # type: ignore[union-attr]
    assert rule_for(ValueError("a bug")) is None


def test_the_mcp_server_reports_a_retriever_error_in_one_line_like_the_cli() -> None:
    pytest.importorskip("mcp")
    from mcp.server.mcpserver.exceptions import ToolError

    from retriever.errors import RetrieverError
    from schemarag.mcp.server import _call

    def fails() -> None:
        raise RetrieverError("top_k must be >= 1, got 0")

    with pytest.raises(ToolError) as raised:
        _call("find_tables", fails)
    assert str(raised.value) == "top_k must be >= 1, got 0"
