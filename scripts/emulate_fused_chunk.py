# scripts/emulate_fused_chunk.py — a float64 model of the fused prefill's chunk math as the wip kernel
# computes it (the row scales folded into T_k, T_v and O^T's columns; the state side transposed),
# checked against the token recurrence: prints the max abs errors of O and the final state.
# float64 model of the wip fused kernel's chunk math (folded scales, transposed state side)
# against the token recurrence (research note §1.2), several chunks, l2norm, GVA-free.
import numpy as np
rng=np.random.default_rng(3)
T,D,C=200,32,64
q=rng.standard_normal((T,D)); k=rng.standard_normal((T,D)); v=rng.standard_normal((T,D))
g=np.log(1/(1+np.exp(-rng.standard_normal(T)))); beta=rng.uniform(0,1,T); scale=D**-0.5
qn=q/np.sqrt((q*q).sum(1,keepdims=True)+1e-6); kn=k/np.sqrt((k*k).sum(1,keepdims=True)+1e-6)
# token recurrence, S [K][V]
S=0.3*rng.standard_normal((D,D)); S0=S.copy(); O=np.zeros((T,D))
for t in range(T):
    S*=np.exp(g[t]); u=beta[t]*(v[t]-S.T@kn[t]); S+=np.outer(kn[t],u); O[t]=scale*S.T@qn[t]
# kernel model: St = S^T [V][K]
St=S0.T.copy(); Ok=np.zeros((T,D))
for c0 in range(0,T,C):
    n=min(C,T-c0); sl=slice(c0,c0+n)
    Q=np.zeros((C,D));K=np.zeros((C,D));V=np.zeros((C,D));b=np.zeros(C);gl=np.zeros(C)
    Q[:n]=qn[sl];K[:n]=kn[sl];V[:n]=v[sl];b[:n]=beta[sl];gl[:n]=g[sl]
    gam=np.cumsum(gl); gc=gam[-1]
    Gam=np.exp(gam[:,None]-gam[None,:])
    L=np.tril(b[:,None]*(K@K.T)*Gam,-1); P=np.tril((Q@K.T)*Gam)
    Tm=np.linalg.inv(np.eye(C)+L)
    Tk=Tm*(b*np.exp(gam))[None,:]; Tv=Tm*b[None,:]
    Wn=-(Tk@K)            # [c][k]
    Kd=np.exp(gc-gam)[:,None]*K
    VnT=V.T@Tv.T + St@Wn.T   # [v][c]
    OT=(St@Q.T)*np.exp(gam)[None,:] + VnT@P.T
    St=np.exp(gc)*St + VnT@Kd
    Ok[sl]=scale*OT.T[:n]
print("O max err", np.abs(Ok-O).max(), "S max err", np.abs(St.T-S).max())
