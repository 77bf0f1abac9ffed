"""Per-database second-best table signals for dev questions."""
import json, sys, time
import numpy as np
from pathlib import Path
from schemarag.settings import Settings
from schemarag.cli.retrieve import make_query_embedder
from retriever import Retriever
from evaluation import load_files
from retriever.fusion import scaled_tables, fuse
from schemagraph.model import fold

store, tables, questions, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
if str(tables) in ("spider-dev","spider-syn","spider-dk","bird"):
    from evaluation import load_dataset
    ds = load_dataset(str(tables), Path("/work/shared/data/spider"))
else:
    ds = load_files([Path(t) for t in str(tables).split(",")], questions, name="dev")
emb = make_query_embedder(Settings.from_env(), "minilm+schema")
r = Retriever.open(store, emb)
db_ids = r.db_ids; n = len(db_ids); db_of = r._db_of
pos = {fold(d): i for i, d in enumerate(db_ids)}
order = np.argsort(db_of, kind="stable")
def kth(vals, k):
    # k-th best per db
    out = np.zeros(n)
    srt = vals[order]; dbs = db_of[order]
    bounds = np.flatnonzero(np.diff(np.r_[-1, dbs, n+1]))
    for a, b in zip(bounds[:-1], bounds[1:]):
        seg = np.sort(srt[a:b])[::-1]
        if len(seg) >= k: out[dbs[a]] = seg[k-1]
    return out
X, y = [], []
for q in ds.questions:
    s, hits, _ = r.signals(q.question)
    sc = scaled_tables(s, len(r.entries), float(np.median(s.table["dense"])))
    db_score, tscore, _ = fuse(s, db_of, n, r.config.weights, sc)
    feats = [db_score]
    for name in ("dense", "bm25", "semantic", "values"):
        feats += [kth(sc[name], 1), kth(sc[name], 2), kth(sc[name], 3)]
    feats += [kth(tscore, 1), kth(tscore, 2), kth(tscore, 3)]
    X.append(np.stack(feats, 1)); y.append(pos[fold(q.db_id)])
ntab = np.bincount(db_of, minlength=n)
np.savez(out, X=np.array(X), y=np.array(y), ntab=ntab)
print("done", len(X))
