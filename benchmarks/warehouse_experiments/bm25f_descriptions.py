"""BM25F test: descriptions as a field weighted w. usage: bm25f.py STORE tables questions out.npz [dataset]"""
import sys, collections, numpy as np
from pathlib import Path
from rank_bm25 import BM25Okapi
from schemarag.settings import Settings
from schemarag.cli.retrieve import make_query_embedder
from retriever import Retriever
from evaluation import load_files
from retriever.fusion import fuse
from retriever.text import terms, joined_terms
from schemagraph.documentation import summary
from schemagraph.name_words import spaced_words
from schemagraph.model import fold
store, tables, questions, out = sys.argv[1:5]
if tables in ("spider-dev","spider-syn","spider-dk","bird"):
    from evaluation import load_dataset
    ds = load_dataset(tables, Path("/work/shared/data/spider"))
else:
    ds = load_files([Path(t) for t in tables.split(",")], Path(questions), name="dev")
emb = make_query_embedder(Settings.from_env(), "minilm+schema")
r = Retriever.open(store, emb)
E = r.entries
heads, notes = [], []
for e in E:
    described = [(e.table, e.description)] + list(e.descriptions.items())
    n = ". ".join(f"{spaced_words(name)}: {summary(note, 60)}" for name, note in described if note)
    nt = collections.Counter(terms(n)) if n else collections.Counter()
    full = collections.Counter(terms(e.lexical_text))
    heads.append(full - nt); notes.append(nt & full)
class BM25F:
    def __init__(self, w, k1=1.5, b=0.75):
        corpus = [list((h + nn).elements()) or ["_"] for h, nn in zip(heads, notes)]
        base = BM25Okapi(corpus)
        L = np.array([sum(h.values()) + w * sum(nn.values()) for h, nn in zip(heads, notes)])
        avg = L.mean()
        self.post = {}
        docs = collections.defaultdict(list)
        for i, (h, nn) in enumerate(zip(heads, notes)):
            for t in set(h) | set(nn): docs[t].append(i)
        for t, ix in docs.items():
            ix = np.array(ix); tf = np.array([heads[i][t] + w * notes[i][t] for i in ix])
            c = base.idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * L[ix] / avg))
            self.post[t] = (ix, c)
        self.n = len(E)
    def scores(self, q):
        s = np.zeros(self.n)
        for t in [*terms(q), *joined_terms(q, self.post)]:
            p = self.post.get(t)
            if p is not None: s[p[0]] += p[1]
        return s
pos = {fold(d): i for i, d in enumerate(r.db_ids)}
y = np.array([pos[fold(q.db_id)] for q in ds.questions])
res = {}
for w in [1.0, 0.5, 0.3, 0.15, 0.0]:
    r.bm25 = BM25F(w)
    S = []
    for q in ds.questions:
        s, hits, _ = r.signals(q.question)
        db, _, _ = fuse(s, r._db_of, len(r.db_ids), r.config.weights)
        S.append(db)
    S = np.array(S); res[w] = S
    print(w, "R1", round((S.argmax(1) == y).mean() * 100, 2), flush=True)
np.savez(out, y=y, **{f"w{k}": v for k, v in res.items()})
