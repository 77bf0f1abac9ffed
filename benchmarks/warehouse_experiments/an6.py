import numpy as np, os
for npz in ['/work/exp/s2.npz','/work/exp/sp.npz']:
  os.environ['NPZ']=npz
  exec(open('/work/exp/an.py').read().split("print('fused dev'")[0])
  SH=np.zeros((len(Sy),X.shape[1]),bool); SH[np.arange(len(Sy)),Sy]=True
  nd=X.shape[1]; ln=np.log(ntab)
  half=np.arange(len(Sy))%2==0
  mu=np.array([SX[half&(Sy!=j),j,F].mean() for j in range(nd)])
  print(npz, 'ntab range', ntab.min(), ntab.max())
  print(' base      dev', ev(X[:,:,F],y,H), 'syn-odd', ev(SX[~half][:,:,F],Sy[~half],SH[~half]))
  for c in [0.02,0.04,0.06]:
    print(' log',c,' dev', ev(X[:,:,F]-c*ln,y,H), 'syn-odd', ev(SX[~half][:,:,F]-c*ln,Sy[~half],SH[~half]))
  for b in [0.25,0.5,0.75,1.0]:
    print(' bg',b,' dev', ev(X[:,:,F]-b*mu,y,H), 'syn-odd', ev(SX[~half][:,:,F]-b*mu,Sy[~half],SH[~half]))
