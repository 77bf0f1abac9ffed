"""Errors raised by the indexer.

IndexerError             root: a user-facing problem with a build or a store
├── StoreError           the store is missing, malformed or locked
│   └── StoreBusyError   another build holds the store's build lock
├── BuildError           a build cannot proceed (bad settings, nothing to index)
└── ExamplesFileError    a file of users' examples cannot be read at all
"""

from __future__ import annotations


class IndexerError(Exception):
    """Root of every indexer error meant for a user."""


class StoreError(IndexerError):
    """The knowledge-base store cannot be used as asked."""


class StoreBusyError(StoreError):
    """Another build (or examples change) holds the store's build lock."""


class BuildError(IndexerError):
    """A build cannot proceed."""


class ExamplesFileError(IndexerError):
    """A file of users' examples is missing, unreadable or not in a known format."""
