"""Telling twin databases apart at query time (see `schemagraph.twins` for what twins are).

When the best database has twins among the ranked ones, the question is checked for what only
one of them has: a table or column name (`customers.vip`), a sampled cell value (`Germany` only in
`shop_eu`), or a word of its id that the others lack (`eu`). If exactly one twin is named that
way, it goes first and the result says why; if none is (or several are), the order stays, the
result says that nothing tells them apart, and the confidence is divided by the number of twins
ranked, rather than flipping a silent coin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retriever.tables import TableEntry
from retriever.text import normalize_value, stem, words
from schemagraph.model import fold
from schemagraph.twins import find_twins_by_names

MAX_GRAM = 4


@dataclass(frozen=True)
class TwinNote:
    """The best database's twins among the ranked ones (itself first) and what in the question
    told it apart from them (None: nothing did)."""

    members: tuple[str, ...]
    told_apart_by: str | None

    def as_dict(self) -> dict[str, object]:
        return {"members": list(self.members), "told_apart_by": self.told_apart_by}


@dataclass(frozen=True)
class _Marks:
    """What only one twin has: name words (stemmed), values (normalized), id words."""

    names: Mapping[str, str]
    values: frozenset[str]
    id_words: frozenset[str]


def _words(name: tuple[str, str]) -> list[str]:
    return [*words(name[0]), *words(name[1])]


class TwinSeparator:
    """The twin groups of a retriever's databases and what tells each member apart."""

    def __init__(self, entries: Sequence[TableEntry]) -> None:
        names: dict[str, set[tuple[str, str]]] = {}
        values: dict[str, set[str]] = {}
        for entry in entries:
            db = fold(entry.db_id)
            names.setdefault(db, set()).update((fold(entry.table), fold(c)) for c in entry.columns)
            values.setdefault(db, set()).update(
                normalize_value(v) for vals in entry.values.values() for v in vals
            )
        groups = find_twins_by_names({db: frozenset(n) for db, n in names.items()})
        self.groups = groups
        self._group_of: dict[str, tuple[str, ...]] = {}
        self._marks: dict[str, _Marks] = {}
        for group in groups:
            for member in group.members:
                self._group_of[member] = group.members
                others = [m for m in group.members if m != member]
                shared_values = set().union(*(values[o] for o in others))
                shared_id_words = {w for o in others for w in words(o)}
                shared_words = {stem(w) for o in others for pair in names[o] for w in _words(pair)}
                own = {
                    stem(w): name
                    for name in group.only[member]
                    for w in words(name.rsplit(".", 1)[-1])
                }
                self._marks[member] = _Marks(
                    names={w: name for w, name in own.items() if w not in shared_words},
                    values=frozenset(v for v in values[member] - shared_values if v),
                    id_words=frozenset(set(words(member)) - shared_id_words),
                )

    def separate(self, question: str, ranked: Sequence[str]) -> tuple[list[int], TwinNote | None]:
        """The new order of `ranked` (database ids, best first) as positions, and the note on
        the best one's twins (None when it has no twin among them)."""
        order = list(range(len(ranked)))
        group = self._group_of.get(fold(ranked[0])) if ranked else None
        if group is None:
            return order, None
        twins = [i for i, db in enumerate(ranked) if fold(db) in group]
        if len(twins) < 2:
            return order, None
        tokens = words(question)
        stems = {stem(t) for t in tokens}
        grams = {
            " ".join(tokens[i : i + n]) for n in range(1, MAX_GRAM + 1) for i in range(len(tokens))
        }
        named = {i: self._named_by(fold(ranked[i]), stems, grams) for i in twins}
        chosen = [i for i, reason in named.items() if reason is not None]
        members = tuple(ranked[i] for i in twins)
        if len(chosen) != 1:
            return order, TwinNote(members, None)
        best = chosen[0]
        order.remove(best)
        order.insert(twins[0], best)
        members = (ranked[best], *(ranked[i] for i in twins if i != best))
        return order, TwinNote(members, named[best])

    def _named_by(self, db: str, stems: set[str], grams: set[str]) -> str | None:
        marks = self._marks[db]
        for word, name in marks.names.items():
            if word in stems:
                return f"only it has {name}"
        for value in marks.values:
            if value in grams:
                return f"only it holds the value {value!r}"
        for word in marks.id_words:
            if word in stems:
                return f"its name has {word!r}"
        return None
