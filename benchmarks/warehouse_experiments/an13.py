import numpy as np, os
for npz in ['/work/exp/s2.npz','/work/exp/sp.npz']:
  os.environ['NPZ']=npz
  exec(open('/work/exp/an.py').read().split("print('fused dev'")[0])
  SH=np.zeros((len(Sy),X.shape[1]),bool); SH[np.arange(len(Sy)),Sy]=True
  for n0 in [1,8]:
    ln=np.log(np.maximum(ntab,n0))
    print(npz.split('/')[-1], 'SYNTH', n0, ' | '.join(f'c={c}: '+ev(SX[:,:,F]-c*ln,Sy,SH)[:8] for c in [0,0.02,0.04,0.06,0.08,0.1]))
