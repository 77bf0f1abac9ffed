import numpy as np, json
exec(open('/work/exp/an.py').read().split("print('fused dev'")[0])
from retriever import load_files
from schemagraph.containment import find_relations
from schemagraph.model import fold
from pathlib import Path
ds=load_files(Path('/work/shared/data/spider2-lite/tables.json'),Path('/work/shared/data/spider2-lite/questions_dev.json'))
rel=find_relations(ds.catalog)
ids=[fold(x) for x in d['db_ids']]; P={x:i for i,x in enumerate(ids)}
related=np.eye(len(ids),dtype=bool)
for a,rs in rel.related.items():
  for b in rs: related[P[a],P[b]]=related[P[b],P[a]]=True
print('related pairs',related.sum()-len(ids))
SH=np.zeros((len(Sy),X.shape[1]),bool); SH[np.arange(len(Sy)),Sy]=True
nd=X.shape[1]
def bg(SX,Sy,sig,excl=True):
  mu=np.zeros(nd)
  for j in range(nd):
    m=~related[j,Sy] if excl else Sy!=j; mu[j]=SX[m,j,sig].mean()
  return mu
ev_idx=np.arange(len(Sy))%2==0
for excl in [False,True]:
  mu2=bg(SX[ev_idx],Sy[ev_idx],F,excl)
  for b in [0.5,0.75,1.0,1.5]:
    print('excl',excl,'b',b, 'syn-odd', ev(SX[~ev_idx][:,:,F]-b*mu2,Sy[~ev_idx],SH[~ev_idx]), 'dev', ev(X[:,:,F]-b*mu2,y,H))
np.save('/work/exp/related.npy',related)
