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

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
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
    from indexer.feedback import LLMFeedback, RuleFeedback
    from indexer.icrl import ChainResult, run_icrl
    from indexer.knowledge import table_document
    from indexer.llm_synthesizer import LLMSynthesizer
    from indexer.pairs import (
        Feedback,
        FeedbackProducer,
        QAPair,
        SynthesisRequest,
        Synthesizer,
    )
    from indexer.report import BuildReport
    from indexer.reward import Reward
    from indexer.store import StoreLocation, index_status
    from indexer.templates import TemplateSynthesizer
    from indexer.user_examples import (
        ExamplesReport,
        add_examples,
        remove_examples,
        validate_examples,
    )
    from indexer.validate import Validation, validate_sql

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "build": [
            "BuildConfig",
            "BuildServices",
            "CollectionLayout",
            "auto_processes",
            "build_index",
        ],
        "chains": ["make_chain_runner", "make_feedback", "make_synthesizer"],
        "errors": ["BuildError", "ExamplesFileError", "IndexerError", "StoreError"],
        "example_files": ["ExampleFile", "Rejected", "UserExample", "read_examples"],
        "example_store": ["ExampleStore", "StoredExample"],
        "knowledge": ["table_document"],
        "report": ["BuildReport"],
        "store": ["StoreLocation", "index_status"],
        "user_examples": ["ExamplesReport", "add_examples", "remove_examples", "validate_examples"],
        "validate": ["Validation", "validate_sql"],
        "feedback": ["LLMFeedback", "RuleFeedback"],
        "icrl": ["ChainResult", "run_icrl"],
        "llm_synthesizer": ["LLMSynthesizer"],
        "pairs": ["Feedback", "FeedbackProducer", "QAPair", "SynthesisRequest", "Synthesizer"],
        "reward": ["Reward"],
        "templates": ["TemplateSynthesizer"],
    },
)

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
