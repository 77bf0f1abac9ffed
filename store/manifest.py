"""A build's manifest: `STORE/builds/<build_id>/manifest.json`, what the build holds.

The next build plans against it (`indexer.building.plan`), readers find the embedder and the
collections in it, `index status` reports from it. `Manifest.from_json` reads one as written
by any version (a key an older build did not write takes its default and stays out of
`to_json`, a key this version does not know is kept), and `to_json` gives the JSON object with
the keys in the order builds write them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from store.layout import CollectionLayout
from store.location import StoreLocation

FILE = "manifest.json"


@dataclass(frozen=True)
class Twins:
    """A twin group the build found (`schemagraph.twins.TwinGroup`): databases with the same
    tables; `only`: per member, the names it alone has."""

    members: tuple[str, ...]
    identical: bool = False
    similarity: float = 1.0
    only: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Twins:
        return Twins(
            members=tuple(data.get("members", ())),
            identical=bool(data.get("identical", False)),
            similarity=float(data.get("similarity", 1.0)),
            only={m: tuple(names) for m, names in (data.get("only") or {}).items()},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "members": list(self.members),
            "identical": self.identical,
            "similarity": self.similarity,
            "only": {m: list(names) for m, names in self.only.items()},
        }


@dataclass(frozen=True)
class Containment:
    """`base`'s tables are all held by each of `copies` (`schemagraph.containment`); `adds`:
    per copy, the tables it adds."""

    base: str
    copies: tuple[str, ...]
    adds: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Containment:
        return Containment(
            base=str(data.get("base", "")),
            copies=tuple(data.get("copies", ())),
            adds={c: tuple(names) for c, names in (data.get("adds") or {}).items()},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "copies": list(self.copies),
            "adds": {c: list(names) for c, names in self.adds.items()},
        }


@dataclass(frozen=True)
class Family:
    """A family of sharded tables the build indexed once, as its newest member `last`
    (`schemagraph.families.TableFamily`): `tables` members named by `pattern`, their suffixes
    from `range[0]` to `range[1]`."""

    database: str
    pattern: str
    kind: str
    tables: int
    range: tuple[str, str]
    first: str
    last: str

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Family:
        low, high = [*(data.get("range") or []), "", ""][:2]
        return Family(
            database=str(data.get("database", "")),
            pattern=str(data.get("pattern", "")),
            kind=str(data.get("kind", "")),
            tables=int(data.get("tables", 1)),
            range=(str(low), str(high)),
            first=str(data.get("first", "")),
            last=str(data.get("last", "")),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "pattern": self.pattern,
            "kind": self.kind,
            "tables": self.tables,
            "range": list(self.range),
            "first": self.first,
            "last": self.last,
        }


@dataclass(frozen=True)
class Manifest:
    build_id: str
    created_at: str
    #: the build this one started from (its records carried over), None for a build from nothing
    base: str | None
    embedder: str
    dim: int
    synthesizer: str
    #: physical collection of each kind ("questions", "tables")
    collections: dict[str, str]
    #: database id -> fingerprint, of the catalog the build indexed
    databases: dict[str, str]
    #: the sources the build's catalog was loaded from, each {"kind", "spec"} with its path
    #: absolute and never a password (`schemagraph.sources.remembered`), and the schemas a URL
    #: source was restricted to; `serve`, `mcp` and `ask` load them when given no `--source`
    sources: list[dict[str, Any]] = field(default_factory=list)
    #: database id -> the dialect its SQL is written in (`schemagraph.dialects.sql_dialect`);
    #: empty in a build written before it was recorded
    dialects: dict[str, str] = field(default_factory=dict)
    #: the databases the build's catalog could run queries on (a SQLite file or a server)
    runnable: list[str] = field(default_factory=list)
    #: the estate's twin groups, copies that contain others, and families of sharded tables
    twins: list[Twins] = field(default_factory=list)
    containment: list[Containment] = field(default_factory=list)
    #: folded database id -> the folded ids of the databases related to it: its twins, the
    #: copies that contain it or that it contains, mirrors included
    #: (`schemagraph.containment.EstateRelations.related`); absent from a build written before
    #: it was recorded (the retriever then finds the relations again)
    related: dict[str, list[str]] = field(default_factory=dict)
    families: list[Family] = field(default_factory=list)
    #: the traversals whose records the build holds (failed ones are left out, so the next
    #: build retries them)
    traversal_keys: list[str] = field(default_factory=list)
    #: users' examples in the build: example id -> record key (`indexer.examples.records`)
    examples: dict[str, str] = field(default_factory=dict)
    layout: CollectionLayout = field(default_factory=CollectionLayout)
    #: what the table documents were written with ({"seed", "version"}); None: unknown
    table_documents: dict[str, Any] | None = None
    #: the build's report (`BuildReport.as_dict`)
    report: dict[str, Any] = field(default_factory=dict)
    #: keys of the file that this version does not know, kept as read
    extra: dict[str, Any] = field(default_factory=dict)
    #: keys the file it was read from did not have (they are left out of `to_json`)
    absent: frozenset[str] = frozenset()

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Manifest:
        known = {f.name for f in _FIELDS}
        values: dict[str, Any] = {k: data[k] for k in known if k in data}
        if "layout" in values:
            values["layout"] = CollectionLayout(**(values["layout"] or {}))
        for name in ("collections", "databases", "dialects", "examples", "report", "related"):
            values[name] = dict(values.get(name) or {})
        for name, record in (("twins", Twins), ("containment", Containment), ("families", Family)):
            values[name] = [record.from_json(row) for row in values.get(name) or []]
        defaults = {"build_id": "", "created_at": "", "base": None, "embedder": "", "dim": 0}
        for name, default in {**defaults, "synthesizer": ""}.items():
            values.setdefault(name, default)
        return Manifest(
            **values,
            extra={k: v for k, v in data.items() if k not in known},
            absent=frozenset(known - data.keys()),
        )

    def embedder_spec(self) -> str:
        """The spec that rebuilds the embedder the build used (`minilm:all-MiniLM-L6-v2` →
        `minilm`; MiniLM for a manifest that names none)."""
        from providers import spec_of_embedder

        return spec_of_embedder(self.embedder or "minilm")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in _FIELDS:
            if f.name not in self.absent:
                value = getattr(self, f.name)
                if isinstance(value, CollectionLayout):
                    value = asdict(value)
                elif f.name in ("twins", "containment", "families"):
                    value = [row.to_json() for row in value]
                out[f.name] = value
        out.update(self.extra)
        return out

    def but(self, **changes: Any) -> Manifest:
        """This manifest with `changes` (fields the file lacked are written once changed)."""
        return dataclasses.replace(self, **changes, absent=self.absent - changes.keys())

    def write(self, folder: Path) -> None:
        """Write `folder/manifest.json` atomically (a reader sees the old file or the new)."""
        path = folder / FILE
        tmp = path.with_suffix(".tmp")
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=False)
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)


_FIELDS = [f for f in dataclasses.fields(Manifest) if f.name not in ("extra", "absent")]


def read_manifest(location: StoreLocation, build_id: str) -> Manifest:
    """The manifest of `build_id` (a `StoreError` naming the fix when it is missing or
    damaged)."""
    return Manifest.from_json(location.manifest(build_id))
