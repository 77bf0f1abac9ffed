"""The ICRL reward: how much SQL structure a synthetic question exercises (paper eq. 1-2, A.3).

Keywords fall in four buckets, each keyword with a score (DESIGN.md, "Reward"). For a query S,
f(B_i, S) is bucket i's frequency, the summed scores of its keyword occurrences, and c(B_i) is
bucket i's share of all keyword occurrences; the reward is R(S) = sum_i f(B_i, S) * c(B_i).

Keywords are counted on the sqlglot syntax tree, never with a regex over the text, so a column
named `order_date` or `"select"` or a string literal 'group by' counts nothing. How tree nodes
map to keywords:

- every `Select` is SELECT, every `From` FROM, every `Where`/`Group`/`Having`/`Order`/`Limit`
  its clause keyword, every `Distinct` (SELECT DISTINCT, COUNT(DISTINCT x)) DISTINCT;
- every `Join` is JOIN, plus INNER JOIN / LEFT JOIN / RIGHT JOIN when written with that kind or
  side (so `LEFT OUTER JOIN` counts JOIN and LEFT JOIN), plus ON when it has an on-condition.
  sqlglot reads a comma join (`FROM a, b`) as a CROSS JOIN, so it counts as JOIN too;
- `And`, `Or`, `Not`, `In`, `Between`, `Like`/`ILike` their keyword; `x NOT LIKE y` and
  `x IS NOT NULL` (a negated node in sqlglot) count NOT as well;
- `Case` is CASE and END, each of its branches WHEN and THEN, a default ELSE;
- `Avg`, `Sum`, `Count`, `Min`, `Max` their function name;
- an ordering term is DESC when written DESC and ASC only when ASC is written: the tree keeps
  the difference (`Ordered.desc` is False for an explicit ASC, absent for the default), and the
  paper counts keywords that are there;
- `Insert`, `Update`, `Delete` their statement keyword.

The reward is not monotone in the keywords: adding a keyword to a sparse bucket dilutes the
share of a dense one and can lower the total (see `marginal_gain`). Bucket counts and
frequencies never drop when a clause is added.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

log = logging.getLogger("indexer.reward")  # the name log configurations know


@dataclass(frozen=True)
class Bucket:
    """One keyword bucket: a short `name` used as a key in reports, a `title`, the keyword
    scores."""

    name: str
    title: str
    scores: Mapping[str, int]


BUCKETS: tuple[Bucket, ...] = (
    Bucket(
        "retrieval",
        "data retrieval and filtering",
        {
            "SELECT": 1,
            "FROM": 1,
            "JOIN": 2,
            "INNER JOIN": 3,
            "LEFT JOIN": 3,
            "RIGHT JOIN": 3,
            "ON": 2,
            "WHERE": 2,
            "GROUP BY": 3,
            "HAVING": 3,
            "ORDER BY": 2,
            "DISTINCT": 2,
            "LIMIT": 1,
        },
    ),
    Bucket("modification", "data modification", {"INSERT": 2, "UPDATE": 3, "DELETE": 4}),
    Bucket(
        "conditional",
        "conditional logic",
        {
            "AND": 1,
            "OR": 1,
            "NOT": 1,
            "IN": 2,
            "BETWEEN": 2,
            "LIKE": 2,
            "CASE": 3,
            "WHEN": 2,
            "THEN": 2,
            "ELSE": 2,
            "END": 1,
        },
    ),
    Bucket(
        "aggregation",
        "aggregation and sorting",
        {"AVG": 3, "SUM": 3, "COUNT": 3, "MIN": 3, "MAX": 3, "ASC": 1, "DESC": 1},
    ),
)

BUCKET_OF: Mapping[str, str] = {k: b.name for b in BUCKETS for k in b.scores}
"""The bucket name of each keyword."""

SCORE: Mapping[str, int] = {k: s for b in BUCKETS for k, s in b.scores.items()}
"""The score of each keyword."""

_SIMPLE: Mapping[type[exp.Expr], str] = {
    exp.Select: "SELECT",
    exp.From: "FROM",
    exp.Where: "WHERE",
    exp.Group: "GROUP BY",
    exp.Having: "HAVING",
    exp.Order: "ORDER BY",
    exp.Distinct: "DISTINCT",
    exp.Limit: "LIMIT",
    exp.And: "AND",
    exp.Or: "OR",
    exp.Not: "NOT",
    exp.In: "IN",
    exp.Between: "BETWEEN",
    exp.Like: "LIKE",
    exp.ILike: "LIKE",
    exp.Avg: "AVG",
    exp.Sum: "SUM",
    exp.Count: "COUNT",
    exp.Min: "MIN",
    exp.Max: "MAX",
    exp.Insert: "INSERT",
    exp.Update: "UPDATE",
    exp.Delete: "DELETE",
}
_NEGATABLE = (exp.Like, exp.ILike, exp.Is)
_JOIN_KINDS = {"INNER": "INNER JOIN", "LEFT": "LEFT JOIN", "RIGHT": "RIGHT JOIN"}


@dataclass(frozen=True)
class BucketReward:
    """One bucket's part of a reward: keyword occurrences, f(B_i, S) and c(B_i)."""

    name: str
    count: int
    frequency: float
    share: float

    @property
    def contribution(self) -> float:
        """f(B_i, S) * c(B_i): this bucket's term of the reward."""
        return self.frequency * self.share


@dataclass(frozen=True)
class Reward:
    """R(S) with its per-bucket breakdown and keyword counts; `error` says why an unparseable
    query scored 0."""

    total: float
    buckets: tuple[BucketReward, ...]
    keywords: tuple[tuple[str, int], ...] = ()
    error: str | None = None

    def bucket(self, name: str) -> BucketReward:
        for bucket in self.buckets:
            if bucket.name == name:
                return bucket
        raise KeyError(f"no bucket {name!r}; buckets are {[b.name for b in BUCKETS]}")

    def count(self, keyword: str) -> int:
        """Occurrences of `keyword` ("GROUP BY", "COUNT", ...)."""
        return dict(self.keywords).get(keyword.upper(), 0)

    @property
    def counts(self) -> Counter[str]:
        return Counter(dict(self.keywords))

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready view: total, per-bucket count/frequency/share, keywords, error."""
        return {
            "total": self.total,
            "buckets": {
                b.name: {"count": b.count, "frequency": b.frequency, "share": b.share}
                for b in self.buckets
            },
            "keywords": dict(self.keywords),
            "error": self.error,
        }


def reward(sql: str, dialect: str = "sqlite") -> Reward:
    """The reward of `sql` (every statement in it). Unparseable SQL scores 0 with `error` set;
    an unknown `dialect` raises ValueError. Recent results are memoized (a `Reward` is
    immutable): the loop, the feedback and the build report score the same SQL."""
    Dialect.get_or_raise(dialect)
    return _reward(sql, dialect)


@lru_cache(maxsize=8192)
def _reward(sql: str, dialect: str) -> Reward:
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except Exception as exc:  # sqlglot raises more than SqlglotError on hostile input
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        log.debug("reward: cannot parse %r: %s", sql[:200], message)
        return reward_of_counts(Counter(), error=f"cannot parse SQL: {message}")
    counts: Counter[str] = Counter()
    for statement in statements:
        counts.update(keyword_counts(statement))
    return reward_of_counts(counts)


def reward_of_tree(tree: exp.Expr) -> Reward:
    """The reward of an already parsed (or built) statement."""
    return reward_of_counts(keyword_counts(tree))


def keyword_counts(tree: exp.Expr) -> Counter[str]:
    """Occurrences of each scored keyword in `tree` (see the module docstring)."""
    counts: Counter[str] = Counter()
    for node in tree.walk():
        counts.update(_node_keywords(node))
    return counts


def _node_keywords(node: exp.Expr) -> list[str]:
    keywords = []
    simple = _SIMPLE.get(type(node))
    if simple is not None:
        keywords.append(simple)
    if isinstance(node, _NEGATABLE) and node.args.get("negate"):
        keywords.append("NOT")
    elif isinstance(node, exp.Join):
        keywords.extend(_join_keywords(node))
    elif isinstance(node, exp.Case):
        keywords.extend(_case_keywords(node))
    elif isinstance(node, exp.Ordered):
        desc = node.args.get("desc")
        if desc:
            keywords.append("DESC")
        elif desc is False:
            keywords.append("ASC")
    return keywords


def _join_keywords(join: exp.Join) -> list[str]:
    keywords = ["JOIN"]
    for part in (join.side, join.kind):
        if part.upper() in _JOIN_KINDS:
            keywords.append(_JOIN_KINDS[part.upper()])
            break
    if join.args.get("on") is not None:
        keywords.append("ON")
    return keywords


def _case_keywords(case: exp.Case) -> list[str]:
    branches = len(case.args.get("ifs") or [])
    keywords = ["CASE", "END"] + ["WHEN", "THEN"] * branches
    if case.args.get("default") is not None:
        keywords.append("ELSE")
    return keywords


def reward_of_counts(counts: Mapping[str, int], *, error: str | None = None) -> Reward:
    """R(S) from keyword occurrences (unknown keywords are ignored): eq. 1-2 of the paper."""
    known = {k: n for k, n in counts.items() if k in SCORE and n > 0}
    occurrences = sum(known.values())
    buckets = []
    for bucket in BUCKETS:
        count = sum(n for k, n in known.items() if k in bucket.scores)
        frequency = float(sum(bucket.scores[k] * n for k, n in known.items() if k in bucket.scores))
        share = count / occurrences if occurrences else 0.0
        buckets.append(BucketReward(bucket.name, count, frequency, share))
    total = sum(b.contribution for b in buckets)
    return Reward(total, tuple(buckets), tuple(sorted(known.items())), error)


def marginal_gain(current: Reward, added: Mapping[str, int] | Iterable[str]) -> float:
    """How much the reward would change if the keywords `added` (a count mapping or a list)
    were added to the query `current` scored."""
    extra = Counter(added) if not isinstance(added, Mapping) else Counter(dict(added))
    return reward_of_counts(current.counts + extra).total - current.total
