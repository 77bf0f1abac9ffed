"""Errors raised by the indexer.

IndexerError        root: a user-facing problem with a build or a store
├── StoreError      the store is missing, malformed or locked
└── BuildError      a build cannot proceed (bad settings, nothing to index)
"""

from __future__ import annotations


class IndexerError(Exception):
    """Root of every indexer error meant for a user."""


class StoreError(IndexerError):
    """The knowledge-base store cannot be used as asked."""


class BuildError(IndexerError):
    """A build cannot proceed."""
