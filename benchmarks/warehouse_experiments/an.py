import numpy as np
d=np.load(__import__('os').environ.get('NPZ','/work/exp/s2.npz'),allow_pickle=True)
X,y,H,SX,Sy,names,ntab=d['X'],d['y'],d['holds'],d['SX'],d['Sy'],list(d['names']),d['ntab']
F=names.index('fused')
def ev(S,y,H):
    top=S.argmax(1); r1=(top==y).mean()*100; h=H[np.arange(len(y)),top].mean()*100
    r5=np.mean([y[i] in np.argsort(-S[i])[:5] for i in range(len(y))])*100
    return f"R1 {r1:.1f} holds {h:.1f} R5 {r5:.1f}"
print('fused dev', ev(X[:,:,F],y,H))
SH=np.zeros((len(Sy),X.shape[1]),bool); SH[np.arange(len(Sy)),Sy]=True
print('fused syn', ev(SX[:,:,F],Sy,SH))
for i,n in enumerate(names): print(n, 'dev',ev(X[:,:,i],y,H),'| syn',ev(SX[:,:,i],Sy,SH))
# hubness: background mean of fused for db over synthetic questions of other dbs
for sig in [F]+list(range(7)):
  bg=np.zeros(X.shape[1])
  for j in range(X.shape[1]):
    m=Sy!=j; bg[j]=SX[m,j,sig].mean()
  for b in [0.25,0.5,1.0]:
    if sig==F: print('hub fused b',b, ev(X[:,:,F]-b*bg,y,H), '| syn', ev(SX[:,:,F]-b*bg,Sy,SH))
  if sig!=F:
    W=[0.07,0.33,0.21,0,0.27,0.44,0.3][sig]
    print('hub on',names[sig], ev(X[:,:,F]-W*bg,y,H), '| syn', ev(SX[:,:,F]-W*bg,Sy,SH))
