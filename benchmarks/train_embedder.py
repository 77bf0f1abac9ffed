"""Fine-tune MiniLM for schema routing on train questions only: low-rank adapters.

Each train question is pulled towards the table document (`build.table_documents.table_document`,
the text the index embeds) of one of its gold tables, against the batch's other documents
(with `--hard 1`, also a table of another database that BM25 ranks high); and, with
`--synthetic`, towards one of its database's synthetic questions, against the batch's others
and the nearest synthetic question of another database. Softmax over cosines times `SCALE`.
Only low-rank adapters (LoRA, rank `--rank`) on the encoder's linear layers are trained; the
share `--strength` of the update is written to OUT (float16 .npz, about 1.2 MB at rank 16),
which `providers.minilm_embedder` merges into the packaged weights at load.

Questions: Spider train and its Spider-Syn rewrites, and with `--bird` BIRD train's questions
from item 4,400 on (`bird_tuning`), minus the databases held out for checking the fusion
(`held_out`, by hash, BIRD's too; `benchmarks/tune_fusion.py --held-out`); never a dev question
or one of BIRD's measured 2,000, and no schema but the training databases'. The shipped
adapters came from (seed 0, one epoch):

    # providers/adapters/schema-v2.npz (the current `minilm+schema`): Spider + BIRD pool
    schemarag index build spider:../shared/data/spider \
        spider:.schemarag/bird-split/train_tables.json --store S --embedder minilm
    flock /tmp/heavy.lock .venv/bin/python benchmarks/train_embedder.py --bird --out A.npz \
        --synthetic S/builds/*/snapshot/questions.jsonl
    # providers/adapters/schema-v1.npz: the same without --bird, S built on Spider alone
"""

from __future__ import annotations

import argparse
import hashlib
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

from evaluation.bird import evaluated_questions, prefixed_tables
from evaluation.datasets import load_files
from providers.minilm_embedder import default_minilm_path
from providers.schema_adapters import TARGETS, LoRALinear
from retriever.lexical import TableBM25
from retriever.tables import TableEntry
from retriever.text import normalize_question
from schemagraph.model import fold
from store.table_documents import table_document

REPO = Path(__file__).resolve().parent.parent
SPIDER = REPO.parent / "shared/data/spider"
BIRD = REPO.parent / "shared/data/bird"
BIRD_FROM = 4400
SCALE = 20.0
log = logging.getLogger("train_embedder")


def held_out(db_id: str, share: float = 0.2) -> bool:
    """Spider train databases kept out of training, for fitting the fusion on questions the
    adapters never saw (a fixed fifth, by hash)."""
    digest = hashlib.sha1(db_id.encode()).digest()
    return digest[0] / 256 < share


def bird_tuning(work: Path) -> Path:
    """BIRD train's questions from item `BIRD_FROM` on (after `random.Random(0).shuffle`; items
    0-1,999 are the measured part, 2,000-4,399 the fusion's sets), minus any whose text equals a
    measured question's, written with `bird_` ids for `load_files`."""
    rows = json.loads((BIRD / "train.json").read_text(encoding="utf-8"))
    items = evaluated_questions(rows, len(rows), seed=0)  # all of them, in the measured order
    measured = {normalize_question(r["question"]) for r in items[:2000]}
    kept = [r for r in items[BIRD_FROM:] if normalize_question(r["question"]) not in measured]
    out = work / "bird_tuning.json"
    out.write_text(json.dumps(kept), encoding="utf-8")
    tables = json.loads((BIRD / "train_tables.json").read_text(encoding="utf-8"))
    (work / "bird_tables.json").write_text(json.dumps(prefixed_tables(tables)), encoding="utf-8")
    return out


def pairs(
    work: Path, bird: bool = False
) -> tuple[list[tuple[str, str, list[str], str]], dict[tuple[str, str], str]]:
    """(question, db, gold table keys, hard negative doc) rows, and every table's document."""
    syn = json.loads((SPIDER / "spider_syn/train_spider.json").read_text(encoding="utf-8"))
    work.mkdir(parents=True, exist_ok=True)
    syn_file = work / "syn_train.json"
    syn_file.write_text(
        json.dumps(
            [
                {"db_id": r["db_id"], "question": r["SpiderSynQuestion"], "query": r["query"]}
                for r in syn
            ]
        ),
        encoding="utf-8",
    )
    tables = [SPIDER / "tables.json"]
    sets = [SPIDER / "train_spider.json", syn_file]
    if bird:
        sets.append(bird_tuning(work))
        tables.append(work / "bird_tables.json")
    rows = []
    docs: dict[tuple[str, str], str] = {}
    entries: list[TableEntry] = []
    for questions in sets:
        data = load_files(tables, questions)
        if not docs:
            for db in data.catalog.databases:
                for table in db.tables:
                    payload = table_document(db, table)
                    entries.append(TableEntry.from_payload(payload))
                    docs[(fold(db.id), fold(table.name))] = payload["text"]
        rows.extend(q for q in data.questions if not held_out(q.db_id))
    # hard negatives come from the training databases only: no dev or held-out schema is read
    trained = {fold(q.db_id) for q in rows}
    entries = [e for e in entries if fold(e.db_id) in trained]
    bm25 = TableBM25(entries)
    out = []
    for q in rows:
        scores = bm25.scores(q.question)
        hard = next(
            (
                entries[int(i)].key
                for i in np.argsort(-scores)[:20]
                if fold(entries[int(i)].db_id) != fold(q.db_id)
            ),
            entries[0].key,
        )
        out.append((q.question, fold(q.db_id), sorted(q.gold), docs[hard]))
    return out, docs


def synthetic_pairs(
    questions_file: Path, rows: list[tuple[str, str, list[str], str]], model
) -> tuple[list[list[str]], list[str], list[str]]:
    """Per training question: its database's synthetic questions that share a gold table (all
    of the database's when none does), the nearest synthetic question of another database by
    the plain model (the hard negative), and its database."""
    trained = {db for _, db, _, _ in rows}
    records = [json.loads(line) for line in questions_file.read_text().splitlines() if line]
    records = [r for r in records if fold(r["db_id"]) in trained]
    texts = [r["question"] for r in records]
    dbs = np.array([fold(r["db_id"]) for r in records])
    vectors = model.encode(texts, batch_size=64, normalize_embeddings=True)
    asked = model.encode([r[0] for r in rows], batch_size=64, normalize_embeddings=True)
    positives, negatives = [], []
    for i, (_, db, gold, _) in enumerate(rows):
        tables = {t for _, t in gold}
        mine = list(np.flatnonzero(dbs == db))
        sharing = [k for k in mine if tables & {fold(t) for t in records[k]["tables"]}]
        positives.append([texts[k] for k in (sharing or mine)])
        scores = vectors @ asked[i]
        scores[dbs == db] = -2.0
        negatives.append(texts[int(np.argmax(scores))])
    log.info("synthetic questions: %d, from %s", len(texts), questions_file)
    return positives, negatives, [r[1] for r in rows]


def synthetic_loss(synthetic, batch_ids: list[int], embed, q: torch.Tensor) -> torch.Tensor:
    """Softmax of each question over the batch's synthetic questions: one of its database's
    (drawn) against the others' and every question's hard negative."""
    positives, negatives, dbs = synthetic
    drawn = [random.choice(positives[i]) for i in batch_ids]
    texts = list(dict.fromkeys(drawn + [negatives[i] for i in batch_ids]))
    column = {text: j for j, text in enumerate(texts)}
    with torch.autocast("cpu", dtype=torch.bfloat16):
        s = embed(texts)
    logits = SCALE * q.float() @ s.float().T
    mask = torch.zeros_like(logits, dtype=torch.bool)
    for a, i in enumerate(batch_ids):
        for b, j in enumerate(batch_ids):
            if a != b and dbs[i] == dbs[j] and drawn[b] != drawn[a]:
                mask[a, column[drawn[b]]] = True
    logits = logits.masked_fill(mask, -1e4)
    target = torch.tensor([column[t] for t in drawn])
    return torch.nn.functional.cross_entropy(logits, target)


def warmup_then_decay(optimizer: torch.optim.Optimizer, steps: int) -> Any:
    """The learning rate rising over the first tenth of `steps`, then falling linearly to 0."""
    warmup = max(1, steps // 10)
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (steps - s) / steps)
    )


def adapter_arrays(adapters: dict[str, LoRALinear], strength: float = 1.0) -> dict[str, Any]:
    """Adapters as an adapter file holds them (`providers.schema_adapters`): float16 `A`, and
    `B` with its scale and `strength` applied."""
    arrays = {}
    for name, a in adapters.items():
        arrays[f"{name}.A"] = a.A.detach().numpy().astype(np.float16)
        arrays[f"{name}.B"] = (a.B.detach() * a.scale * strength).numpy().astype(np.float16)
    return arrays


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=REPO / ".schemarag/train-embedder")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hard", type=int, default=0, help="hard negatives per question (0 or 1)")
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument(
        "--strength",
        type=float,
        default=0.5,
        help="the share of the trained update written (1: all of it; 0.5, shipped, was better "
        "on the fusion's held-out train questions)",
    )
    parser.add_argument(
        "--synthetic",
        type=Path,
        help="the questions.jsonl of a built index's snapshot (the Spider pool): also pull "
        "each question towards its database's synthetic questions, away from the nearest "
        "synthetic question of another database",
    )
    parser.add_argument(
        "--bird",
        action="store_true",
        help="also BIRD train's questions from item 4,400 on (never the measured 2,000 or the "
        "fusion's sets), minus the held-out databases",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)

    rows, docs = pairs(args.work, bird=args.bird)
    log.info("%d training questions, %d table documents", len(rows), len(docs))

    import sentence_transformers

    model = sentence_transformers.SentenceTransformer(str(default_minilm_path()), device="cpu")
    model.max_seq_length = args.max_tokens
    synthetic = synthetic_pairs(args.synthetic, rows, model) if args.synthetic else None
    bert = model[0].auto_model
    for p in model.parameters():
        p.requires_grad_(False)
    adapters: dict[str, LoRALinear] = {}
    for k, layer in enumerate(bert.encoder.layer):
        for target in TARGETS:
            parent, _, leaf = target.rpartition(".")
            wrapped = LoRALinear(layer.get_submodule(target), args.rank)
            setattr(layer.get_submodule(parent), leaf, wrapped)
            adapters[f"layer.{k}.{target}"] = wrapped
    params = [p for a in adapters.values() for p in (a.A, a.B)]
    log.info("%d adapters, %d parameters", len(adapters), sum(p.numel() for p in params))
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    steps = math.ceil(len(rows) * args.epochs / args.batch)
    schedule = warmup_then_decay(optimizer, steps)

    def embed(texts: list[str]) -> torch.Tensor:
        features = model.tokenize(texts)
        return model(features)["sentence_embedding"]

    model.train()
    order: list[int] = []
    started = time.perf_counter()
    for step in range(steps):
        if len(order) < args.batch:
            fresh = list(range(len(rows)))
            random.shuffle(fresh)
            order.extend(fresh)
        batch_ids = [order.pop() for _ in range(args.batch)]
        batch = [rows[i] for i in batch_ids]
        positives = [random.choice(gold) for _, _, gold, _ in batch]
        texts = list(
            dict.fromkeys(
                [docs[k] for k in positives] + ([hard for *_, hard in batch] if args.hard else [])
            )
        )
        column = {text: j for j, text in enumerate(texts)}
        with torch.autocast("cpu", dtype=torch.bfloat16):
            q = embed([question for question, *_ in batch])
            d = embed(texts)
        logits = SCALE * q.float() @ d.float().T
        # every gold table of the question but the one drawn is no negative
        mask = torch.zeros_like(logits, dtype=torch.bool)
        for i, (_, _, gold, _) in enumerate(batch):
            for key in gold:
                if key != positives[i] and docs[key] in column:
                    mask[i, column[docs[key]]] = True
        logits = logits.masked_fill(mask, -1e4)
        target = torch.tensor([column[docs[k]] for k in positives])
        loss = torch.nn.functional.cross_entropy(logits, target)
        if synthetic is not None:
            loss = loss + synthetic_loss(synthetic, batch_ids, embed, q)
        loss.backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        if step % 20 == 0 or step == steps - 1:
            log.info(
                "step %d/%d loss %.3f (%.0fs)",
                step + 1,
                steps,
                loss.item(),
                time.perf_counter() - started,
            )
    arrays = adapter_arrays(adapters, args.strength)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **arrays)
    log.info("wrote %s", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
