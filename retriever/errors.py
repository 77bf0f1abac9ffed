"""The retriever's errors: one root and its subclasses, for user mistakes only.

RetrieverError
└── StoreNotReadyError     the store holds no served build, or it does not fit the embedder
"""

from __future__ import annotations


class RetrieverError(Exception):
    """Root of the retriever's errors."""


class StoreNotReadyError(RetrieverError):
    """No served build at the store, or one built with another embedder."""
