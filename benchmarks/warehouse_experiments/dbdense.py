import numpy as np, sys, json
from pathlib import Path
from schemarag.settings import Settings
from schemarag.cli.retrieve import make_query_embedder
from retriever.text import words
from retriever import load_files
from retriever.knowledge import KnowledgeBase
from schemagraph.model import fold
store, npz, out = sys.argv[1], sys.argv[2], sys.argv[3]
d=np.load(npz,allow_pickle=True)
emb=make_query_embedder(Settings.from_env(), "minilm+schema")
kb=KnowledgeBase.open(store, embedder_name=emb.name)
entries,_=kb.table_entries()
by={}
for e in entries: by.setdefault(fold(e.db_id),[]).append(e)
ids=[fold(x) for x in d['db_ids']]
def summ(kind):
  out=[]
  for db in ids:
    es=by[db]
    name=' '.join(words(es[0].db_id))
    tabs=', '.join(' '.join(words(e.table.split('__')[-1] if '__' in e.table else e.table)) for e in es)
    if kind=='tables': out.append(f"{name}: {tabs}")
    else:
      cols=[]
      for e in es:
        for c in e.columns:
          w=' '.join(words(c))
          if w not in cols: cols.append(w)
      out.append(f"{name}: {tabs}. columns: {', '.join(cols[:60])}")
  return out
Q=np.asarray(emb.embed_documents(list(d['qs'])),np.float32)
SQ=np.asarray(emb.embed_documents(list(d['sq'])),np.float32)
res={}
for kind in ['tables','cols']:
  V=np.asarray(emb.embed_documents(summ(kind)),np.float32)
  res[kind]=Q@V.T; res['s_'+kind]=SQ@V.T
np.savez(out,**res)
print(summ('tables')[:3])
