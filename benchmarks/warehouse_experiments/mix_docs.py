import numpy as np
exec(open('swap.py').read().split("print('recon")[0])
XA,XB=A[0],B[0]
for a in [0,0.25,0.5,0.75,1]:
    row=[]
    for sigs in [[1],[2,6],[1,2,6],[0,1,2,4,5,6]]:
        X=XB.copy()
        for i in sigs: X[:,:,i]=(1-a)*XA[:,:,i]+a*XB[:,:,i]
        row.append(f"{sigs}:{ev(fuse(X,B[4]),B[1],B[2])}")
    print('alpha',a,' '.join(row))
