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
St=S0.T.copy(); Ok=np.zeros((T,D)); ke_err=0.0
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
    # GDN_WS_KE's form of the same product: X^T = V^T + S^T (-Ke)^T, Vn^T = X^T T_v^T
    Ke=np.exp(gam)[:,None]*K
    ke_err=max(ke_err, np.abs((V.T + St@(-Ke).T)@Tv.T - VnT).max())
    # GDN_WS_R3's: the column scale on the product, K itself as the operand
    ke_err=max(ke_err, np.abs((V.T - (St@K.T)*np.exp(gam)[None,:])@Tv.T - VnT).max())
    OT=(St@Q.T)*np.exp(gam)[None,:] + VnT@P.T
    St=np.exp(gc)*St + VnT@Kd
    Ok[sl]=scale*OT.T[:n]
print("O max err", np.abs(Ok-O).max(), "S max err", np.abs(St.T-S).max())
print("GDN_WS_KE / GDN_WS_R3 forms: Vn^T max diff from the WY form", ke_err)
assert ke_err < 1e-12

# GDN_WS_KE's V^T fragments (ws::state_chunk_x): ldmatrix.x4.trans of the swizzled V panel
# ([c][64 values], 128-byte rows, 16-byte chunks XOR c % 8) must give thread (warp wi, lane) the
# accumulator entries vt[4 t + 2 hh + e] = V^T[16 wi + lane / 4 + 8 hh][8 t + 2 (lane % 4) + e].
def ldmatrix_trans_x4(mem, row_addr):
    """mem: byte address -> (value id); row_addr[l]: lane l's 16-byte row address (row l % 8 of
    matrix l / 8). Returns r[lane][i] = (lo, hi): lane l gets, of matrix i, the elements at stored
    (row 2 (l % 4), col l / 4) and (row 2 (l % 4) + 1, col l / 4)."""
    out = [[None] * 4 for _ in range(32)]
    for l in range(32):
        for i in range(4):
            rows = [row_addr[8 * i + r] for r in range(8)]
            col = l // 4
            out[l][i] = (mem[rows[2 * (l % 4)] + 2 * col], mem[rows[2 * (l % 4) + 1] + 2 * col])
    return out

mem = {}
for c in range(64):
    for v in range(64):
        mem[c * 128 + (((v >> 3) ^ (c & 7)) << 4) + 2 * (v & 7)] = ("V", c, v)
bad = 0
for wi in range(4):
    for m in range(4):
        addrs = []
        for lane in range(32):
            mi, mk = lane >> 3, lane & 7
            c = 8 * (2 * m + (mi >> 1)) + mk; vch = 2 * wi + (mi & 1)
            addrs.append(c * 128 + ((vch ^ (c & 7)) << 4))
        r = ldmatrix_trans_x4(mem, addrs)
        for lane in range(32):
            for i in range(4):
                j = 4 * (2 * m + (i >> 1)) + 2 * (i & 1)
                for e in range(2):
                    t, hh = j // 4, (j % 4) // 2
                    want = ("V", 8 * t + 2 * (lane % 4) + e, 16 * wi + lane // 4 + 8 * hh)
                    bad += r[lane][i][e] != want
print("GDN_WS_KE V^T fragments: mismatches", bad)
assert bad == 0
