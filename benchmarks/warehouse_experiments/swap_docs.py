import numpy as np
exec(open('cmp_docs.py').read().split('names=A[3]')[0])
W=np.array([0.07,0.33,0.21,0,0.27,0.44,0.3])
def fuse(X,ntab,w=W): return X[:,:,:7]@w - 0.06*np.log(np.maximum(ntab,12)/12)
XA,XB=A[0],B[0]
print('recon names',ev(fuse(XA,A[4]),A[1],A[2]),'docs',ev(fuse(XB,B[4]),B[1],B[2]))
names=A[3]
for i in range(7):
    X=XB.copy(); X[:,:,i]=XA[:,:,i]
    print('docs with names',names[i], ev(fuse(X,B[4]),B[1],B[2]))
    X=XA.copy(); X[:,:,i]=XB[:,:,i]
    print('   names with docs',names[i], ev(fuse(X,A[4]),A[1],A[2]))
