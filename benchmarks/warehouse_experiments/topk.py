import numpy as np, sys, time
from schemarag.settings import Settings
from schemarag.cli.retrieve import make_query_embedder
from retriever import Retriever
from retriever.semantic import _max_by, _scatter
store, npz, out = sys.argv[1], sys.argv[2], sys.argv[3]
d=np.load(npz,allow_pickle=True)
emb=make_query_embedder(Settings.from_env(), "minilm+schema")
r=Retriever.open(store, emb)
L=r.semantic; nd=len(r.db_ids); nt=len(r.entries); db_of=r._db_of
KS=[1,2,3,5]
def cov(q):
  p=L.start(q); found=p.units
  res=np.zeros((len(KS),nd))
  if not found: return res
  links={found[i]:L._memo[found[i]] for i in range(len(found)) if i not in p.new}
  links.update(L._new_links(p))
  counts=np.array([len(links[t][0]) for t in found]); idf=np.log1p(nt/np.maximum(counts,1))
  rows=np.repeat(np.arange(len(found)),counts)
  tables=np.concatenate([links[t][0] for t in found]); values=np.concatenate([links[t][1] for t in found])
  ts=_scatter(tables, idf[rows]*values, nt)
  order=np.lexsort((-ts, db_of)); rank=np.empty(nt,int)
  starts=np.flatnonzero(np.diff(db_of[order],prepend=-1))
  pos=np.arange(nt)-np.repeat(starts,np.diff(np.append(starts,nt)))
  rank[order]=pos
  for a,k in enumerate(KS):
    m=rank[tables]<k
    if not m.any(): continue
    ud,best=_max_by(rows[m]*nd+db_of[tables[m]], values[m])
    rw,db=np.divmod(ud,nd); res[a]=_scatter(db, idf[rw]*best, nd)
  return res
t=time.time()
A=np.array([cov(q) for q in d['qs']]); B=np.array([cov(q) for q in d['sq']])
np.savez(out,dev=A,syn=B); print(time.time()-t)
