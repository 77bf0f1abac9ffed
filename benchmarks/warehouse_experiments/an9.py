import numpy as np, os
for npz in ['/work/exp/s2.npz','/work/exp/sp.npz','/work/exp/syn.npz','/work/exp/dk.npz']:
  if not os.path.exists(npz): continue
  os.environ['NPZ']=npz
  exec(open('/work/exp/an.py').read().split("print('fused dev'")[0])
  ln=np.log(ntab)
  print(npz.split('/')[-1], ' | '.join(f'c={c}: '+ev(X[:,:,F]-c*ln,y,H) for c in [0,0.01,0.02,0.03,0.04]))
