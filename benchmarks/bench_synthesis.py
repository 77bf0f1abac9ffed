"""Offline synthesis on a Spider-style catalog: speed of the template synthesizer, validity of
its SQL, and the ICRL reward before/after (rule feedback), per bucket.

    python benchmarks/bench_synthesis.py spider:../shared/data/spider --chains 3 --iterations 2
    python benchmarks/bench_synthesis.py spider:schemarag/samples/spider --validate

Prints one JSON object. Times are wall-clock on this machine; compare ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter

from indexer.synthesis.feedback import RuleFeedback
from indexer.synthesis.icrl import run_icrl
from indexer.synthesis.pairs import SynthesisRequest
from indexer.synthesis.templates import TemplateSynthesizer
from indexer.validate import validate_sql
from schemagraph import (
    Database,
    build_graph,
    enumerate_traversals,
    load_catalog,
    sample_database,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="catalog source, e.g. spider:../shared/data/spider")
    parser.add_argument("--chains", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--validate", action="store_true", help="validate every final pair")
    args = parser.parse_args()

    started = time.perf_counter()
    catalog = load_catalog([args.source])
    traversals = enumerate_traversals(build_graph(catalog))
    samples = {db.id: sample_database(db) for db in catalog}
    loaded, cpu_loaded = time.perf_counter(), time.process_time()

    synthesizer, feedback = TemplateSynthesizer(), RuleFeedback()
    chains = []
    for traversal in traversals:
        db = catalog.database(traversal.db_id)
        request = SynthesisRequest(db, traversal, samples[db.id], count=args.chains, seed=args.seed)
        results = run_icrl(synthesizer, feedback, request, iterations=args.iterations)
        chains.extend((db, traversal, chain) for chain in results)
    synthesized, cpu_synthesized = time.perf_counter(), time.process_time()

    invalid: Counter[str] = Counter()
    if args.validate:
        for db, traversal, chain in chains:
            scope = Database(
                db.id, tuple(db.table(t) for t in traversal.tables), db.origin, db.path
            )
            check = validate_sql(scope, chain.final.sql)
            if not check.ok:
                invalid[check.reason.split(":")[0]] += 1
    validated = time.perf_counter()

    attempts = sum(len(c.attempts) for _, _, c in chains)
    initial = [c.rewards[0] for _, _, c in chains]
    final = [c.rewards[c.iteration] for _, _, c in chains]
    buckets = {
        b.name: {
            "initial": statistics.mean(
                c.initial_reward.bucket(b.name).contribution for _, _, c in chains
            ),
            "final": statistics.mean(
                c.final_reward.bucket(b.name).contribution for _, _, c in chains
            ),
        }
        for b in chains[0][2].initial_reward.buckets
    }
    print(
        json.dumps(
            {
                "databases": len(catalog),
                "traversals": len(traversals),
                "chains": len(chains),
                "attempts": attempts,
                "seconds_load_and_sample": round(loaded - started, 2),
                "seconds_icrl": round(synthesized - loaded, 2),
                "cpu_seconds_icrl": round(cpu_synthesized - cpu_loaded, 2),
                "attempts_per_second": round(attempts / (synthesized - loaded), 1),
                "ms_per_attempt": round(1000 * (synthesized - loaded) / attempts, 3),
                "cpu_ms_per_attempt": round(1000 * (cpu_synthesized - cpu_loaded) / attempts, 3),
                "reward_mean_initial": round(statistics.mean(initial), 3),
                "reward_mean_final": round(statistics.mean(final), 3),
                "buckets": buckets,
                "final_iteration": dict(sorted(Counter(c.iteration for _, _, c in chains).items())),
                "invalid_final": dict(invalid) if args.validate else None,
                "seconds_validate": round(validated - synthesized, 2) if args.validate else None,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
