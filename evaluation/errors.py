"""The benchmarks' errors: one root, for user mistakes only.

EvaluationError
├── LeakageError           an evaluated question is in the knowledge base
└── BenchmarkDataError     a benchmark file is missing, malformed or inconsistent
"""

from __future__ import annotations


class EvaluationError(Exception):
    """Root of the benchmarks' errors."""


class LeakageError(EvaluationError):
    """The knowledge base contains a question the benchmark evaluates."""


class BenchmarkDataError(EvaluationError):
    """A benchmark input cannot be used as given."""
