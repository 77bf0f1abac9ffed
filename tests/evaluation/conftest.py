"""Fixtures: the retriever's small knowledge base over the bundled Spider sample and the
generator's sample databases, which the benchmarks run on."""

from tests.generator.conftest import catalog, concert
from tests.retriever.conftest import embedder, sample_catalog, store

__all__ = ["catalog", "concert", "embedder", "sample_catalog", "store"]
