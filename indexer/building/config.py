"""How to build (`BuildConfig`) and with what (`BuildServices`); the collections' layout is
`store.layout.CollectionLayout`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from indexer.errors import BuildError
from indexer.synthesis.pairs import ChainRunner
from providers import Embedder
from schemagraph import TraversalConfig
from store.layout import CollectionLayout


@dataclass(frozen=True)
class BuildConfig:
    """How to build. `chains`: ICRL chains (final questions) per traversal; `iterations`: ICRL
    iterations after the initial attempt; `concurrency`: traversals synthesized at once by
    threads of one process (language-model calls wait on the model); `processes`: processes
    forked for offline synthesis (`BuildServices.offline`; `auto_processes` suggests how
    many), 0 to synthesize in the build's own threads; `batch_traversals`: most traversals per
    journal commit (and at most a tenth of the build's, so that progress moves every 10 %);
    `layout`: the collections' layout on a Qdrant server."""

    traversal: TraversalConfig = field(default_factory=TraversalConfig)
    chains: int = 3
    iterations: int = 2
    seed: int = 0
    full: bool = False
    concurrency: int = 4
    processes: int = 0
    batch_traversals: int = 64
    keep_builds: int = 2
    execute_sql: bool = True
    layout: CollectionLayout = field(default_factory=CollectionLayout)
    #: give warehouse traversals routing keys (`indexer.building.synthesize`; off by default:
    #: the decision log of docs/BENCHMARKS.md has what they do to routing)
    routing_keys: bool = False

    def __post_init__(self) -> None:
        if self.processes < 0:
            raise BuildError(f"processes must be >= 0, got {self.processes}")
        for name in ("chains", "concurrency", "batch_traversals", "keep_builds"):
            if getattr(self, name) < 1:
                raise BuildError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.iterations < 0:
            raise BuildError(f"iterations must be >= 0, got {self.iterations}")


@dataclass
class BuildServices:
    """The explicit dependencies of a build."""

    synthesize: ChainRunner
    synthesizer_name: str
    embedder: Embedder
    #: called as (stage, done, total) while a build runs: "synthesize" counts traversals,
    #: "load" question records written to the store, "tables" table documents embedded and written
    progress: Callable[[str, int, int], None] | None = None
    #: hears a line for the person running the build, when there is news before the first
    #: progress (a resumed build: "resumed build X: N of M traversals already done")
    notify: Callable[[str], None] | None = None
    #: returns {"provider_calls": n, "cache_hits": n, "usage": {...}} for the report
    usage: Callable[[], dict[str, Any]] | None = None
    #: `synthesize` calls no language model or API (template synthesis, rule feedback): it is
    #: CPU-bound and safe to fork, so it may run in forked processes (`BuildConfig.processes`)
    offline: bool = False
