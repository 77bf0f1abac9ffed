import numpy as np,sys
d=np.load(sys.argv[1]); X,y=d['X'],d['y']
H=np.load(sys.argv[2])['holds'] if len(sys.argv)>2 else None
def ev(S):
    top=S.argmax(1); r1=(top==y).mean()*100
    h=H[np.arange(len(y)),top].mean()*100 if H is not None else 0
    return f"{r1:.1f}/{h:.1f}"
base=X[:,:,0]
print('base',ev(base))
names=['dense','bm25','semantic','values','table']
for i,nm in enumerate(names):
    c1,c2,c3=1+3*i,2+3*i,3+3*i
    row=[]
    for w in [0.05,0.1,0.2,0.3]:
        row.append(f"w{w}: 2nd {ev(base+w*X[:,:,c2])} 2+3 {ev(base+w*(X[:,:,c2]+X[:,:,c3])/2)}")
    print(nm,' | '.join(row))
