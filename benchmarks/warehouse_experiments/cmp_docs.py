import numpy as np
def load(p):
    d=np.load(p,allow_pickle=True); return d['X'],d['y'],d['holds'],list(d['names']),d['ntab']
def ev(S,y,H):
    top=S.argmax(1); r1=(top==y).mean()*100; h=H[np.arange(len(y)),top].mean()*100
    return f"{r1:.1f}/{h:.1f}"
A=load('/work/exp/s2n.npz'); B=load('/work/exp/s2docs.npz')
names=A[3]
for i,n in enumerate(names): print(f"{n:12s} names {ev(A[0][:,:,i],A[1],A[2])}  docs {ev(B[0][:,:,i],B[1],B[2])}")
