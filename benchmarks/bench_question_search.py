"""Question search engines at estate scale: exact numpy against qdrant-edge-py HNSW (issue 16).

The retriever's embedded question search is one float32 matrix-vector product over every
synthetic question (`retriever.question_index`), exact, linear in the questions. This compares it
with Qdrant's own engine in process (`qdrant-edge-py`, an HNSW graph; `pip install
qdrant-edge-py`, not a dependency of schemarag) on the questions of a built store's snapshot,
queried with Spider dev's 1,034
questions embedded by MiniLM, both on one thread:

- latency per query (p50, p99) of the top-50 search the retriever makes;
- recall@50 of HNSW against the exact top 50 (the share of the exact hits it returns), and
  whether the best hit agrees; and the same counting ties as agreement (a hit whose score equals
  the exact 50th score, or a best hit whose score equals the exact best: the template's questions
  of one traversal are near-duplicates, and which of two equal scores comes first is arbitrary);
- HNSW build seconds and the shard's size on disk, at several `ef` settings.

    flock /tmp/heavy.lock .venv/bin/python benchmarks/bench_question_search.py \
        --store .schemarag/estate/n10000/store --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

REPO = Path(__file__).resolve().parent.parent

HITS = 50
#: scores this close count as equal (float32 dot products of unit vectors)
TIE = 1e-5


def snapshot_vectors(store: Path) -> np.ndarray:
    current = (store / "CURRENT").read_text().strip()
    return np.load(store / "builds" / current / "snapshot" / "questions.npy", mmap_mode="r")


def dev_queries(data: Path) -> np.ndarray:
    from providers import make_embedder

    questions = [q["question"] for q in json.loads((data / "dev.json").read_text())]
    return np.asarray(make_embedder("minilm").embed_documents(questions), dtype=np.float32)


def percentiles(ms: list[float]) -> dict[str, float]:
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3),
            "p99_ms": round(float(np.percentile(ms, 99)), 3)}  # fmt: skip


def exact(
    matrix: np.ndarray, queries: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, float]]:
    """The exact top 50 per query, their scores, and the latency."""
    tops, top_scores, ms = [], [], []
    for q in queries:
        t0 = time.perf_counter()
        scores = matrix @ q
        top = np.argpartition(-scores, HITS)[:HITS]
        top = top[np.argsort(-scores[top])]
        ms.append((time.perf_counter() - t0) * 1000)
        tops.append(top)
        top_scores.append(scores[top])
    return tops, top_scores, percentiles(ms)


def hnsw(
    matrix: np.ndarray,
    queries: np.ndarray,
    truth: list[np.ndarray],
    truth_scores: list[np.ndarray],
    folder: Path,
) -> dict[str, Any]:
    import qdrant_edge as qe

    config = qe.EdgeConfig(
        vectors={"q": qe.EdgeVectorParams(size=matrix.shape[1], distance=qe.Distance.Dot)},
        hnsw_config=qe.HnswIndexConfig(
            m=16, ef_construct=100, full_scan_threshold=1, max_indexing_threads=1
        ),
        # one segment, indexed whatever its size (the default leaves small segments unindexed)
        optimizers=qe.EdgeOptimizersConfig(default_segment_number=1, indexing_threshold=1),
    )
    shard = qe.EdgeShard.create(str(folder), config)
    t0 = time.perf_counter()
    for start in range(0, len(matrix), 2048):
        block = np.asarray(matrix[start : start + 2048])
        shard.update(
            qe.UpdateOperation.upsert_points(
                [qe.Point(id=start + i, vector={"q": v.tolist()}) for i, v in enumerate(block)]
            )
        )
    loaded = time.perf_counter() - t0
    shard.optimize()
    built = time.perf_counter() - t0 - loaded
    info = shard.info()
    out: dict[str, Any] = {
        "load_s": round(loaded, 1),
        "index_s": round(built, 1),
        "indexed_vectors": info.indexed_vectors_count,
        "disk_mb": round(sum(f.stat().st_blocks * 512 for f in folder.rglob("*")) / 1e6, 1),
        "by_ef": {},
    }
    for ef in (64, 128, 256, 512):
        ms, overlap, same_best, tied_overlap, tied_best = [], [], 0, [], 0
        for q, want, want_scores in zip(queries, truth, truth_scores, strict=True):
            request = qe.QueryRequest(
                query=qe.Query.Nearest(q.tolist(), using="q"),
                limit=HITS,
                params=qe.SearchParams(hnsw_ef=ef),
            )
            t1 = time.perf_counter()
            found = shard.query(request)
            ms.append((time.perf_counter() - t1) * 1000)
            ids = [int(p.id) for p in found]
            overlap.append(len(set(ids) & set(want.tolist())) / HITS)
            same_best += bool(ids) and ids[0] == int(want[0])
            scores = np.array([p.score for p in found])
            tied_overlap.append(float((scores >= want_scores[-1] - TIE).sum()) / HITS)
            tied_best += bool(ids) and scores[0] >= want_scores[0] - TIE
        out["by_ef"][str(ef)] = {
            **percentiles(ms),
            "recall_at_50": round(float(np.mean(overlap)) * 100, 2),
            "same_best_hit": round(same_best / len(queries) * 100, 2),
            "recall_at_50_ties_count": round(float(np.mean(tied_overlap)) * 100, 2),
            "best_score_found": round(tied_best / len(queries) * 100, 2),
        }
    shard.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="an embedded store")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/spider")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    matrix = np.ascontiguousarray(snapshot_vectors(args.store))
    queries = dev_queries(args.data)
    truth, truth_scores, exact_ms = exact(matrix, queries)
    report: dict[str, Any] = {"store": str(args.store), "questions": len(matrix),
                              "queries": len(queries), "exact_numpy": exact_ms}  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="edge-"))
    try:
        report["hnsw_qdrant_edge"] = hnsw(matrix, queries, truth, truth_scores, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
