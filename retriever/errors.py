"""The retriever's errors: one root, a few subclasses, for user mistakes only.

RetrieverError
├── StoreNotReadyError     the store holds no served build, or it does not fit the embedder
├── LeakageError           an evaluated question is in the knowledge base
└── BenchmarkDataError     a benchmark file is missing, malformed or inconsistent
"""

from __future__ import annotations


class RetrieverError(Exception):
    """Root of the retriever's errors."""


class StoreNotReadyError(RetrieverError):
    """No served build at the store, or one built with another embedder."""


class LeakageError(RetrieverError):
    """The knowledge base contains a question the benchmark evaluates."""


class BenchmarkDataError(RetrieverError):
    """A benchmark input cannot be used as given."""
