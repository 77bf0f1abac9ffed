"""The error roots the application layer turns into one-line messages.

Every package keeps its own error root; this tuple is the one place that lists them, so the CLI
and the HTTP app treat user mistakes the same way.
"""

from __future__ import annotations

from evaluation.errors import EvaluationError
from generator.errors import GeneratorError
from indexer.errors import IndexerError
from providers.errors import ProviderError
from retriever.errors import RetrieverError
from schemagraph.errors import SchemaGraphError

USER_ERRORS: tuple[type[Exception], ...] = (
    SchemaGraphError,
    ProviderError,
    IndexerError,
    RetrieverError,
    GeneratorError,
    EvaluationError,
)
