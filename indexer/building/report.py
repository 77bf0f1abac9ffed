"""The build report: what a build did, as text for people and JSON for scripts.

The JSON's top-level keys `databases`, `tables`, `traversals`, `questions`, `synthesized`,
`removed`, `dropped`, `reward_mean_initial`, `reward_mean_final`, `provider_calls`,
`cache_hits` and `seconds` are a stable contract; others may be added.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from schemagraph import Catalog, counted


@dataclass
class BuildReport:
    build_id: str
    databases: int
    tables: int
    traversals: int
    questions: int
    synthesized: int = 0
    removed: int = 0
    dropped: int = 0
    #: of `dropped`: pairs whose question does not say what their SQL does
    #: (`indexer.synthesis.faithful`), and attempts the chains passed over for it (they kept an
    #: earlier attempt that does)
    dropped_unsaid: int = 0
    attempts_unsaid: int = 0
    repaired: int = 0
    #: of the kept questions: how many the readability check read, and how many it failed,
    #: by kind (`indexer.synthesis.readability`)
    readability_checked: int = 0
    unreadable: int = 0
    unreadable_kinds: dict[str, int] = field(default_factory=dict)
    #: of the questions in the index: routing keys (`store.records.ROUTING`), never shown
    routing_keys: int = 0
    traversals_synthesized: int = 0
    traversals_removed: int = 0
    traversals_reused: int = 0
    """Traversals whose records were carried over from the previous build, or, in a resumed
    build, journaled by its interrupted run: not synthesized by this run."""
    #: a build that resumed an interrupted one, and how many of its traversals (counted in
    #: `traversals_reused`) the interrupted run had journaled
    resumed: bool = False
    traversals_resumed: int = 0
    failed_traversals: int = 0
    reward_mean_initial: float = 0.0
    reward_mean_final: float = 0.0
    reward_by_bucket_initial: dict[str, float] = field(default_factory=dict)
    reward_by_bucket_final: dict[str, float] = field(default_factory=dict)
    #: per ICRL iteration (0 = initial): attempts made, the share of them that were valid SQL,
    #: their mean reward, and the mean reward of the pairs kept after it (over all chains)
    reward_by_iteration: list[dict[str, float]] = field(default_factory=list)
    operators: dict[str, int] = field(default_factory=dict)
    drop_reasons: dict[str, int] = field(default_factory=dict)
    provider_calls: int = 0
    cache_hits: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    up_to_date: bool = False
    #: users' examples in the build, added by it, left out by it because a table changed (id,
    #: where, reason), and left out in all (stale since an earlier build too)
    user_examples: int = 0
    user_examples_added: int = 0
    user_examples_dropped: list[dict[str, str]] = field(default_factory=list)
    user_examples_stale: int = 0

    @staticmethod
    def up_to_date_of(
        build_id: str, previous: dict[str, Any], catalog: Catalog, traversals: int, seconds: float
    ) -> BuildReport:
        """The report of a build with nothing to do: the served `build_id`, whose report was
        `previous`."""
        return BuildReport(
            build_id=build_id,
            databases=len(catalog),
            tables=catalog.table_count,
            traversals=traversals,
            questions=int(previous.get("questions", 0)),
            traversals_reused=traversals,
            seconds=round(seconds, 3),
            up_to_date=True,
        )

    @staticmethod
    def from_stats(
        *,
        build_id: str,
        catalog: Catalog,
        traversals: int,
        synthesized_traversals: int,
        removed_traversals: int,
        reused_traversals: int,
        removed_records: int,
        questions: int,
        stats: Iterable[dict[str, Any]],
        timings: dict[str, float],
        seconds: float,
    ) -> BuildReport:
        totals: dict[str, Any] = {}
        for part in stats:
            for name, value in part.items():
                if isinstance(value, dict):
                    bucket = totals.setdefault(name, {})
                    for k, v in value.items():
                        bucket[k] = bucket.get(k, 0) + v
                else:
                    totals[name] = totals.get(name, 0) + value
        chains = max(int(totals.get("chains", 0)), 1)
        return BuildReport(
            build_id=build_id,
            databases=len(catalog),
            tables=catalog.table_count,
            traversals=traversals,
            questions=questions,
            synthesized=int(totals.get("synthesized", 0)),
            removed=removed_records,
            dropped=int(totals.get("dropped", 0)),
            dropped_unsaid=int(totals.get("dropped_unsaid", 0)),
            attempts_unsaid=int(totals.get("attempts_unsaid", 0)),
            repaired=int(totals.get("repaired", 0)),
            readability_checked=int(totals.get("readability_checked", 0)),
            unreadable=int(totals.get("unreadable", 0)),
            unreadable_kinds=dict(totals.get("unreadable_kinds", {})),
            routing_keys=int(totals.get("routing_keys", 0)),
            traversals_synthesized=synthesized_traversals,
            traversals_removed=removed_traversals,
            traversals_reused=reused_traversals,
            reward_mean_initial=round(totals.get("reward_initial", 0.0) / chains, 3),
            reward_mean_final=round(totals.get("reward_final", 0.0) / chains, 3),
            reward_by_bucket_initial={
                k: round(v / chains, 3)
                for k, v in sorted(totals.get("buckets_initial", {}).items())
            },
            reward_by_bucket_final={
                k: round(v / chains, 3) for k, v in sorted(totals.get("buckets_final", {}).items())
            },
            reward_by_iteration=_by_iteration(totals, chains),
            operators=dict(sorted(totals.get("operators", {}).items(), key=lambda kv: -kv[1])),
            drop_reasons=dict(totals.get("drop_reasons", {})),
            timings={k: round(v, 3) for k, v in timings.items()},
            seconds=round(seconds, 3),
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        if self.up_to_date:
            return [
                f"index up to date (build {self.build_id}): "
                f"{counted(self.databases, 'database')}, {counted(self.tables, 'table')}, "
                f"{counted(self.traversals, 'traversal')}, {counted(self.questions, 'question')}",
                f"provider calls {self.provider_calls}, cache hits {self.cache_hits}, "
                f"{self.seconds:.1f} s",
                *self._example_lines(),
            ]
        out = [
            f"build {self.build_id}"
            + (
                f" (resumed: {self.traversals_resumed} of "
                f"{self.traversals_resumed + self.traversals_synthesized} traversals to "
                "synthesize were done before it stopped)"
                if self.resumed
                else ""
            ),
            f"  databases {self.databases}, tables {self.tables}, traversals {self.traversals} "
            f"({self.traversals_reused} reused, {self.traversals_synthesized} synthesized, "
            f"{self.traversals_removed} removed)",
            f"  questions in index {self.questions}; pairs synthesized {self.synthesized}, "
            f"dropped {self.dropped}, repaired {self.repaired}, records removed {self.removed}",
            f"  {counted(self.dropped_unsaid, 'pair')} dropped: question does not say what the "
            f"SQL does ({counted(self.attempts_unsaid, 'attempt')} passed over for it)",
            f"  reward mean: initial {self.reward_mean_initial:.2f} -> final "
            f"{self.reward_mean_final:.2f}",
        ]
        if self.routing_keys:
            out.append(
                f"  routing keys: {self.routing_keys} of the questions (warehouse pairs written as "
                "for SQLite: they vote, and are never shown)"
            )
        if self.readability_checked:
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.unreadable_kinds.items()))
            out.append(
                f"  readability: {self.unreadable} of {self.readability_checked} kept questions "
                f"({100 * self.unreadable / self.readability_checked:.1f} %) fail"
                + (f" ({kinds})" if kinds else "")
            )
        if self.reward_by_bucket_final:
            buckets = ", ".join(
                f"{k} {self.reward_by_bucket_initial.get(k, 0):.2f}->{v:.2f}"
                for k, v in self.reward_by_bucket_final.items()
            )
            out.append(f"  reward by bucket: {buckets}")
        if len(self.reward_by_iteration) > 1:
            steps = ", ".join(
                f"{int(it['iteration'])}: {it['kept_reward_mean']:.2f} "
                f"({int(it['attempts'])} attempts, {100 * it['valid_share']:.0f} % valid)"
                for it in self.reward_by_iteration
            )
            out.append(f"  reward kept after each iteration: {steps}")
        if self.operators:
            top = ", ".join(f"{k} {v}" for k, v in list(self.operators.items())[:12])
            out.append(f"  operators in final SQL: {top}")
        if self.drop_reasons:
            out.append(
                "  dropped because: "
                + ", ".join(f"{k} {v}" for k, v in sorted(self.drop_reasons.items()))
            )
        out.extend(f"  {line}" for line in self._example_lines())
        out.append(f"  provider calls {self.provider_calls}, cache hits {self.cache_hits}")
        if self.failed_traversals:
            out.append(
                f"  {self.failed_traversals} traversals failed to synthesize (see the log); "
                "the next build retries them"
            )
        total = self.usage.get("total", {})
        if total.get("calls"):
            out.append(
                f"  LLM calls {total['calls']} ({total.get('cached_calls', 0)} cached), tokens in "
                f"{total.get('input_tokens', 0)} out {total.get('output_tokens', 0)}, "
                f"est. cost ${total.get('cost_usd', 0.0):.4f}"
            )
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in self.timings.items())
        out.append(f"  time {self.seconds:.1f} s ({stages})")
        return out

    def _example_lines(self) -> list[str]:
        if not (self.user_examples or self.user_examples_stale):
            return []
        out = [
            f"users' examples {self.user_examples} ({self.user_examples_added} added)"
            + (
                f", {self.user_examples_stale} left out because a table changed"
                if self.user_examples_stale
                else ""
            )
        ]
        out += [
            f"  left out {d['id']} ({d['where']}): {d['reason']}"
            for d in self.user_examples_dropped
        ]
        if self.user_examples_dropped:
            out.append(
                "  (add their files again to validate them against the changed tables, or "
                "remove them with `schemarag index remove-examples`)"
            )
        return out


def _by_iteration(totals: dict[str, Any], chains: int) -> list[dict[str, float]]:
    attempts = totals.get("iter_attempts", {})
    rows = []
    for key in sorted(totals.get("iter_kept_reward", {}), key=int):
        made = attempts.get(key, 0)
        rows.append(
            {
                "iteration": int(key),
                "attempts": made,
                "valid_share": round(totals["iter_valid"].get(key, 0) / made, 3) if made else 0.0,
                "reward_mean": round(totals["iter_reward"].get(key, 0.0) / made, 3)
                if made
                else 0.0,
                "kept_reward_mean": round(totals["iter_kept_reward"][key] / chains, 3),
            }
        )
    return rows
