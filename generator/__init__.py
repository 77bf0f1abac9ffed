"""SQL generation: PET-SQL prompts and PreSQL linking, AC-SQL critics, voting, MSc-SQL
multi-sample critique and test-case re-ranking, each a plain function over explicit inputs.

    from generator import GenerateRequest, Models, generate, generate_sql
    result = generate_sql("How many singers are there?", catalog.database("concert_singer"),
                          Models((llm,)), config=GenerationConfig(strategy="vote"))
    result.sql, result.trace

Modules, each named after what it does:

- `prompt`      the reference-enhanced prompt and its token budget (`build_prompt`);
- `extract`     SQL out of a model reply; `verdicts`: True/False and candidate indexes;
- `candidates`  one or many calls (LLMs × temperatures × samples) → `Candidate`s;
- `execution`   candidates run through `schemagraph.sql` (safe executor); result keys;
- `linking`     PreSQL → tables (sqlglot) and hardness;
- `critic`      AC-SQL actor-critic loop and Theorem 1 (`expected_accuracy`);
- `voting`      naive and fine-grained majority votes, the random baseline;
- `critique`    MSc-SQL multi-sample critique and its pairwise tournament;
- `testdb`      small test databases (FK-preserving random rows, fuzzing);
- `reranking`   test-case re-ranking;
- `strategies`  the stages composed into named strategies (`generate_sql`);
- `service`     `generate(GenerateRequest) -> GenerateResult`, for `/v1/generate` and `ask`;
- `calls`, `text` LLM calls counted per stage; token estimates and delimited data blocks.

The generation benchmarks (execution accuracy, the actor-critic and voting simulations) are the
`evaluation` package's.

Errors (`generator.errors`)::

    GeneratorError
    ├── GeneratorConfigError   bad setting, unknown strategy, no LLM configured
    ├── PromptBudgetError      the prompt cannot fit the budget
    ├── NoDataError            execution needed on a database without a SQLite file
    └── RetrievalNeededError   no database named and no retriever
"""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from generator.candidates import SamplingPlan, generate_candidates, generate_one
    from generator.critic import (
        ActorCriticConfig,
        ActorCriticResult,
        Attempt,
        actor_critic,
        expected_accuracy,
        llm_critic,
    )
    from generator.critique import CritiqueConfig, multi_sample_critique
    from generator.errors import (
        GeneratorConfigError,
        GeneratorError,
        NoDataError,
        PromptBudgetError,
        RetrievalNeededError,
    )
    from generator.execution import (
        Candidate,
        Executed,
        Runner,
        cached_runner,
        database_runner,
        result_key,
        run_candidates,
        sqlite_runner,
    )
    from generator.extract import extract_sql
    from generator.linking import Linking, link_tables
    from generator.prompt import FewShot, Prompt, PromptConfig, PromptCuts, build_prompt
    from generator.reranking import TestCaseConfig, rerank_by_tests
    from generator.service import GenerateRequest, GenerateResult, generate
    from generator.strategies import (
        DEFAULT_STRATEGY,
        STRATEGIES,
        GenerationConfig,
        GenerationResult,
        Models,
        generate_sql,
    )
    from generator.testdb import TestDatabase, build_test_database
    from generator.verdicts import parse_index, parse_verdict
    from generator.voting import Selection, VoterSets, fine_grained_vote, naive_vote, random_choice

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "candidates": ["SamplingPlan", "generate_candidates", "generate_one"],
        "critic": [
            "ActorCriticConfig",
            "ActorCriticResult",
            "Attempt",
            "actor_critic",
            "expected_accuracy",
            "llm_critic",
        ],
        "critique": ["CritiqueConfig", "multi_sample_critique"],
        "errors": [
            "GeneratorConfigError",
            "GeneratorError",
            "NoDataError",
            "PromptBudgetError",
            "RetrievalNeededError",
        ],
        "execution": [
            "Candidate",
            "Executed",
            "Runner",
            "cached_runner",
            "database_runner",
            "result_key",
            "run_candidates",
            "sqlite_runner",
        ],
        "extract": ["extract_sql"],
        "linking": ["Linking", "link_tables"],
        "prompt": ["FewShot", "Prompt", "PromptConfig", "PromptCuts", "build_prompt"],
        "reranking": ["TestCaseConfig", "rerank_by_tests"],
        "service": ["GenerateRequest", "GenerateResult", "generate"],
        "strategies": [
            "DEFAULT_STRATEGY",
            "STRATEGIES",
            "GenerationConfig",
            "GenerationResult",
            "Models",
            "generate_sql",
        ],
        "testdb": ["TestDatabase", "build_test_database"],
        "verdicts": ["parse_index", "parse_verdict"],
        "voting": ["Selection", "VoterSets", "fine_grained_vote", "naive_vote", "random_choice"],
    },
)

__all__ = [
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "ActorCriticConfig",
    "ActorCriticResult",
    "Attempt",
    "Candidate",
    "CritiqueConfig",
    "Executed",
    "FewShot",
    "GenerateRequest",
    "GenerateResult",
    "GenerationConfig",
    "GenerationResult",
    "GeneratorConfigError",
    "GeneratorError",
    "Linking",
    "Models",
    "NoDataError",
    "Prompt",
    "PromptBudgetError",
    "PromptConfig",
    "PromptCuts",
    "RetrievalNeededError",
    "Runner",
    "SamplingPlan",
    "Selection",
    "TestCaseConfig",
    "TestDatabase",
    "VoterSets",
    "actor_critic",
    "build_prompt",
    "build_test_database",
    "cached_runner",
    "database_runner",
    "expected_accuracy",
    "extract_sql",
    "fine_grained_vote",
    "generate",
    "generate_candidates",
    "generate_one",
    "generate_sql",
    "link_tables",
    "llm_critic",
    "multi_sample_critique",
    "naive_vote",
    "parse_index",
    "parse_verdict",
    "random_choice",
    "rerank_by_tests",
    "result_key",
    "run_candidates",
    "sqlite_runner",
]
