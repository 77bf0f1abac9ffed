"""BM25 scaled within each documentation regime (described tables, undescribed tables)."""
import sys, numpy as np
from pathlib import Path
from schemarag.settings import Settings
from schemarag.cli.retrieve import make_query_embedder
from retriever import Retriever
from evaluation import load_files
from retriever.fusion import fuse
from schemagraph.model import fold
store, tables, questions = sys.argv[1:4]
if tables in ("spider-dev","spider-syn","spider-dk","bird"):
    from evaluation import load_dataset
    ds = load_dataset(tables, Path("/work/shared/data/spider"))
else:
    ds = load_files([Path(t) for t in tables.split(",")], Path(questions), name="dev")
emb = make_query_embedder(Settings.from_env(), "minilm+schema")
r = Retriever.open(store, emb)
desc = np.array([bool(e.description or e.descriptions) for e in r.entries])
print("described tables", desc.sum(), "of", len(desc), flush=True)
# database-level regime: a database is described when any of its tables is
dbdesc = np.zeros(len(r.db_ids), bool); np.logical_or.at(dbdesc, r._db_of, desc)
tdesc = dbdesc[r._db_of]
pos = {fold(d): i for i, d in enumerate(r.db_ids)}
y = np.array([pos[fold(q.db_id)] for q in ds.questions])
orig = r.signals
def make(keys, level):
    D = tdesc if level == "db" else desc
    def patched(q, *a, **k):
        s, hits, x = orig(q, *a, **k)
        for key in keys:
            v = s.table[key]
            a_, b_ = v[D].max(initial=0), v[~D].max(initial=0)
            if a_ > 0 and b_ > 0:
                v = v.copy(); v[~D] *= a_ / b_; s.table[key] = v
        return s, hits, x
    return patched
H = None
try:
    H = np.load(sys.argv[4])['holds']
except Exception: pass
for name, fn in [("base", orig), ("bm25 by db regime", make(["bm25"], "db")), ("bm25 by table regime", make(["bm25"], "t")), ("bm25+values by db regime", make(["bm25", "values"], "db"))]:
    r.signals = fn
    S = []
    for q in ds.questions:
        s, hits, _ = r.signals(q.question)
        db, _, _ = fuse(s, r._db_of, len(r.db_ids), r.config.weights)
        S.append(db)
    S = np.array(S); top = S.argmax(1)
    h = f" holds {H[np.arange(len(y)), top].mean()*100:.1f}" if H is not None else ""
    print(name, "R1", round((top == y).mean()*100, 2), h, flush=True)
