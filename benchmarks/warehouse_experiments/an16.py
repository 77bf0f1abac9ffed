import numpy as np, os, json, math, collections
exec(open('/work/exp/an.py').read().split("print('fused dev'")[0])
from retriever.text import words, stem, STOPWORDS
ids=list(d['db_ids'])
T={e['db_id']:e for e in json.load(open('/work/shared/data/spider2-lite/tables.json'))}
def idwords(db):
  ws=set(words(db))
  for t in T[db]['table_names_original']:
    if '__' in t: ws|=set(words(t.split('__')[0]))
  return {stem(w) for w in ws if w not in STOPWORDS and len(w)>2 and not w.isdigit()}
IW=[idwords(db) for db in ids]
df=collections.Counter(w for s in IW for w in s)
N=len(ids)
idf={w:math.log(N/df[w]) for w in df}
def feat(qs):
  out=np.zeros((len(qs),N))
  for i,q in enumerate(qs):
    qw={stem(w) for w in words(q)}
    for j,s in enumerate(IW):
      out[i,j]=sum(idf[w] for w in s&qw)
  return out
fd=feat(d['qs']); fs=feat(d['sq'])
SH=np.zeros((len(Sy),X.shape[1]),bool); SH[np.arange(len(Sy)),Sy]=True
ln=np.log(np.maximum(ntab,8)/8)
print('gold mentions', (fd[np.arange(len(y)),y]>0).mean())
for w in [0,0.02,0.05,0.1]:
  def sc(Z,f): 
    m=f.max(1,keepdims=True); return Z[:,:,F]-0.06*ln+w*f/np.maximum(m,1e-9)
  print(w,'dev',ev(sc(X,fd),y,H),'syn',ev(sc(SX,fs),Sy,SH))
print([ (ids[j], sorted(IW[j])) for j in range(0,160,20)])
