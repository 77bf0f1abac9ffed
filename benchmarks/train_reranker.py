"""A cross-encoder over the retriever's top databases, trained here (issue 15): tried, not kept.

The question this answers: can a judge over the top five databases be trained on this machine
from the packaged MiniLM, since no reranker model installs offline? (docs/BENCHMARKS.md,
"A cross-encoder over the top five, trained here: not kept".)

For each question the retriever's top `--candidates` databases are written once (work/); each
candidate becomes one text, its name and its tables in the retriever's order for that question
with their columns, read together with the question by MiniLM (the packaged weights, low-rank
adapters on its linear layers, a linear head on the mean of its last layer). A softmax over a
question's candidates is fitted to its gold database. Train questions only: Spider train and
Spider-Syn train, BIRD train from item 4,400 (`train_embedder.bird_tuning`), all minus the
held-out fifth of the databases (`train_embedder.held_out`), which never appear in training,
not even as negatives. Checked on the fusion's sets (`tune_fusion.question_sets(held_out=True)`:
Spider and Spider-Syn questions on held-out databases, BIRD items 2,000-4,399): db_R@1 of the
retriever, of the cross-encoder alone and of their blend (the retriever's scores standardized
per question, plus the cross-encoder's times a weight).

    schemarag index build spider:../shared/data/spider \
        spider:.schemarag/bird-split/train_tables.json --store KB
    flock /tmp/heavy.lock .venv/bin/python benchmarks/train_reranker.py --store KB --out R.npz
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from train_embedder import (  # noqa: E402
    adapter_arrays,
    bird_tuning,
    held_out,
    warmup_then_decay,
)
from tune_fusion import SPIDER, SPLIT, question_sets  # noqa: E402

from providers.minilm_embedder import default_minilm_path  # noqa: E402
from providers.schema_adapters import TARGETS, LoRALinear  # noqa: E402
from retriever import RankedDatabase, Retriever, RetrieverConfig, load_files  # noqa: E402
from schemagraph.model import fold  # noqa: E402

log = logging.getLogger("train_reranker")


def humanize(name: str) -> str:
    """A name as the model read it in training (`song_name` -> "song name")."""
    return name.replace("_", " ").strip().lower()


def candidates(store: str, work: Path, k: int, sample: int, seed: int) -> dict[str, Any]:
    """Per set (the fusion's sets and the training questions), each question's `ranked` rows,
    and the pool's `schemas_of`; cached in work."""
    cache = work / f"candidates-{k}-{sample}-{seed}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    from schemarag.cli.retrieve import make_query_embedder
    from schemarag.settings import Settings

    tables = [SPIDER / "tables.json", SPLIT / "train_tables.json"]
    sets = {name: (path, part) for name, (path, part) in question_sets(work, True).items()}
    # training questions
    syn = json.loads((SPIDER / "spider_syn/train_spider.json").read_text(encoding="utf-8"))
    syn = [
        {"db_id": r["db_id"], "question": r["SpiderSynQuestion"], "query": r["query"]} for r in syn
    ]
    spider = json.loads((SPIDER / "train_spider.json").read_text(encoding="utf-8"))
    bird = json.loads(bird_tuning(work).read_text(encoding="utf-8"))
    train = [r for r in spider + syn + bird if not held_out(r["db_id"])]
    random.Random(seed).shuffle(train)
    train_file = work / "train.json"
    train_file.write_text(json.dumps(train[:sample]), encoding="utf-8")
    sets["train"] = (train_file, slice(0, sample))
    embedder = make_query_embedder(Settings.from_env(), None)
    out: dict[str, Any] = {}
    with Retriever.open(store, embedder, config=RetrieverConfig(examples=0)) as retriever:
        for name, (path, part) in sets.items():
            rows = json.loads(path.read_text(encoding="utf-8"))[part]
            subset = work / f"{name}.part.json"
            subset.write_text(json.dumps(rows), encoding="utf-8")
            dataset = load_files(tables, subset, name=name)
            out[name] = ranked(retriever, dataset.questions, k)
            log.info("%s: %d questions", name, len(out[name]))
        out["schemas"] = schemas_of(retriever)
    cache.write_text(json.dumps(out))
    return out


def ranked(retriever: Retriever, questions: Any, k: int) -> list[dict[str, Any]]:
    """Each question's top `k` databases with their tables in the retriever's order."""
    rows = []
    for q in questions:
        result = retriever.retrieve(q.question, top_databases=k, top_tables=1000)
        rows.append(
            {
                "question": q.question,
                "gold": fold(q.db_id),
                "candidates": [
                    [fold(d.db_id), d.score, joinable_first(d)] for d in result.databases
                ],
            }
        )
    return rows


def joinable_first(db: RankedDatabase) -> list[str]:
    """The database's tables, the chosen ones with their bridges first (in join order), then
    the others by score."""
    return list(dict.fromkeys((*db.chosen_tables, *(t.name for t in db.tables))))


def schemas_of(retriever: Retriever) -> dict[str, Any]:
    """Folded database -> folded table -> (table name, its columns)."""
    schemas: dict[str, Any] = {}
    for e in retriever.entries:
        schemas.setdefault(fold(e.db_id), {})[fold(e.table)] = [e.table, list(e.columns)]
    return schemas


def measured(store: str, dataset: str, k: int) -> dict[str, Any]:
    """The candidates of a measured set (`spider-dev`, `spider-syn` on the Spider pool, or
    `bird` for BIRD train's measured 2,000 on the 235-database pool), to confirm a result
    chosen on train questions (nothing is chosen here)."""
    from retriever.datasets import load_dataset
    from schemarag.cli.retrieve import make_query_embedder
    from schemarag.settings import Settings

    if dataset == "bird":
        data = load_files(
            [SPIDER / "tables.json", SPLIT / "train_tables.json"], SPLIT / "evaluated.json"
        )
    else:
        data = load_dataset(dataset, SPIDER)
    with Retriever.open(store, make_query_embedder(Settings.from_env(), None)) as retriever:
        return {"rows": ranked(retriever, data.questions, k), "schemas": schemas_of(retriever)}


def render(db: str, tables: list[str], schemas: dict[str, Any]) -> str:
    """A candidate's text: its name, then its tables in the retriever's order with columns."""
    schema = schemas[db]
    parts = [humanize(db.removeprefix("bird_"))]
    for t in tables:
        name, columns = schema[fold(t)]
        parts.append(f"{humanize(name)}: {', '.join(humanize(c) for c in columns)}")
    return " | ".join(parts)


class CrossEncoder(torch.nn.Module):
    def __init__(self, rank: int) -> None:
        super().__init__()
        import sentence_transformers

        st = sentence_transformers.SentenceTransformer(str(default_minilm_path()), device="cpu")
        self.tokenizer = st.tokenizer
        self.bert = st[0].auto_model
        for p in self.bert.parameters():
            p.requires_grad_(False)
        self.adapters: dict[str, LoRALinear] = {}
        for k, layer in enumerate(self.bert.encoder.layer):
            for target in TARGETS:
                parent, _, leaf = target.rpartition(".")
                wrapped = LoRALinear(layer.get_submodule(target), rank)
                setattr(layer.get_submodule(parent), leaf, wrapped)
                self.adapters[f"layer.{k}.{target}"] = wrapped
        self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)

    def params(self) -> list[torch.nn.Parameter]:
        return [p for a in self.adapters.values() for p in (a.A, a.B)] + list(
            self.head.parameters()
        )

    def forward(self, questions: list[str], texts: list[str], max_tokens: int) -> torch.Tensor:
        enc = self.tokenizer(
            questions,
            texts,
            truncation="only_second",
            max_length=max_tokens,
            padding=True,
            return_tensors="pt",
        )
        hidden = self.bert(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return self.head(pooled.float()).squeeze(-1)


def score_set(
    model: CrossEncoder, rows: list[dict], schemas: dict[str, Any], max_tokens: int
) -> list[list[float]]:
    """The cross-encoder's score of each question's candidates."""
    model.eval()
    out = []
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        for start in range(0, len(rows), 8):
            chunk = rows[start : start + 8]
            qs, texts, sizes = [], [], []
            for r in chunk:
                for db, _, tables in r["candidates"]:
                    qs.append(r["question"])
                    texts.append(render(db, tables, schemas))
                sizes.append(len(r["candidates"]))
            scores = model(qs, texts, max_tokens).float().tolist()
            at = 0
            for n in sizes:
                out.append(scores[at : at + n])
                at += n
    return out


def evaluate(rows: list[dict], ce: list[list[float]], blend: float) -> float:
    """db_R@1 of the retriever's scores standardized per question plus `blend` times the
    cross-encoder's (the cross-encoder alone from 1e6 on)."""
    hit = 0
    for r, s in zip(rows, ce, strict=True):
        fused = np.array([c[1] for c in r["candidates"]])
        fused = (fused - fused.mean()) / (fused.std() + 1e-6)
        total = fused + blend * np.array(s) if blend < 1e6 else np.array(s)
        best = r["candidates"][int(np.argmax(total))][0]
        hit += best == r["gold"]
    return 100.0 * hit / len(rows)


def train(model: CrossEncoder, rows: list[dict], schemas: dict[str, Any], args: Any) -> None:
    """Fit `model` to the training questions' candidates and write its weights to args.out."""
    log.info(
        "train: %d questions, gold in the candidates for %.1f %%",
        len(rows),
        100 * np.mean([any(c[0] == r["gold"] for c in r["candidates"]) for r in rows]),
    )
    params = model.params()
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    steps = math.ceil(len(rows) * args.epochs / args.batch)
    schedule = warmup_then_decay(optimizer, steps)
    order: list[int] = []
    started = time.perf_counter()
    model.train()
    for step in range(steps):
        if len(order) < args.batch:
            fresh = list(range(len(rows)))
            random.shuffle(fresh)
            order.extend(fresh)
        batch = [rows[order.pop()] for _ in range(args.batch)]
        qs, texts, targets, sizes = [], [], [], []
        for r in batch:
            # The held-out databases never appear, not even as negatives: a model that only
            # ever saw them lose would learn to push them down, and they stand for the
            # databases of estates it never saw.
            cands = [list(c) for c in r["candidates"] if not held_out(c[0])]
            dbs = [c[0] for c in cands]
            if r["gold"] not in dbs:  # the gold database replaces the last candidate
                tables = [v[0] for v in schemas[r["gold"]].values()]
                cands = [*cands[: args.candidates - 1], [r["gold"], 0.0, tables]]
                dbs = [c[0] for c in cands]
            perm = list(range(len(cands)))
            random.shuffle(perm)
            for j in perm:
                qs.append(r["question"])
                texts.append(render(cands[j][0], cands[j][2], schemas))
            targets.append([dbs[j] for j in perm].index(r["gold"]))
            sizes.append(len(cands))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            scores = model(qs, texts, args.max_tokens).float()
        losses = [
            torch.nn.functional.cross_entropy(part.unsqueeze(0), torch.tensor([target]))
            for part, target in zip(scores.split(sizes), targets, strict=True)
        ]
        loss = torch.stack(losses).mean()
        loss.backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        if step % 10 == 0 or step == steps - 1:
            log.info(
                "step %d/%d loss %.3f (%.0fs)",
                step + 1,
                steps,
                loss.item(),
                time.perf_counter() - started,
            )
    arrays = adapter_arrays(model.adapters)
    arrays["head.weight"] = model.head.weight.detach().numpy()
    arrays["head.bias"] = model.head.bias.detach().numpy()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **arrays)
    log.info("wrote %s", args.out)


def load(model: CrossEncoder, path: Path) -> None:
    """Weights written by `train`."""
    with np.load(path) as arrays, torch.no_grad():
        for name, a in model.adapters.items():
            a.A.copy_(torch.from_numpy(arrays[f"{name}.A"].astype(np.float32)))
            a.B.copy_(torch.from_numpy(arrays[f"{name}.B"].astype(np.float32)) / a.scale)
        model.head.weight.copy_(torch.from_numpy(arrays["head.weight"]))
        model.head.bias.copy_(torch.from_numpy(arrays["head.bias"]))


def report(
    model: CrossEncoder, sets: dict[str, list[dict]], schemas: dict[str, Any], max_tokens: int
) -> dict[str, Any]:
    """db_R@1 per set: the retriever, the cross-encoder alone, blends."""
    out = {}
    for name, rows in sets.items():
        t0 = time.perf_counter()
        ce = score_set(model, rows, schemas, max_tokens)
        out[name] = {
            "n": len(rows),
            "retriever": evaluate(rows, ce, 0.0),
            "cross_encoder": evaluate(rows, ce, 1e9),
            **{f"blend_{w}": evaluate(rows, ce, w) for w in (0.25, 0.5, 1.0, 2.0)},
            "gold_in_candidates": 100
            * float(np.mean([any(c[0] == r["gold"] for c in r["candidates"]) for r in rows])),
            "seconds": round(time.perf_counter() - t0, 1),
        }
        log.info("%s %s", name, out[name])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True, help="the index whose rankings are reordered")
    parser.add_argument("--out", type=Path, required=True, help="the weights (.npz) written")
    parser.add_argument("--work", type=Path, default=REPO / ".schemarag/train-reranker")
    parser.add_argument("--candidates", type=int, default=5)
    parser.add_argument("--train", type=int, default=4000)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=16, help="questions per step")
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-sets", default="spider_A,syn_A,bird_A,spider_B,syn_B,bird_B")
    parser.add_argument(
        "--measure",
        choices=("spider-dev", "spider-syn", "bird"),
        help="score a measured set with the weights of --out instead of training (--store: its "
        "index; bird: BIRD train's measured 2,000 in the 235-database pool)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.measure:
        data = measured(args.store, args.measure, args.candidates)
        sets = {args.measure: data["rows"]}
    else:
        data = candidates(args.store, args.work, args.candidates, args.train, args.seed)
        sets = {name: data[name] for name in args.eval_sets.split(",")}
    # the query embedder held this process to one thread
    from threadpoolctl import threadpool_limits

    threadpool_limits(2)
    torch.set_num_threads(2)
    model = CrossEncoder(args.rank)
    if args.measure:
        load(model, args.out)
    else:
        train(model, data["train"], data["schemas"], args)
    found = report(model, sets, data["schemas"], args.max_tokens)
    suffix = f".{args.measure}.report.json" if args.measure else ".report.json"
    (args.out.parent / (args.out.stem + suffix)).write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
