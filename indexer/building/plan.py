"""What a build does, decided before it does anything: a `BuildPlan` from the catalog and the
served build's manifest.

Every traversal has a key: its table set, the fingerprints of its tables and the synthesis
settings (`synthesis_signature`). Traversals whose key the served build lacks are synthesized;
records whose key vanished are removed; everything else is carried over. Users' examples are
planned alike (`indexer.examples.records`): each stored example whose tables still have the
fingerprints it was validated against has a record key; new keys are embedded (never
synthesized), vanished ones removed. The table documents of a database whose schema did not
change are carried over; all are rewritten when the sampling seed or what a document says
(`DOCUMENT_VERSION`) changed.

`plan_build` reads nothing and writes nothing: the same catalog, manifest and settings give
the same plan (and the same `plan_id`, by which an interrupted build is resumed).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from indexer.examples.records import Dropped, ExamplePlan, plan_examples
from indexer.examples.stored import StoredExample
from indexer.synthesis.warehouse_roles import is_warehouse
from schemagraph import Catalog, Database, Traversal, database_fingerprint, table_fingerprint
from schemagraph.containment import EstateRelations
from schemagraph.model import fold
from store.manifest import Manifest
from store.records import ROUTING
from store.table_documents import DOCUMENT_VERSION

#: what a synthetic pair is: raised when the templates' wording or the checks a pair must pass
#: (`indexer.validate`, `indexer.synthesis.faithful`) change, so that the next build
#: synthesizes every traversal again instead of keeping pairs the new code would not write
#: (3: a warehouse table named with its dataset, and its questions embedded with its words)
PAIRS_VERSION = 3


def synthesis_signature(
    synthesizer: str,
    embedder: str,
    chains: int,
    iterations: int,
    seed: int,
    traversal: Mapping[str, Any],
) -> str:
    """The synthesis settings every traversal key includes: a change re-synthesizes all."""
    return json.dumps(
        [PAIRS_VERSION, synthesizer, embedder, chains, iterations, seed, dict(traversal)],
        sort_keys=True,
    )


def traversal_key(db: Database, traversal: Traversal, signature: str, routed: bool = False) -> str:
    """A traversal's records' key: its id, the synthesis settings and its tables' fingerprints;
    with `routed`, also that its pairs come with routing keys (`store.records.ROUTING`), so
    that a build that wrote none synthesizes them again."""
    prints = sorted(table_fingerprint(db.table(t)) for t in traversal.tables)
    parts = [traversal.id, signature, *prints]
    if routed:
        parts.append(ROUTING)
    text = "\x1f".join(parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def routing_databases(catalog: Catalog, relations: Callable[[], EstateRelations]) -> frozenset[str]:
    """The databases whose traversals get routing keys (`indexer.building.synthesize`): the
    warehouses, a twin group's only in its first member by id (a mirror's keys would repeat
    its twin's and split their votes; which twin answers is the twin separator's to say).
    `relations`: the catalog's (`schemagraph.containment.find_relations`), asked for only on
    an estate with a warehouse."""
    warehouses = [db for db in catalog if is_warehouse(db)]
    if not warehouses:
        return frozenset()
    twins = relations().twins
    later = {m for group in twins for m in sorted(group.members, key=fold)[1:]}
    return frozenset(db.id for db in warehouses if db.id not in later)


def table_signature(seed: int) -> dict[str, int]:
    """What the table documents are written with: the sampling seed and `DOCUMENT_VERSION`."""
    return {"seed": seed, "version": DOCUMENT_VERSION}


@dataclass(frozen=True)
class BuildPlan:
    """`traversals`: every traversal of the catalog by key; `base`: the served build this one
    starts from (None: from nothing); `synthesize`: traversal keys to synthesize; `examples`:
    the stored users' examples the catalog keeps, by record key; `embed_examples`: those to
    embed and add; `remove`: record keys (traversals' and examples') to delete from the base;
    `rewrite_documents`: databases whose table documents are written again (or removed, when
    gone); None: all of them, nothing carried over; `served_keys` and `served_examples`: what
    the base holds; `dropped_examples`: examples in the served build that this one leaves out
    (a table changed)."""

    traversals: Mapping[str, Traversal]
    base: str | None
    synthesize: tuple[str, ...]
    examples: ExamplePlan
    embed_examples: tuple[str, ...]
    remove: tuple[str, ...]
    rewrite_documents: frozenset[str] | None
    served_keys: frozenset[str]
    served_examples: Mapping[str, str]
    dropped_examples: tuple[Dropped, ...]
    #: the databases whose traversals get routing keys (`routing_databases`)
    routed: frozenset[str] = frozenset()

    @property
    def reused(self) -> int:
        """Traversals whose records are carried over from the base."""
        return len(self.traversals) - len(self.synthesize)

    @property
    def up_to_date(self) -> bool:
        """The served build already is this build: nothing to synthesize, embed or remove, and
        its table documents are current."""
        return (
            self.base is not None
            and not self.synthesize
            and not self.remove
            and not self.embed_examples
            and self.rewrite_documents is not None
        )

    @property
    def plan_id(self) -> str:
        """Eight hex digits naming the work: an interrupted build with the same id is resumed."""
        planned: list[Any] = [self.base, list(self.synthesize), list(self.remove)]
        if self.embed_examples:
            planned.append(list(self.embed_examples))
        return hashlib.sha256(json.dumps(planned).encode()).hexdigest()[:8]

    def published_traversals(self, finished: Iterable[str]) -> list[str]:
        """The traversal keys the build holds once `finished` (journaled) are done: those
        reused and those synthesized (a failed one is left out, so the next build retries)."""
        done, synthesized = set(finished), set(self.synthesize)
        return sorted(k for k in self.traversals if k not in synthesized or k in done)

    def published_examples(self, finished: Iterable[str]) -> dict[str, str]:
        """Example id -> record key of the users' examples the build holds."""
        done = set(finished)
        held = set(self.served_examples.values()) if self.base else set()
        return {e.id: k for k, e in self.examples.keyed.items() if k in held or k in done}


def plan_build(
    catalog: Catalog,
    traversals: Sequence[Traversal],
    signature: str,
    served: Manifest | None,
    stored_examples: Sequence[StoredExample],
    *,
    embedder: str,
    seed: int,
    full: bool = False,
    routed: frozenset[str] = frozenset(),
) -> BuildPlan:
    """The plan of a build of `catalog` (its families collapsed) whose traversals are
    `traversals`, against the `served` build's manifest (None: no build yet). `full`: start
    from nothing; `routed`: the databases whose traversals get routing keys."""
    keyed = {
        traversal_key(catalog.database(t.db_id), t, signature, t.db_id in routed): t
        for t in traversals
    }
    served_examples = dict(served.examples) if served else {}
    base = served.build_id if served is not None and not full else None
    prev_keys = set(served.traversal_keys) if base and served else set()
    prev_examples = served_examples if base else {}
    examples = plan_examples(catalog, stored_examples, embedder)
    prev_example_keys = set(prev_examples.values())
    rewrite: frozenset[str] | None = None
    if served is not None and base and served.table_documents == table_signature(seed):
        now = {db.id: database_fingerprint(db) for db in catalog}
        before = served.databases
        rewrite = frozenset(
            {d for d, fp in now.items() if before.get(d) != fp} | (before.keys() - now.keys())
        )
    gone = (prev_keys - keyed.keys()) | (prev_example_keys - examples.keyed.keys())
    return BuildPlan(
        traversals=keyed,
        base=base,
        synthesize=tuple(sorted(k for k in keyed if k not in prev_keys)),
        examples=examples,
        embed_examples=tuple(sorted(k for k in examples.keyed if k not in prev_example_keys)),
        remove=tuple(sorted(gone)),
        rewrite_documents=rewrite,
        served_keys=frozenset(prev_keys),
        served_examples=served_examples,
        dropped_examples=tuple(d for d in examples.dropped if d.id in served_examples),
        routed=routed,
    )
