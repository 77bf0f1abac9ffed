"""Errors raised by the indexer.

IndexerError             root: a user-facing problem with a build
├── BuildError           a build cannot proceed (bad settings, nothing to index)
└── ExamplesFileError    a file of users' examples cannot be read at all

The store's errors (`StoreError`, `StoreBusyError`) are `store.errors`'.
"""

from __future__ import annotations


class IndexerError(Exception):
    """Root of every indexer error meant for a user."""


class BuildError(IndexerError):
    """A build cannot proceed."""


class ExamplesFileError(IndexerError):
    """A file of users' examples is missing, unreadable or not in a known format."""
