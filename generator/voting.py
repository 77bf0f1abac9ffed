"""Selection by execution results: PET-SQL's naive and fine-grained majority votes.

Candidates that ran are grouped by `execution.result_key` (the same rows, whatever their order
or column order); the biggest group wins, ties going to the group whose first member was
generated first, and the group's first member is returned. Candidates that failed or held no
SQL do not vote. The fine-grained vote counts only the voters chosen for the PreSQL's Spider
hardness (`VoterSets`, e.g. the models that were most accurate on hard questions), falling back
to every candidate when that set has no runnable candidate.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.errors import GeneratorConfigError
from generator.execution import Executed, result_key

HARDNESS_LEVELS = ("easy", "medium", "hard", "extra")


@dataclass(frozen=True)
class Selection:
    """The chosen candidate: `position` in the list given to the selector (None: nothing to
    choose), its SQL, why, and selector-specific details for the trace."""

    method: str
    position: int | None
    sql: str | None
    reason: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "position": self.position,
            "sql": self.sql,
            "reason": self.reason,
            **dict(self.details),
        }


def first_with_sql(executed: Sequence[Executed], method: str, reason: str) -> Selection:
    """The earliest candidate that has SQL (the fallback when nothing ran)."""
    for position, item in enumerate(executed):
        if item.candidate.sql is not None:
            return Selection(method, position, item.candidate.sql, reason)
    return Selection(method, None, None, "no candidate holds SQL")


def result_groups(executed: Sequence[Executed]) -> list[list[int]]:
    """Positions of the candidates that ran, grouped by equal results, in order of each
    group's first member."""
    groups: dict[Hashable, list[int]] = {}
    for position, item in enumerate(executed):
        result = item.result
        if result is not None:
            groups.setdefault(result_key(result), []).append(position)
    return list(groups.values())


def naive_vote(executed: Sequence[Executed], *, method: str = "naive vote") -> Selection:
    """Majority vote over execution results (see the module docstring)."""
    groups = result_groups(executed)
    if not groups:
        return first_with_sql(executed, method, "no candidate ran; returning the first with SQL")
    best = max(groups, key=lambda g: (len(g), -g[0]))
    tie = sum(1 for g in groups if len(g) == len(best)) > 1
    position = best[0]
    reason = f"{len(best)} of {sum(len(g) for g in groups)} runnable candidates agree"
    if tie:
        reason += "; tie broken by generation order"
    details = {
        "groups": [[executed[p].candidate.index for p in g] for g in groups],
        "tie": tie,
        "failed": [i.candidate.index for i in executed if not i.ok],
    }
    return Selection(method, position, executed[position].candidate.sql, reason, details)


@dataclass(frozen=True)
class VoterSets:
    """LLM names (`LLM.name`) allowed to vote, per Spider hardness level."""

    by_hardness: Mapping[str, tuple[str, ...]]

    def __post_init__(self) -> None:
        unknown = set(self.by_hardness) - set(HARDNESS_LEVELS)
        if unknown:
            raise GeneratorConfigError(
                f"voter sets name unknown hardness level(s) {sorted(unknown)}; "
                f"use {', '.join(HARDNESS_LEVELS)}"
            )
        object.__setattr__(self, "by_hardness", {k: tuple(v) for k, v in self.by_hardness.items()})

    def voters(self, hardness: str | None) -> tuple[str, ...] | None:
        if hardness is None:
            return None
        found = self.by_hardness.get(hardness)
        return found if found else None


def fine_grained_vote(
    executed: Sequence[Executed], hardness: str | None, voter_sets: VoterSets
) -> Selection:
    """The naive vote among the voters of the PreSQL's hardness (see the module docstring)."""
    method = "fine-grained vote"
    voters = voter_sets.voters(hardness)
    if voters is None:
        chosen = naive_vote(executed, method=method)
        note = f"no voter set for hardness {hardness!r}; every candidate voted"
        return Selection(
            method,
            chosen.position,
            chosen.sql,
            f"{chosen.reason}; {note}",
            {**chosen.details, "hardness": hardness, "voters": None},
        )
    members = [p for p, item in enumerate(executed) if item.candidate.llm in voters]
    if not any(executed[p].ok for p in members):
        chosen = naive_vote(executed, method=method)
        note = f"no runnable candidate from the {hardness} voters; every candidate voted"
        return Selection(
            method,
            chosen.position,
            chosen.sql,
            f"{chosen.reason}; {note}",
            {**chosen.details, "hardness": hardness, "voters": list(voters)},
        )
    subset = [executed[p] for p in members]
    chosen = naive_vote(subset, method=method)
    assert chosen.position is not None
    position = members[chosen.position]
    return Selection(
        method,
        position,
        executed[position].candidate.sql,
        f"{chosen.reason} among the {hardness} voters",
        {**chosen.details, "hardness": hardness, "voters": list(voters)},
    )


def random_choice(executed: Sequence[Executed], seed: int) -> Selection:
    """A uniformly random candidate (a baseline), seeded."""
    if not executed:
        return Selection("random", None, None, "no candidates")
    position = random.Random(seed).randrange(len(executed))
    return Selection("random", position, executed[position].candidate.sql, "uniform random")
