"""The knowledge base: synthetic (question, SQL) records for every traversal, in Qdrant.

Three rooms: `synthesis` (the template and LLM synthesizers, ICRL, reward, feedback: pairs for
one traversal), `examples` (users' own pairs: files, records, the store that keeps them) and
`building` (plan, journal, synthesis steps, loading, publishing); `validate` (SQL checked against
a database) serves the first two. Where a build lives and what it holds (location, manifest,
snapshot, table documents) is the `store` package's, which the retriever reads too.

location = store.StoreLocation.parse(".schemarag/store")
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
    from indexer.building.config import BuildConfig, BuildServices
    from indexer.building.report import BuildReport
    from indexer.building.run import build_index
    from indexer.building.status import index_status
    from indexer.building.synthesize import auto_processes
    from indexer.errors import BuildError, ExamplesFileError, IndexerError
    from indexer.examples.files import ExampleFile, Rejected, UserExample, read_examples
    from indexer.examples.stored import ExampleStore, StoredExample
    from indexer.examples.updates import (
        ExamplesReport,
        add_examples,
        remove_examples,
        validate_examples,
    )
    from indexer.synthesis.chains import make_chain_runner, make_feedback, make_synthesizer
    from indexer.synthesis.feedback import LLMFeedback, RuleFeedback
    from indexer.synthesis.icrl import ChainResult, run_icrl
    from indexer.synthesis.llm_synthesizer import LLMSynthesizer
    from indexer.synthesis.pairs import (
        Feedback,
        FeedbackProducer,
        QAPair,
        SynthesisRequest,
        Synthesizer,
    )
    from indexer.synthesis.reward import Reward
    from indexer.synthesis.templates import TemplateSynthesizer
    from indexer.validate import Validation, validate_sql

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "building.config": ["BuildConfig", "BuildServices"],
        "building.run": ["build_index"],
        "building.synthesize": ["auto_processes"],
        "synthesis.chains": ["make_chain_runner", "make_feedback", "make_synthesizer"],
        "errors": ["BuildError", "ExamplesFileError", "IndexerError"],
        "examples.files": ["ExampleFile", "Rejected", "UserExample", "read_examples"],
        "examples.stored": ["ExampleStore", "StoredExample"],
        "building.report": ["BuildReport"],
        "building.status": ["index_status"],
        "examples.updates": [
            "ExamplesReport",
            "add_examples",
            "remove_examples",
            "validate_examples",
        ],
        "validate": ["Validation", "validate_sql"],
        "synthesis.feedback": ["LLMFeedback", "RuleFeedback"],
        "synthesis.icrl": ["ChainResult", "run_icrl"],
        "synthesis.llm_synthesizer": ["LLMSynthesizer"],
        "synthesis.pairs": [
            "Feedback",
            "FeedbackProducer",
            "QAPair",
            "SynthesisRequest",
            "Synthesizer",
        ],
        "synthesis.reward": ["Reward"],
        "synthesis.templates": ["TemplateSynthesizer"],
    },
)

__all__ = [
    "BuildConfig",
    "BuildError",
    "BuildReport",
    "BuildServices",
    "ExampleFile",
    "ExampleStore",
    "ExamplesFileError",
    "ExamplesReport",
    "IndexerError",
    "Rejected",
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
