"""Database weights of the fusion fitted by maximum likelihood, on train questions only.

The shipped database weights (`retriever.fusion.DEFAULT_WEIGHTS`, `db_*`) were chosen by
coordinate ascent on Spider train and its Spider-Syn rewrites. This script fits them instead:
a softmax over the pool's databases of the weighted sum of the same scaled signals, fitted with
an L2 penalty (L-BFGS) on three train sets at once, and compares both weightings on held-out
train questions. Nothing here reads a dev or evaluated question.

Pool: Spider's 166 databases + BIRD train's 69 (`bird_` ids; `benchmarks/bird_split.py` writes
`train_tables.json`). Question sets (each shuffled with `random.Random(0)`):

- Spider train, Spider-Syn train: items 0-599 fit (A), items 600-1,199 are held out (B);
- BIRD train: items 0-1,999 are the evaluated part and never read here; items 2,000-3,199 fit,
  3,200-4,399 are held out.

Each question's signals are computed once (`Retriever.signals`) and reduced to one row of
features per database, written to OUT/features.npz; fitting and scoring then take seconds
(without --store, the features are read from there). The shipped six signals' weights are
the midpoint of the old and the fitted ones (see `retriever/fusion.py`).

`--docs-store` adds the same sets in an index of the same pool built with BIRD's column
descriptions (`benchmarks/bird_docs.py`; features in OUT/docs/): the weight of BM25's lead
(`bm25_margin`) is chosen by a grid on the fit sets of both pools, the others as shipped.

    flock /tmp/heavy.lock .venv/bin/python benchmarks/tune_fusion.py --store STORE \
        --docs-store DOCS_STORE --out DIR
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.datasets import load_files
from retriever import Retriever
from retriever.fusion import (
    DATABASE_SIGNALS,
    DEFAULT_WEIGHTS,
    SIGNALS,
    database_signals,
    scaled_tables,
)
from schemagraph.model import fold

REPO = Path(__file__).resolve().parent.parent
SPIDER = REPO.parent / "shared/data/spider"
BIRD = REPO.parent / "shared/data/bird"
SPLIT = REPO / ".schemarag/bird-split"
#: the database weights before this fit (coordinate ascent on Spider and Spider-Syn train)
BEFORE = (0.0, 0.25, 0.25, 0.0, 0.3, 0.5)
#: the shipped database signals, then extra per-database features weighed here
FEATURES = (
    *DATABASE_SIGNALS,
    "bm25_second",  # the second-best table's scaled BM25 in the database
    "dense_raw",  # the best raw cosine of a table document (not shifted by the pool median)
    "question_best",  # best question-hit cosine for the database, minus the best overall
    "log_tables",  # log of the database's table count
    "bm25_documented",  # the database's BM25 times the share of its names that are described
)


def question_sets(work: Path, held_out: bool = False) -> dict[str, tuple[Path, slice]]:
    """Question files for the sets, written once into `work`; `held_out`: the Spider and
    Spider-Syn questions of the databases `benchmarks/train_embedder.py` leaves out only."""
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, tuple[Path, slice]] = {}
    spider = json.loads((SPIDER / "train_spider.json").read_text(encoding="utf-8"))
    syn = json.loads((SPIDER / "spider_syn/train_spider.json").read_text(encoding="utf-8"))
    syn = [
        {"db_id": r["db_id"], "question": r["SpiderSynQuestion"], "query": r["query"]} for r in syn
    ]
    bird = json.loads((BIRD / "train.json").read_text(encoding="utf-8"))
    bird = [{**r, "db_id": "bird_" + r["db_id"]} for r in bird]
    if held_out:
        from train_embedder import held_out as left_out

        spider = [r for r in spider if left_out(r["db_id"])]
        syn = [r for r in syn if left_out(r["db_id"])]
    for name, items in (("spider", spider), ("syn", syn), ("bird", bird)):
        random.Random(0).shuffle(items)
        path = work / f"{name}.json"
        path.write_text(json.dumps(items), encoding="utf-8")
    out["spider_A"] = (work / "spider.json", slice(0, 600))
    out["spider_B"] = (work / "spider.json", slice(600, 1200))
    out["syn_A"] = (work / "syn.json", slice(0, 600))
    out["syn_B"] = (work / "syn.json", slice(600, 1200))
    out["bird_A"] = (work / "bird.json", slice(2000, 3200))
    out["bird_B"] = (work / "bird.json", slice(3200, 4400))
    return out


def database_features(retriever: Retriever, question: str) -> np.ndarray:
    """One row of `FEATURES` per database of the pool."""
    signals, hits, _ = retriever.signals(question)
    db_of = retriever._db_of
    n_dbs = len(retriever.db_ids)
    out = np.zeros((n_dbs, len(FEATURES)))

    def per_db(values: np.ndarray) -> np.ndarray:
        top = np.zeros(n_dbs)
        np.maximum.at(top, db_of, values)
        return top

    table = scaled_tables(signals, len(db_of))
    shipped = database_signals(signals, table, db_of, n_dbs)
    for i, name in enumerate(DATABASE_SIGNALS):
        out[:, i] = shipped[name]
    # second-best table BM25: the per-database max with each database's best table removed
    bm25 = table["bm25"]
    best_row = np.full(n_dbs, -1)
    order = np.lexsort((bm25, db_of))  # by database, then by score
    best_row[db_of[order]] = order  # the last write per database is its best table
    rest = bm25.copy()
    rest[best_row[best_row >= 0]] = 0.0
    out[:, FEATURES.index("bm25_second")] = per_db(rest)
    out[:, FEATURES.index("dense_raw")] = per_db(signals.table["dense"])
    column = FEATURES.index("question_best")
    if hits:
        best = max(h.score for h in hits)
        qbest = np.full(n_dbs, -1.0)
        for h in hits:
            d = retriever._db_pos.get(fold(h.db_id), -1)
            if d >= 0:
                qbest[d] = max(qbest[d], h.score - best)
        out[:, column] = qbest
    else:
        out[:, column] = -1.0
    out[:, FEATURES.index("log_tables")] = np.log(np.bincount(db_of, minlength=n_dbs).clip(1))
    out[:, FEATURES.index("bm25_documented")] = shipped["bm25"] * documented(retriever)
    return out


def documented(retriever: Retriever) -> np.ndarray:
    """Per database, the share of its table and column names that have a description."""
    described = np.zeros(len(retriever.db_ids))
    names = np.zeros(len(retriever.db_ids))
    for entry, db in zip(retriever.entries, retriever._db_of, strict=True):
        names[db] += 1 + len(entry.columns)
        described[db] += bool(entry.description) + len(entry.descriptions)
    return described / names.clip(1)


def extract(store: str, work: Path, spec: str, held_out: bool) -> dict[str, Any]:
    from schemarag.cli.retrieve import make_query_embedder
    from schemarag.settings import Settings

    sets = question_sets(work, held_out)
    tables = [SPIDER / "tables.json", SPLIT / "train_tables.json"]
    embedder = make_query_embedder(Settings.from_env(), spec)
    data: dict[str, Any] = {}
    with Retriever.open(store, embedder) as retriever:
        pos = {fold(d): i for i, d in enumerate(retriever.db_ids)}
        for name, (path, part) in sets.items():
            rows = json.loads(path.read_text(encoding="utf-8"))[part]
            subset = work / f"{name}.part.json"
            subset.write_text(json.dumps(rows), encoding="utf-8")
            dataset = load_files(tables, subset, name=name)
            feats, gold = [], []
            for q in dataset.questions:
                feats.append(database_features(retriever, q.question).astype(np.float32))
                gold.append(pos[fold(q.db_id)])
            data[f"{name}_X"] = np.stack(feats)
            data[f"{name}_y"] = np.array(gold)
            print(f"{name}: {len(gold)} questions", file=sys.stderr, flush=True)
    np.savez_compressed(work / "features.npz", **data)
    return data


def r_at_1(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    scores = X @ w
    # ties: the lower index wins, as `np.argsort(..., kind="stable")` in the retriever
    return float((scores.argmax(axis=1) == y).mean() * 100)


def fit(Xs: list[np.ndarray], ys: list[np.ndarray], l2: float, columns: list[int]) -> np.ndarray:
    from scipy.optimize import minimize
    from scipy.special import logsumexp

    X = np.concatenate([x[:, :, columns] for x in Xs]).astype(np.float64)
    y = np.concatenate(ys)
    # each set weighs the same, whatever its size
    weight = np.concatenate([np.full(len(v), 1.0 / len(v)) for v in ys]) / len(ys)
    rows = np.arange(len(y))

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = X @ w
        lse = logsumexp(s, axis=1)
        p = np.exp(s - lse[:, None])
        nll = float((weight * (lse - s[rows, y])).sum()) + l2 * float(w @ w)
        grad = (weight[:, None, None] * (p[:, :, None] * X)).sum((0, 1))
        grad -= (weight[:, None] * X[rows, y]).sum(0)
        return nll, grad + 2 * l2 * w

    start = np.full(len(columns), 1.0)
    return np.asarray(minimize(loss, start, jac=True, method="L-BFGS-B").x)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="an index of the 235-database pool (extracts features)")
    parser.add_argument(
        "--docs-store",
        help="an index of the same pool built with BIRD's column descriptions (extracts features)",
    )
    parser.add_argument("--out", type=Path, default=REPO / ".schemarag/tune-fusion")
    parser.add_argument("--embedder", default="minilm", help="the stores' embedder spec")
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="Spider and Spider-Syn questions of the databases benchmarks/train_embedder.py "
        "leaves out only (for an embedder adapted on the others)",
    )
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    data: dict[str, Any] = {}
    for prefix, store in (("", args.store), ("docs.", args.docs_store)):
        work = args.out / prefix.rstrip(".") if prefix else args.out
        found = dict(extract(store, work, args.embedder, args.held_out)) if store else None
        if found is None and (work / "features.npz").is_file():
            found = dict(np.load(work / "features.npz"))
        data.update({prefix + k: v for k, v in (found or {}).items()})
    sets = [k[: -len("_X")] for k in data if k.endswith("_X")]
    plain_fit = [m for m in ("spider_A", "syn_A", "bird_A") if m in sets]
    # the margin weight is chosen with the documented pool's BIRD questions too, when extracted
    margin_fit = [*plain_fit, *[m for m in ("docs.bird_A",) if m in sets]]
    n = len(SIGNALS)
    shipped = np.array([DEFAULT_WEIGHTS.database().get(f, 0.0) for f in FEATURES])
    before = np.zeros(len(FEATURES))
    before[:n] = BEFORE

    def fitted(columns: list[int]) -> np.ndarray:
        w = np.zeros(len(FEATURES))
        w[columns] = fit(
            [data[f"{m}_X"] for m in plain_fit], [data[f"{m}_y"] for m in plain_fit], 1e-3, columns
        )
        return w

    six = fitted(list(range(n)))
    # the fitted six at the earlier weights' scale (negative weights dropped), and the point
    # halfway between them and the earlier ones
    scaled = np.clip(six, 0.0, None) * before.sum() / np.clip(six, 0.0, None).sum()
    # the BM25 lead's weight, the others as shipped, chosen on the fit sets by a grid
    margin_at = FEATURES.index("bm25_margin")

    def with_margin(w: float) -> np.ndarray:
        out = shipped.copy()
        out[margin_at] = w
        return out

    grid = [round(0.1 * i, 1) for i in range(11)]
    fit_sum = [
        sum(r_at_1(data[f"{m}_X"], data[f"{m}_y"], with_margin(w)) for m in margin_fit)
        for w in grid
    ]
    print(
        f"bm25_margin on {', '.join(margin_fit)}, summed db_R@1: "
        + " ".join(f"{w}:{v:.1f}" for w, v in zip(grid, fit_sum, strict=True))
    )
    variants = {
        "before (coordinate ascent)": before,
        "fitted, the six signals": six,
        "fitted, all features": fitted(list(range(len(FEATURES)))),
        "midpoint of before and fitted (rounded)": np.round((before + scaled) / 2, 2),
        "shipped without bm25_margin": with_margin(0.0),
        "shipped with the grid's bm25_margin": with_margin(grid[int(np.argmax(fit_sum))]),
        "shipped now": shipped,
    }
    for label, w in variants.items():
        scores = {m: r_at_1(data[f"{m}_X"], data[f"{m}_y"], w) for m in sorted(sets)}
        print(f"{label}: " + " ".join(f"{k} {v:.1f}" for k, v in scores.items()))
        print("   weights: " + " ".join(f"{f}={x:.3f}" for f, x in zip(FEATURES, w, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
