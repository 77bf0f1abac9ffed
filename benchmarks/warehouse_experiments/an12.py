import numpy as np, os
for npz in ['/work/exp/s2.npz','/work/exp/sp.npz','/work/exp/syn.npz','/work/exp/dk.npz']:
  if not os.path.exists(npz): continue
  os.environ['NPZ']=npz
  exec(open('/work/exp/an.py').read().split("print('fused dev'")[0])
  for n0 in [8,16,32]:
    ln=np.log(np.maximum(ntab,n0))
    print(npz.split('/')[-1], n0, ' | '.join(f'c={c}: '+ev(X[:,:,F]-c*ln,y,H)[:-9] for c in [0.02,0.03,0.04,0.06]))
