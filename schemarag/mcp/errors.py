"""The MCP tools' one error."""

from __future__ import annotations

__all__ = ["EstateError"]


class EstateError(Exception):
    """A request the estate cannot answer, said in one sentence for the model to read."""
