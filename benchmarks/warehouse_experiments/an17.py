import numpy as np, os
npz=os.environ.get('NPZ','/work/exp/s2.npz')
exec(open('/work/exp/an.py').read().split("print('fused dev'")[0])
K=np.load(npz.replace('.npz','_topk.npz'))
SH=np.zeros((len(Sy),X.shape[1]),bool); SH[np.arange(len(Sy)),Sy]=True
ln=np.log(np.maximum(ntab,8)/8)
sem=names.index('semantic')
def scl(A): m=A.max(-1,keepdims=True); return A/np.maximum(m,1e-12)
for a,k in enumerate([1,2,3,5]):
  for mode in ['add','replace']:
    for w in [0.2,0.44]:
      def sc(Z,C):
        base=Z[:,:,F]-0.06*ln
        if mode=='replace': base=base-0.44*Z[:,:,sem]
        return base+w*scl(C[:,a])
      print(k,mode,w,'dev',ev(sc(X,K['dev']),y,H),'syn',ev(sc(SX,K['syn']),Sy,SH))
