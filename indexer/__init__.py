"""The knowledge base: synthetic (question, SQL) records for every traversal, in Qdrant.

location = StoreLocation.parse(".schemarag/store")
runner = make_chain_runner(make_synthesizer("template", None), make_feedback("rule", None),
                           chains=3, iterations=2)
report = build_index(catalog, location, BuildServices(runner, "template", embedder))

Users' own examples (validated, kept across builds, searchable at once):

found = read_examples(Path("query_log.jsonl"))
add_examples(catalog, location, embedder, found.examples, rejected=found.rejected)
remove_examples(location, ids=["ex_0123456789abcdef"])
"""

from indexer.build import (
    BuildConfig,
    BuildServices,
    CollectionLayout,
    auto_processes,
    build_index,
)
from indexer.chains import make_chain_runner, make_feedback, make_synthesizer
from indexer.errors import BuildError, ExamplesFileError, IndexerError, StoreError
from indexer.example_files import ExampleFile, Rejected, UserExample, read_examples
from indexer.example_store import ExampleStore, StoredExample
from indexer.knowledge import table_document
from indexer.report import BuildReport
from indexer.store import StoreLocation, index_status
from indexer.user_examples import (
    ExamplesReport,
    add_examples,
    remove_examples,
    validate_examples,
)
from indexer.validate import Validation, validate_sql

__all__ = [
    "BuildConfig",
    "BuildError",
    "BuildReport",
    "BuildServices",
    "CollectionLayout",
    "ExampleFile",
    "ExampleStore",
    "ExamplesFileError",
    "ExamplesReport",
    "IndexerError",
    "Rejected",
    "StoreError",
    "StoreLocation",
    "StoredExample",
    "UserExample",
    "Validation",
    "add_examples",
    "auto_processes",
    "build_index",
    "index_status",
    "make_chain_runner",
    "make_feedback",
    "make_synthesizer",
    "read_examples",
    "remove_examples",
    "table_document",
    "validate_examples",
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
