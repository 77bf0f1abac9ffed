"""Errors raised by the store.

StoreError          root: the store is missing, malformed or locked
├── StoreBusyError  another build holds the store's build lock
└── LayoutError     a collection layout that cannot be (shards or replicas below 1)
"""

from __future__ import annotations


class StoreError(Exception):
    """The knowledge-base store cannot be used as asked."""


class StoreBusyError(StoreError):
    """Another build (or examples change) holds the store's build lock."""


class LayoutError(StoreError):
    """A collection layout asked for what a Qdrant server cannot hold."""
