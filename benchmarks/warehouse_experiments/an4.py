import numpy as np
from scipy.optimize import minimize
exec(open('/work/exp/an.py').read().split("print('fused dev'")[0])
related=np.load('/work/exp/related.npy')
SH=np.zeros((len(Sy),X.shape[1]),bool); SH[np.arange(len(Sy)),Sy]=True
nd=X.shape[1]
def bgall(SX,Sy):
  mu=np.zeros((nd,SX.shape[2]))
  for j in range(nd):
    m=~related[j,Sy]; mu[j]=SX[m,j,:].mean(0)
  return mu
def feat(Z,mu,kind):
  sig=Z[:,:,:7]
  parts=[sig]
  if 'bg' in kind: parts.append(sig-mu[None,:,:7])
  if 'fbg' in kind: parts.append((Z[:,:,F]-mu[None,:,F])[:,:,None])
  if 'nt' in kind: parts.append(np.broadcast_to(np.log(ntab)[None,:,None],(len(Z),nd,1)))
  if 'dense' in kind: parts.append(Z[:,:,7:8])
  return np.concatenate(parts,2)
def fit(Fe,yy,l2=1e-3):
  n,m,k=Fe.shape
  def f(w):
    s=Fe@w; s=s-s.max(1,keepdims=True); p=np.exp(s); Z=p.sum(1)
    ll=np.log(Z)-s[np.arange(n),yy]
    g=(Fe*(p/Z[:,None])[:,:,None]).sum(1)-Fe[np.arange(n),yy]
    return ll.mean()+l2*w@w, g.mean(0)+2*l2*w
  return minimize(f,np.zeros(k),jac=True,method='L-BFGS-B').x
half=np.arange(len(Sy))%2==0
for kind in ['','bg','fbg','bg nt','fbg nt','bg fbg nt','bg dense nt']:
  mu=bgall(SX[half],Sy[half])
  w=fit(feat(SX[~half],mu,kind),Sy[~half])
  mu_all=bgall(SX,Sy)
  print(f"{kind:12s}", 'dev', ev(feat(X,mu_all,kind)@w,y,H), np.round(w,2))
