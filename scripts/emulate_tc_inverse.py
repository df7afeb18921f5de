# scripts/emulate_tc_inverse.py — a float64 emulation of triangular_inverse_tc (gdn_common.cuh): the
# lane-level fragment addressing of its two merge levels, checked against numpy's inverse (prints the
# max abs error; NaN would mean a product read an unwritten block).
import numpy as np
C=64; LDF=65
rng=np.random.default_rng(0)
k=rng.standard_normal((C,128)); k/=np.linalg.norm(k,axis=1,keepdims=True)
beta=rng.uniform(0,1,C); gam=np.cumsum(-rng.uniform(0,0.5,C))
A=k@k.T*np.exp(gam[:,None]-gam[None,:])
Lm=np.tril(beta[:,None]*A,-1)
lf=np.zeros(C*LDF); tf=np.full(C*LDF,np.nan)
for r in range(C):
    for s in range(C): lf[r*LDF+s]=Lm[r,s]
# phase 1 (exact diag-block inverses, zeros above within block)
for b in range(4):
    blk=np.linalg.inv(np.eye(16)+Lm[16*b:16*b+16,16*b:16*b+16])
    for r in range(16):
        for j in range(16): tf[(16*b+r)*LDF+16*b+j]=blk[r,j] if r>=j else 0.0
def mma_tile(Abuf,Aoff,Bbuf,Boff,k0,k1):
    # emulate warp_mma_3xtf32 per lane with the fragment layout, then mma semantics
    c=np.zeros((32,4))
    for kk in range(k0,k1,8):
        Am=np.full((16,8),np.nan); Bm=np.full((8,8),np.nan)
        for lane in range(32):
            g,t=lane>>2,lane&3
            av=[Abuf[Aoff+g*LDF+kk+t],Abuf[Aoff+(g+8)*LDF+kk+t],Abuf[Aoff+g*LDF+kk+t+4],Abuf[Aoff+(g+8)*LDF+kk+t+4]]
            bv=[Bbuf[Boff+(kk+t)*LDF+g],Bbuf[Boff+(kk+t+4)*LDF+g]]
            Am[g,t]=av[0];Am[g+8,t]=av[1];Am[g,t+4]=av[2];Am[g+8,t+4]=av[3]
            Bm[t,g]=bv[0];Bm[t+4,g]=bv[1]
        D=Am@Bm
        for lane in range(32):
            g,t=lane>>2,lane&3
            c[lane]+= [D[g,2*t],D[g,2*t+1],D[g+8,2*t],D[g+8,2*t+1]]
    return c
def store(buf,off,c,neg):
    s=-1 if neg else 1
    for lane in range(32):
        g,t=lane>>2,lane&3
        buf[off+g*LDF+2*t]=s*c[lane,0];buf[off+g*LDF+2*t+1]=s*c[lane,1]
        buf[off+(g+8)*LDF+2*t]=s*c[lane,2];buf[off+(g+8)*LDF+2*t+1]=s*c[lane,3]
# level 1
res=[]
for warp in range(4):
    p=(warp>>1)&1; nt=warp&1; o=32*p
    res.append((warp,mma_tile(lf,(o+16)*LDF+o,tf,o*LDF+o+8*nt,0,16)))
for warp,c in res:
    p=(warp>>1)&1; nt=warp&1; o=32*p
    store(tf,o*LDF+o+16+8*nt,c,False)
res=[]
for warp in range(4):
    p=(warp>>1)&1; nt=warp&1; o=32*p
    res.append((warp,mma_tile(tf,(o+16)*LDF+o+16,tf,o*LDF+o+16+8*nt,0,16)))
for warp,c in res:
    p=(warp>>1)&1; nt=warp&1; o=32*p
    store(tf,(o+16)*LDF+o+8*nt,c,True)
# level 2
res=[]
for warp in range(8):
    mi=warp>>2; nj=warp&3
    res.append((warp,mma_tile(lf,(32+16*mi)*LDF,tf,8*nj,16 if nj>=2 else 0,32)))
for warp,c in res:
    mi=warp>>2; nj=warp&3
    store(tf,16*mi*LDF+32+8*nj,c,False)
res=[]
for warp in range(8):
    mi=warp>>2; nj=warp&3
    res.append((warp,mma_tile(tf,(32+16*mi)*LDF+32,tf,32+8*nj,0,16 if mi==0 else 32)))
for warp,c in res:
    mi=warp>>2; nj=warp&3
    store(tf,(32+16*mi)*LDF+8*nj,c,True)
T=np.zeros((C,C))
for r in range(C):
    for s in range(C):
        if (r>>4)>=(s>>4): T[r,s]=tf[r*LDF+s]
ref=np.linalg.inv(np.eye(C)+Lm)
print("max abs err", np.nanmax(np.abs(T-ref)), "nan?", np.isnan(T).any(), "ref max", np.abs(ref).max())
