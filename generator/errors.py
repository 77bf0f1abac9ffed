"""The generator's errors: one root, a few subclasses, for user mistakes only.

    GeneratorError
    ├── GeneratorConfigError   an argument out of range, an unknown strategy, no LLM configured
    ├── PromptBudgetError      the prompt cannot fit the token budget even after every cut
    ├── NoDataError            a stage needs the database's rows (a SQLite file) and there is none
    └── RetrievalNeededError   no database was named and no retriever is available

A model that answers badly (no SQL in the reply, a verdict that says nothing, a candidate that
fails to run) is *not* an error: stages record it in their trace and carry on, because a
pipeline over language models has to.
"""

from __future__ import annotations


class GeneratorError(Exception):
    """Root of the generator's errors meant for a user."""


class GeneratorConfigError(GeneratorError, ValueError):
    """A generation setting is invalid (names the setting)."""


class PromptBudgetError(GeneratorError):
    """Even the smallest prompt (one table, no rows, no examples) exceeds the token budget."""


class NoDataError(GeneratorError):
    """Execution was asked for on a database that has no SQLite file (and no server URL)."""


class RetrievalNeededError(GeneratorError):
    """No database was given and no retriever can choose one."""
