"""Telling twin databases apart at query time (see `schemagraph.twins` for what twins are).

When the best database has twins among the ranked ones, the question is checked for what only
one of them has: a table or column name (`customers.vip`), a sampled cell value (`Germany` only in
`shop_eu`), or a word of its id that the others lack (`eu`). If exactly one twin is named that
way, it goes first and the result says why; if none is (or several are), the order stays, the
result says that nothing tells them apart, and the confidence is divided by the number of twins
ranked, rather than flipping a silent coin.

Mirrors and extended copies (`schemagraph.containment`) are grouped: the ranked databases that
are related to the best one (its twins, databases that contain it or that it contains, or that
contain what it contains) and hold every table chosen in it (by key, modulo engine conventions)
move up to follow it, and the result says that the question is also answerable there and which
tables each adds. The best database stays first and the scores stay as fused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retriever.tables import TableEntry
from retriever.text import normalize_value, stem, words
from schemagraph.containment import (
    ContainmentGroup,
    EstateRelations,
    relations_of,
    schema_of,
    table_key,
)
from schemagraph.model import fold
from schemagraph.twins import TwinGroup
from store.manifest import Manifest

MAX_GRAM = 4
#: the tables an `AlsoIn` names (how many it adds is counted in full)
ADDS_SHOWN = 10


@dataclass(frozen=True)
class TwinNote:
    """The best database's twins among the ranked ones (itself first) and what in the question
    told it apart from them (None: nothing did)."""

    members: tuple[str, ...]
    told_apart_by: str | None

    def as_dict(self) -> dict[str, object]:
        return {"members": list(self.members), "told_apart_by": self.told_apart_by}


@dataclass(frozen=True)
class AlsoIn:
    """A ranked database that also holds every table chosen in the best one: `adds`, the first
    ADDS_SHOWN of its tables (by key) that the best one lacks, `adds_count` all of them."""

    db_id: str
    adds: tuple[str, ...]
    adds_count: int

    def as_dict(self) -> dict[str, object]:
        return {"db_id": self.db_id, "adds": list(self.adds), "adds_count": self.adds_count}

    def describe(self) -> str:
        """`also answerable in X, which adds tables A, B` (or `which adds no table`)."""
        if not self.adds_count:
            return f"also answerable in {self.db_id}, which adds no table"
        more = self.adds_count - len(self.adds)
        names = ", ".join(self.adds) + (f" and {more} more" if more else "")
        return f"also answerable in {self.db_id}, which adds tables {names}"


@dataclass(frozen=True)
class _Marks:
    """What only one twin has: name words (stemmed), values (normalized), id words."""

    names: Mapping[str, str]
    values: frozenset[str]
    id_words: frozenset[str]


def _words(name: tuple[str, str]) -> list[str]:
    return [*words(name[0]), *words(name[1])]


def relations_in(manifest: Manifest) -> EstateRelations | None:
    """The twins and containment a build recorded, by folded database ids, as `relations_of`
    finds them over the same tables (the build's catalog is what its table documents say); None
    for a build written before it recorded `related`."""
    if "related" in manifest.absent:
        return None
    twins = [
        TwinGroup(
            tuple(fold(m) for m in group.members),
            group.identical,
            group.similarity,
            {fold(m): names for m, names in group.only.items()},
        )
        for group in manifest.twins
    ]
    containment = [
        ContainmentGroup(
            fold(group.base),
            tuple(fold(c) for c in group.copies),
            {fold(c): names for c, names in group.adds.items()},
        )
        for group in manifest.containment
    ]
    related = {db: frozenset(others) for db, others in manifest.related.items()}
    return EstateRelations(twins, containment, related)


class TwinSeparator:
    """The twin groups of a retriever's databases and what tells each member apart."""

    def __init__(
        self, entries: Sequence[TableEntry], relations: EstateRelations | None = None
    ) -> None:
        """`relations`: the estate's twins and containment as its build found them
        (`relations_in`), over the same tables; None: found here."""
        tables: dict[str, list[tuple[str, Sequence[str]]]] = {}
        values: dict[str, set[str]] = {}
        #: each table's key by (folded database id, folded table id)
        self._keys: dict[tuple[str, str], str] = {}
        for entry in entries:
            db = fold(entry.db_id)
            tables.setdefault(db, []).append((entry.word_name, entry.columns))
            self._keys[(db, fold(entry.table))] = table_key(entry.word_name)
            values.setdefault(db, set()).update(
                normalize_value(v) for vals in entry.values.values() for v in vals
            )
        #: each database's tables by key (`schemagraph.containment.table_key`)
        self.schemas = {db: schema_of(pairs) for db, pairs in tables.items()}
        #: twins and containment, by folded database ids
        self.relations: EstateRelations = (
            relations_of(self.schemas) if relations is None else relations
        )
        groups = self.relations.twins
        self.groups = groups
        self._group_of: dict[str, tuple[str, ...]] = {}
        self._marks: dict[str, _Marks] = {}
        for group in groups:
            # each member's name words, stemmed, once (not once per other member)
            stems = {
                member: {stem(w) for pair in self._names(member) for w in _words(pair)}
                for member in group.members
            }
            for member in group.members:
                self._group_of[member] = group.members
                others = [m for m in group.members if m != member]
                shared_values = set().union(*(values[o] for o in others))
                shared_id_words = {w for o in others for w in words(o)}
                shared_words = set().union(*(stems[o] for o in others))
                own = {
                    stem(w): name
                    for name in group.only.get(member, ())
                    for w in words(name.rsplit(".", 1)[-1])
                }
                self._marks[member] = _Marks(
                    names={w: name for w, name in own.items() if w not in shared_words},
                    values=frozenset(v for v in values[member] - shared_values if v),
                    id_words=frozenset(set(words(member)) - shared_id_words),
                )

    def _names(self, db: str) -> set[tuple[str, str]]:
        """`db`'s (table key, column) names."""
        return {(key, c) for key, columns in self.schemas[db].items() for c in columns}

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

    def group(
        self, ranked: Sequence[str], chosen: Sequence[str]
    ) -> tuple[list[int], tuple[AlsoIn, ...]]:
        """The new order of `ranked` (database ids, best first) as positions, with the
        databases related to the best one that hold all of `chosen` (its chosen tables) moved
        up to follow it, and what each adds."""
        order = list(range(len(ranked)))
        if len(ranked) < 2 or not chosen:
            return order, ()
        best = fold(ranked[0])
        related = self.relations.related.get(best)
        if not related:
            return order, ()
        keys = {self._keys.get((best, fold(t)), table_key(t)) for t in chosen}
        holders = [
            i
            for i in order[1:]
            if fold(ranked[i]) in related and keys <= self.schemas.get(fold(ranked[i]), {}).keys()
        ]
        if not holders:
            return order, ()
        own = self.schemas[best].keys()
        notes = []
        for i in holders:
            adds = sorted(self.schemas[fold(ranked[i])].keys() - own)
            notes.append(AlsoIn(ranked[i], tuple(adds[:ADDS_SHOWN]), len(adds)))
        moved = set(holders)
        return [0, *holders, *(i for i in order[1:] if i not in moved)], tuple(notes)
