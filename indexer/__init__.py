"""The knowledge base: synthetic (question, SQL) records for every traversal, in Qdrant.

location = StoreLocation.parse(".schemarag/store")
runner = make_chain_runner(make_synthesizer("template", None), make_feedback("rule", None),
                           chains=3, iterations=2)
report = build_index(catalog, location, BuildServices(runner, "template", embedder))
"""

from indexer.build import BuildConfig, BuildServices, build_index
from indexer.chains import make_chain_runner, make_feedback, make_synthesizer
from indexer.errors import BuildError, IndexerError, StoreError
from indexer.knowledge import table_document
from indexer.report import BuildReport
from indexer.store import StoreLocation, index_status
from indexer.validate import Validation, validate_sql

__all__ = [
    "BuildConfig",
    "BuildError",
    "BuildReport",
    "BuildServices",
    "IndexerError",
    "StoreError",
    "StoreLocation",
    "Validation",
    "build_index",
    "index_status",
    "make_chain_runner",
    "make_feedback",
    "make_synthesizer",
    "table_document",
    "validate_sql",
]
