"""Feedback producers: turn a question, its SQL and its reward into an instruction for the next
ICRL attempt (DESIGN.md, "ICRL loop").

- `RuleFeedback` (offline): reads the reward's bucket breakdown, names the under-represented
  buckets, and picks concrete operators to add — among those the traversal allows, the ones
  that would raise the reward most (the reward is a function of keyword counts, so the gain of
  adding an operator's keywords is computed exactly), with a seeded choice among the best.
- `LLMFeedback`: asks a model, with in-context examples, the schema, the question, its SQL and
  its reward; parses the operators it names.
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache

from indexer.synthesis.pairs import Feedback, QAPair, SynthesisRequest
from indexer.synthesis.reward import BUCKET_OF, BUCKETS, SCORE, Reward, marginal_gain, reward
from indexer.synthesis.templates import TEMPLATE_OPERATORS, feasible_operators
from providers.llm import LLM, Message
from schemagraph.seeds import derive_seed
from schemagraph.serialize import compact_text

log = logging.getLogger("indexer.feedback")  # the name log configurations know

OPERATORS: tuple[str, ...] = (
    *sorted(TEMPLATE_OPERATORS),
    "RIGHT JOIN",
    "INNER JOIN",
    "CASE",
)
"""Operator names feedback may ask for: the template synthesizer's, plus what only an LLM
writes."""

_BUNDLES: Mapping[str, Mapping[str, int]] = {
    "JOIN": {"JOIN": 1, "ON": 1},
    "INNER JOIN": {"JOIN": 1, "INNER JOIN": 1, "ON": 1},
    "LEFT JOIN": {"JOIN": 1, "LEFT JOIN": 1, "ON": 1, "GROUP BY": 1, "COUNT": 1},
    "RIGHT JOIN": {"JOIN": 1, "RIGHT JOIN": 1, "ON": 1},
    "WHERE": {"WHERE": 1},
    "AND": {"AND": 1},
    "OR": {"OR": 1},
    "NOT": {"NOT": 1},
    "IN": {"IN": 1},
    "BETWEEN": {"BETWEEN": 1},
    "LIKE": {"LIKE": 1},
    "CASE": {"CASE": 1, "WHEN": 1, "THEN": 1, "ELSE": 1, "END": 1},
    "DISTINCT": {"DISTINCT": 1},
    "GROUP BY": {"GROUP BY": 1, "COUNT": 1},
    "HAVING": {"HAVING": 1, "COUNT": 1},
    "ORDER BY": {"ORDER BY": 1, "DESC": 1},
    "LIMIT": {"LIMIT": 1},
    "ASC": {"ASC": 1},
    "DESC": {"DESC": 1},
    "COUNT": {"COUNT": 1},
    "AVG": {"AVG": 1},
    "SUM": {"SUM": 1},
    "MIN": {"MIN": 1},
    "MAX": {"MAX": 1},
    "SUBQUERY": {"SELECT": 1, "FROM": 1, "IN": 1},
}
"""The reward keywords an operator typically brings into a query."""

_NEEDS = {
    "HAVING": "GROUP BY",
    "LIMIT": "ORDER BY",
    "ASC": "ORDER BY",
    "DESC": "ORDER BY",
}
_CONDITIONAL = {"AND", "OR", "NOT", "IN", "BETWEEN", "LIKE", "SUBQUERY"}
_MULTI_TABLE = {"JOIN", "INNER JOIN", "LEFT JOIN", "RIGHT JOIN"}

_HINTS = {
    "JOIN": "join the tables along their foreign keys",
    "INNER JOIN": "join the tables along their foreign keys",
    "LEFT JOIN": "keep rows without a match with a LEFT JOIN, e.g. counting related rows",
    "RIGHT JOIN": "keep rows of the second table without a match",
    "WHERE": "filter rows with a condition on a column",
    "AND": "combine two conditions",
    "OR": "accept either of two conditions",
    "NOT": "negate a condition (NOT IN, NOT LIKE, NOT BETWEEN)",
    "IN": "test membership in a list of values or a subquery",
    "BETWEEN": "ask for a range of values",
    "LIKE": "match part of a text value",
    "CASE": "classify rows with a CASE expression",
    "DISTINCT": "ask for distinct values",
    "GROUP BY": "group rows by a column and aggregate each group",
    "HAVING": "keep only groups that meet a condition",
    "ORDER BY": "sort the result",
    "LIMIT": "ask for the top or bottom rows",
    "ASC": "sort in ascending order",
    "DESC": "sort in descending order",
    "COUNT": "count rows",
    "AVG": "average a numeric column",
    "SUM": "total a numeric column",
    "MIN": "find the smallest value",
    "MAX": "find the largest value",
    "SUBQUERY": "use a nested query (e.g. compare with an average, or NOT IN another table)",
}


def operators_in(reward: Reward) -> frozenset[str]:
    """The operators a scored query already uses (SUBQUERY: more than one SELECT)."""
    counts = reward.counts
    found = {op for op, bundle in _BUNDLES.items() if op in counts and counts[op] > 0}
    found |= {op for op in ("JOIN",) if counts.get("JOIN", 0) > 0}
    if counts.get("SELECT", 0) > 1:
        found.add("SUBQUERY")
    return frozenset(found & set(_BUNDLES))


def operator_gain(reward: Reward, operator: str) -> float:
    """How much adding `operator` (with what it needs: WHERE for a condition, GROUP BY for
    HAVING, ORDER BY for LIMIT) would change the reward of the query `reward` scored."""
    return _operator_gain(reward.keywords, reward.total, operator)


@lru_cache(maxsize=1 << 16)
def _operator_gain(keywords: tuple[tuple[str, int], ...], total: float, operator: str) -> float:
    """The gain for a query's keyword counts (the reward is a function of them): the feedback
    weighs a dozen operators at every attempt, and attempts share few keyword profiles."""
    added: Counter[str] = Counter(_BUNDLES[operator])
    counts = dict(keywords)
    needed = _NEEDS.get(operator)
    if needed and counts.get(needed, 0) == 0:
        added |= Counter(_BUNDLES[needed])  # union: HAVING's COUNT is GROUP BY's COUNT
    if operator in _CONDITIONAL and counts.get("WHERE", 0) == 0:
        added["WHERE"] += 1
    return marginal_gain(Reward(total, (), keywords), added)


def under_represented(reward: Reward) -> list[str]:
    """Buckets (other than data modification, which questions never need) with no keyword or
    less than a fifth of the keyword occurrences, in bucket order."""
    return [
        b.name
        for b in reward.buckets
        if b.name != "modification" and (b.count == 0 or b.share < 0.2)
    ]


def describe_reward(reward: Reward) -> str:
    """One line: the total and each non-empty bucket's keywords, frequency and share."""
    titles = {b.name: b.title for b in BUCKETS}
    parts = []
    for bucket in reward.buckets:
        if bucket.count == 0:
            continue
        words = [
            f"{k}×{n}" if n > 1 else k for k, n in reward.keywords if BUCKET_OF[k] == bucket.name
        ]
        parts.append(
            f"{titles[bucket.name]}: {', '.join(words)} (f={bucket.frequency:g}, "
            f"c={bucket.share:.2f})"
        )
    return f"reward {reward.total:.2f}" + (f" — {'; '.join(parts)}" if parts else "")


@dataclass(frozen=True)
class RuleFeedback:
    """Offline feedback from the reward breakdown; see the module docstring.

    `operators`: what may be asked for (default: what the template synthesizer can write);
    `add`: how many new operators to ask for at once; `pool`: how many of the best candidates
    the seeded choice picks from; `seed`: mixed with the request's seed; `feasible`: which
    operators the traversal allows (default: what the template synthesizer can build over it
    from the schema and sampled values; None: no restriction beyond joins needing two tables).
    """

    operators: Collection[str] = field(default=TEMPLATE_OPERATORS)
    add: int = 2
    pool: int = 4
    seed: int = 0
    feasible: Callable[[SynthesisRequest], Collection[str]] | None = feasible_operators

    def __post_init__(self) -> None:
        unknown = set(self.operators) - set(_BUNDLES)
        if unknown:
            raise ValueError(
                f"operators has unknown names {sorted(unknown)}; known: {sorted(_BUNDLES)}"
            )
        if self.add < 1:
            raise ValueError(f"add must be >= 1, got {self.add}")
        if self.pool < 1:
            raise ValueError(f"pool must be >= 1, got {self.pool}")

    def feedback(self, request: SynthesisRequest, pair: QAPair, reward: Reward) -> Feedback:
        present = operators_in(reward)
        candidates = self._candidates(request, present)
        rng = random.Random(
            derive_seed(self.seed, request.seed, "rule-feedback", request.traversal.id, pair.sql)
        )
        weak = under_represented(reward)
        chosen = self._choose(reward, candidates, weak, rng)
        keep = sorted(op for op in present if op in self.operators)
        return Feedback(self._text(reward, weak, chosen, keep), (*chosen, *keep))

    def _candidates(self, request: SynthesisRequest, present: frozenset[str]) -> list[str]:
        multi = len(request.traversal.tables) > 1
        allowed = set(self.feasible(request)) if self.feasible is not None else None
        return sorted(
            op
            for op in self.operators
            if op not in present
            and (multi or op not in _MULTI_TABLE)
            and (allowed is None or op in allowed)
        )

    def _choose(
        self, reward: Reward, candidates: list[str], weak: list[str], rng: random.Random
    ) -> list[str]:
        if not candidates:
            return []
        gains = {op: operator_gain(reward, op) for op in candidates}
        ranked = sorted(candidates, key=lambda op: (-gains[op], op))
        positive = [op for op in ranked if gains[op] > 0] or ranked
        pool = positive[: self.pool]
        weights = [2.0 if self._bucket(op) in weak else 1.0 for op in pool]
        chosen: list[str] = []
        while pool and len(chosen) < self.add:
            index = rng.choices(range(len(pool)), weights=weights)[0]
            chosen.append(pool.pop(index))
            weights.pop(index)
        return chosen

    @staticmethod
    def _bucket(operator: str) -> str:
        keywords = [k for k in _BUNDLES[operator] if k in SCORE]
        return BUCKET_OF[keywords[-1]] if operator != "SUBQUERY" else "conditional"

    @staticmethod
    def _text(reward: Reward, weak: list[str], chosen: list[str], keep: list[str]) -> str:
        titles = {b.name: b.title for b in BUCKETS}
        lines = [f"The last question's SQL has {describe_reward(reward)}."]
        if weak:
            lines.append("Under-represented: " + ", ".join(titles[name] for name in weak) + ".")
        if chosen:
            hints = "; ".join(f"{op}: {_HINTS[op]}" for op in chosen)
            lines.append(
                f"Write a new, harder question about the same tables whose SQL also uses "
                f"{' and '.join(chosen)} ({hints})."
            )
        else:
            lines.append("Write a new question about the same tables with a different shape.")
        if keep:
            lines.append(f"Keep {', '.join(keep)}.")
        lines.append("It must still read like a question a person would ask.")
        return " ".join(lines)


_FEEDBACK_SYSTEM = """\
You coach a writer of synthetic text-to-SQL training questions. Each question comes with the \
SQLite query that answers it. Questions are scored by a reward for SQL complexity with four \
keyword buckets:
- data retrieval and filtering: SELECT, FROM, JOIN, INNER/LEFT/RIGHT JOIN, ON, WHERE, GROUP BY, \
HAVING, ORDER BY, DISTINCT, LIMIT
- data modification: INSERT, UPDATE, DELETE (never wanted here)
- conditional logic: AND, OR, NOT, IN, BETWEEN, LIKE, CASE/WHEN/THEN/ELSE/END
- aggregation and sorting: AVG, SUM, COUNT, MIN, MAX, ASC, DESC
The reward is the sum over buckets of (summed keyword scores) x (bucket's share of keywords).
Give one short instruction (two sentences at most) for the next question: which under-used \
operators it should add, still about the same tables and still a natural question a person \
would ask. End with a line "Operators: " listing the SQL operators to add, comma-separated.
"""

_FEEDBACK_EXAMPLES: tuple[tuple[str, str, str, str], ...] = (
    (
        "What are the names of all singers?",
        "SELECT Name FROM singer",
        "Only the retrieval bucket is used. Ask for singers grouped by country, keeping only "
        "countries with more than a given number of singers.",
        "GROUP BY, HAVING, COUNT",
    ),
    (
        "How many dogs weigh more than 10?",
        "SELECT COUNT(*) FROM Dogs WHERE weight > 10",
        "Add conditional logic: restrict to dogs whose breed name contains a word and that were "
        "born between two dates, joining the breeds table.",
        "JOIN, LIKE, BETWEEN",
    ),
    (
        "Which stadium has the most concerts?",
        "SELECT T2.Name FROM concert AS T1 JOIN stadium AS T2 ON T1.Stadium_ID = T2.Stadium_ID "
        "GROUP BY T1.Stadium_ID ORDER BY COUNT(*) DESC LIMIT 1",
        "Retrieval is strong; conditional logic is missing. Only count concerts whose theme is "
        "not one of two given themes.",
        "NOT, IN",
    ),
)
"""In-context examples: (question, SQL, feedback, operators); their reward lines are computed."""


@cache
def _examples_text() -> str:
    blocks = []
    for number, (question, sql, advice, operators) in enumerate(_FEEDBACK_EXAMPLES, start=1):
        blocks.append(
            f"Example {number}\nQuestion: {question}\nSQL: {sql}\n"
            f"Reward: {describe_reward(reward(sql))}\nFeedback: {advice}\nOperators: {operators}\n"
        )
    return "\n".join(blocks)


_OPERATOR_LINE = re.compile(r"^\s*operators?\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_MENTIONED = re.compile(
    r"\b(" + "|".join(sorted((re.escape(op) for op in OPERATORS), key=len, reverse=True)) + r")\b"
)


def parse_operators(text: str) -> tuple[str, ...]:
    """Operators named on an "Operators:" line, else upper-case operator names in the text;
    unknown names are dropped, order kept, duplicates removed."""
    line = _OPERATOR_LINE.search(text)
    if line:
        names = [" ".join(part.upper().split()) for part in re.split(r"[,;/]", line.group(1))]
    else:
        names = _MENTIONED.findall(text)
    aliases = {"NESTED QUERY": "SUBQUERY", "SUB-QUERY": "SUBQUERY", "NOT IN": "NOT"}
    known = set(OPERATORS)
    found = [aliases.get(n.strip(" ."), n.strip(" .")) for n in names]
    return tuple(dict.fromkeys(n for n in found if n in known))


@dataclass(frozen=True)
class LLMFeedback:
    """Feedback written by a language model from in-context examples, the schema, the question,
    its SQL and its reward breakdown."""

    llm: LLM
    max_tokens: int = 300
    temperature: float = 0.0

    def feedback(self, request: SynthesisRequest, pair: QAPair, reward: Reward) -> Feedback:
        schema = compact_text(request.db, request.traversal.tables)
        prompt = (
            f"{_examples_text()}\nNow the real one.\nSchema:\n{schema}\n\n"
            f"Question: {pair.question}\nSQL: {pair.sql}\n"
            f"Reward: {describe_reward(reward)}\nFeedback:"
        )
        completion = self.llm.complete(
            _FEEDBACK_SYSTEM,
            [Message.user(prompt)],
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        reply = completion.text.strip()
        operators = parse_operators(reply)
        text = _OPERATOR_LINE.sub("", reply).strip() or reply
        if not text:
            log.warning("%s returned empty feedback for %s", self.llm.name, request.traversal.id)
        return Feedback(text, operators)
