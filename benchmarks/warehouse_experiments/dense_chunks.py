"""Wide tables' dense signal as the best of their document and chunks of their columns."""
import sys, numpy as np, json
from pathlib import Path
from schemarag.settings import Settings
from schemarag.cli.retrieve import make_query_embedder
from retriever import Retriever
from evaluation import load_files
from retriever.fusion import fuse
from schemagraph.model import fold
store, tables, questions = sys.argv[1:4]
ds = load_files([Path(tables)], Path(questions), name="dev")
emb = make_query_embedder(Settings.from_env(), "minilm+schema")
r = Retriever.open(store, emb)
E = r.entries
CH = int(sys.argv[4]) if len(sys.argv) > 4 else 30
owner, texts = [], []
for i, e in enumerate(E):
    head, _, rest = e.text.partition(": ")
    cols = rest.split(", ")
    if len(cols) <= CH: continue
    for k in range(0, len(cols), CH):
        owner.append(i); texts.append(f"{head}: {', '.join(cols[k:k+CH])}")
print("chunks", len(texts), "tables", len(set(owner)), flush=True)
V = np.asarray(emb.embed_documents(texts), np.float32)
owner = np.array(owner)
pos = {fold(d): i for i, d in enumerate(r.db_ids)}
y = np.array([pos[fold(q.db_id)] for q in ds.questions])
H = np.load('/work/exp/s2n.npz')['holds']
orig = r.signals
def patched(q, *a, **k):
    s, hits, x = orig(q, *a, **k)
    c = V @ s.vector
    d = s.table["dense"]
    np.maximum.at(d, owner, c.astype(np.float64))
    return s, hits, x
for mode in ["base", "chunks"]:
    r.signals = orig if mode == "base" else patched
    S = []
    for q in ds.questions:
        s, hits, _ = r.signals(q.question)
        db, _, _ = fuse(s, r._db_of, len(r.db_ids), r.config.weights)
        S.append(db)
    S = np.array(S); top = S.argmax(1)
    print(mode, "R1", round((top == y).mean()*100, 1), "holds", round(H[np.arange(len(y)), top].mean()*100, 1), flush=True)
