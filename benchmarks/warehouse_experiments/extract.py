"""Per-database signal matrices for dev questions and sampled synthetic questions."""
import json, sys, random, time
import numpy as np
from pathlib import Path
from schemarag.settings import Settings
from schemarag.cli.retrieve import make_query_embedder
from retriever import Retriever, load_files
from retriever.fusion import scaled_tables, database_signals, DATABASE_SIGNALS, fuse
from retriever.text import normalize_question
from schemagraph.model import fold
from schemagraph.containment import table_key

store, tables, questions, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
n_syn = int(sys.argv[5]) if len(sys.argv) > 5 else 1500
if str(tables) in ("spider-dev","spider-syn","spider-dk","bird"):
    from retriever import load_dataset
    ds = load_dataset(str(tables), Path("/work/shared/data/spider"))
else:
    ds = load_files(tables, questions, name="dev")
emb = make_query_embedder(Settings.from_env(), "minilm+schema")
emb.embed_query("warm")
r = Retriever.open(store, emb)
db_ids = r.db_ids
pos = {fold(d): i for i, d in enumerate(db_ids)}
keys = {fold(db.id): {table_key(t.name) for t in db.tables} for db in ds.catalog}

def feats(q):
    s, hits, _ = r.signals(q)
    dense = s.table["dense"]; med = float(np.median(dense))
    sc = scaled_tables(s, len(r.entries), med)
    ds_ = database_signals(s, sc, r._db_of, len(db_ids), list(DATABASE_SIGNALS))
    db_score, _, _ = fuse(s, r._db_of, len(db_ids), r.weights, sc)
    raw_dense = np.full(len(db_ids), -1.0); np.maximum.at(raw_dense, r._db_of, dense)
    sem_raw = s.database.get("semantic", np.zeros(len(db_ids)))
    M = np.stack([ds_[n] for n in DATABASE_SIGNALS] + [raw_dense, sem_raw, db_score], 1)
    return M
names = list(DATABASE_SIGNALS) + ["raw_dense", "sem_raw", "fused"]
X, y, holds, qs = [], [], [], []
t = time.time()
for q in ds.questions:
    X.append(feats(q.question)); y.append(pos[fold(q.db_id)])
    gold = [t_ for _, t_ in q.gold]
    holds.append([all(table_key(g) in keys[fold(d)] for g in gold) or i == pos[fold(q.db_id)] for i, d in enumerate(db_ids)])
    qs.append(q.question)
print("dev", len(X), time.time() - t, flush=True)
# synthetic sample: stratified per db
recs = r.kb._memory._records
rng = random.Random(7)
by_db = {}
for rec in recs:
    by_db.setdefault(fold(rec[0]), []).append(rec)
per = max(1, n_syn // len(by_db))
sample = [rec for d, rs in sorted(by_db.items()) for rec in rng.sample(rs, min(per, len(rs)))]
SX, Sy = [], []
for rec in sample:
    r.masked = frozenset({normalize_question(rec[2])})
    SX.append(feats(rec[2])); Sy.append(pos[fold(rec[0])])
print("syn", len(SX), time.time() - t, flush=True)
ntab = np.array([len(m) for m in r._db_members])
np.savez(out, X=np.array(X), y=np.array(y), holds=np.array(holds), SX=np.array(SX), Sy=np.array(Sy), names=names, db_ids=db_ids, ntab=ntab, qs=qs, sq=[rec[2] for rec in sample])
