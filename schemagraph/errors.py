"""Errors raised by schemagraph.

    SchemaGraphError            root: a user-facing problem with schemas or their sources
    ├── SourceError             a source could not be read (missing file, malformed JSON, bad DDL)
    ├── CatalogError            the catalog is inconsistent (duplicate database id, dangling FK)
    └── TraversalError          bad traversal arguments (unknown database, bad cutoff)

Messages name the file or object and the problem, and where possible the fix.
"""

from __future__ import annotations


class SchemaGraphError(Exception):
    """Root of every schemagraph error meant for a user."""


class SourceError(SchemaGraphError):
    """A source (file, directory, spec) could not be read."""


class CatalogError(SchemaGraphError):
    """The catalog is inconsistent."""


class TraversalError(SchemaGraphError):
    """Traversal or serialization arguments are invalid."""
