"""The knowledge base: synthetic (question, SQL) records for every traversal, in Qdrant.

location = StoreLocation.parse(".schemarag/store")
runner = make_chain_runner(make_synthesizer("template", None), make_feedback("rule", None),
                           chains=3, iterations=2)
report = build_index(catalog, location, BuildServices(runner, "template", embedder))
"""

from indexer.build import BuildConfig, BuildServices, CollectionLayout, build_index
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
    "CollectionLayout",
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

# Synthesis: (question, SQL) pairs, the reward, synthesizers, feedback and the ICRL loop.
# (The function `reward` stays in `indexer.reward`: exporting it here would shadow the module.)
from indexer.feedback import LLMFeedback, RuleFeedback
from indexer.icrl import ChainResult, run_icrl
from indexer.llm_synthesizer import LLMSynthesizer
from indexer.pairs import (
    Feedback,
    FeedbackProducer,
    QAPair,
    SynthesisRequest,
    Synthesizer,
)
from indexer.reward import Reward
from indexer.templates import TemplateSynthesizer

__all__ += [
    "ChainResult",
    "Feedback",
    "FeedbackProducer",
    "LLMFeedback",
    "LLMSynthesizer",
    "QAPair",
    "Reward",
    "RuleFeedback",
    "SynthesisRequest",
    "Synthesizer",
    "TemplateSynthesizer",
    "run_icrl",
]
