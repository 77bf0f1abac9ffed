import numpy as np, os
npz=os.environ.get('NPZ','/work/exp/s2.npz'); os.environ['NPZ']=npz
exec(open('/work/exp/an.py').read().split("print('fused dev'")[0])
E=np.load(npz.replace('.npz','_dbdense.npz'))
SH=np.zeros((len(Sy),X.shape[1]),bool); SH[np.arange(len(Sy)),Sy]=True
ln=np.log(ntab)
def shift(C):
  med=np.median(C,1,keepdims=True); top=C.max(1,keepdims=True)
  return np.clip((C-med)/np.maximum(top-med,1e-9),0,None)
for kind in ['tables','cols']:
  print(kind,'alone dev',ev(E[kind],y,H),'syn',ev(E['s_'+kind],Sy,SH))
  for w in [0.1,0.2,0.3,0.5]:
    for c in [0,0.02]:
      print(f' w={w} c={c} dev', ev(X[:,:,F]+w*shift(E[kind])-c*ln,y,H), 'syn', ev(SX[:,:,F]+w*shift(E['s_'+kind])-c*ln,Sy,SH))
