"""Long questions embedded condensed: variants of what the dense signals read."""
import sys, re, numpy as np
from pathlib import Path
from schemarag.settings import Settings
from schemarag.cli.retrieve import make_query_embedder
from retriever import Retriever
from evaluation import load_files
from retriever.fusion import fuse
from retriever.text import STOPWORDS
from schemagraph.model import fold
store, tables, questions = sys.argv[1:4]
ds = load_files([Path(tables)], Path(questions), name="dev")
emb = make_query_embedder(Settings.from_env(), "minilm+schema")
r = Retriever.open(store, emb)
H = np.load('/work/exp/s2n.npz')['holds']
pos = {fold(d): i for i, d in enumerate(r.db_ids)}
y = np.array([pos[fold(q.db_id)] for q in ds.questions])
EXTRA = {"calculate","identify","determine","provide","report","ensure","show","return","please","including","include","considering","consider","based","using","only","then","those","which","what","whose","where","while","their","there","these","this","that","with","from","into","for","and","the","each","per","would","like","know","want","need","could","you","help","me","us","our","we","its"}
MONTHS = r"\b(january|february|march|april|may|june|july|august|september|october|november|december)\b"
def v_first(q):
    s = re.split(r"(?<=[.?!])\s+", q.strip())
    return s[0]
def v_content(q):
    w = re.findall(r"[A-Za-z_][A-Za-z0-9_'-]*", q)
    return " ".join(x for x in w if x.lower() not in STOPWORDS and x.lower() not in EXTRA)
def v_content_nodates(q):
    return re.sub(MONTHS, " ", v_content(q), flags=re.I)
orig = emb.embed_query
LONG = int(sys.argv[4]) if len(sys.argv) > 4 else 30
def run(fn):
    def eq(text):
        return orig(fn(text) if fn and len(text.split()) > LONG else text)
    r.embedder.embed_query = eq
    S = []
    for q in ds.questions:
        s, hits, _ = r.signals(q.question)
        db, _, _ = fuse(s, r._db_of, len(r.db_ids), r.config.weights)
        S.append(db)
    S = np.array(S); top = S.argmax(1)
    return f"R1 {(top == y).mean()*100:.1f} holds {H[np.arange(len(y)), top].mean()*100:.1f}"
print("embedder object", type(r.embedder).__name__, r.embedder is emb, flush=True)
for name, fn in [("base", None), ("first sentence", v_first), ("content words", v_content), ("content, no months", v_content_nodates)]:
    print(name, run(fn), flush=True)
