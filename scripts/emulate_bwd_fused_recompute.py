# scripts/emulate_bwd_fused_recompute.py — a float64 model of what gdn_bwd_fwd_fused (the backward's fused forward
# recompute, ws3_pass's form 4 in kernels/gdn_fused_ws3.cuh) writes per chunk, against what gdn_bwd_prep
# (kernels/gdn_prep.cuh) and gdn_bwd_fwd_scan write to the same workspace tiles: Qe, Wn, Kd, P, T, e^gamma_C, S^T at
# the chunk's start and Vn. The prep normalises q and k first; the fused pass keeps the rows as loaded and folds
# the norms' inverses (iq, ik) and the gates into its factors (eg = e^gamma iq, kf = ik e^(gamma_C - gamma),
# be = beta e^gamma ik: T_k = T diag(be)), its P unscaled. Several chunks, a short last one (its rows past the
# sequence zero, as the kernels' zero-filled loads), beta in (0, 2), an initial state. Prints the largest
# difference per tile; exits 1 above 1e-12.
import sys

import numpy as np

rng = np.random.default_rng(5)
T, D, C = 150, 32, 64
q = rng.standard_normal((T, D))
k = rng.standard_normal((T, D))
v = rng.standard_normal((T, D))
g = np.log(1 / (1 + np.exp(-rng.standard_normal(T))))
beta = rng.uniform(0, 2, T)
iq_all = 1 / np.sqrt((q * q).sum(1) + 1e-6)
ik_all = 1 / np.sqrt((k * k).sum(1) + 1e-6)
S0 = 0.3 * rng.standard_normal((D, D))  # S [K][V]

worst = {}


def note(name, a, b):
    d = np.abs(a - b)
    worst[name] = max(worst.get(name, 0.0), float(d.max()) if d.size else 0.0)


St_prep = S0.T.copy()  # S^T [V][K], as the scans carry it
St_fused = S0.T.copy()
for c0 in range(0, T, C):
    n = min(C, T - c0)
    sl = slice(c0, c0 + n)
    qr = np.zeros((C, D)); kr = np.zeros((C, D)); V = np.zeros((C, D))
    b = np.zeros(C); gl = np.zeros(C); iq = np.zeros(C); ik = np.zeros(C)
    qr[:n] = q[sl]; kr[:n] = k[sl]; V[:n] = v[sl]; b[:n] = beta[sl]; gl[:n] = g[sl]
    iq[:n] = iq_all[sl]; ik[:n] = ik_all[sl]
    # rows past the chunk: zero rows; the kernels' norms of a zero row are 1 / sqrt(1e-6)
    iq[n:] = ik[n:] = 1 / np.sqrt(1e-6)
    gam = np.cumsum(gl)
    gc = gam[-1]
    Gam = np.exp(gam[:, None] - gam[None, :])
    # ---- gdn_bwd_prep and gdn_bwd_fwd_scan (normalised rows) ----
    Qn = qr * iq[:, None]; Kn = kr * ik[:, None]
    L = np.tril(b[:, None] * (Kn @ Kn.T) * Gam, -1)
    Tm = np.linalg.inv(np.eye(C) + L)
    prep = {
        "Qe": np.exp(gam)[:, None] * Qn,
        "Kd": np.exp(gc - gam)[:, None] * Kn,
        "Wn": -(Tm * (b * np.exp(gam))[None, :]) @ Kn,
        "P": np.tril((Qn @ Kn.T) * Gam),
        "T": Tm,
        "egc": np.array([np.exp(gc)]),
        "St": St_prep.copy(),
    }
    U = (Tm * b[None, :]) @ V
    prep["Vn"] = U + prep["Wn"] @ St_prep.T
    St_prep = np.exp(gc) * St_prep + (prep["Vn"].T * np.exp(gc - gam)[None, :]) @ Kn
    # ---- gdn_bwd_fwd_fused (rows as loaded, the factors a token) ----
    eg = np.exp(gam) * iq              # the product stage's eg_tok (scale 1 in this form)
    kf = ik * np.exp(gc - gam)         # kf_tok
    ke = np.exp(gam) * ik              # ke_tok
    be = b * np.exp(gam) * ik          # kXBe: T_k's column scale
    KK = kr @ kr.T
    QK = qr @ kr.T
    # lp_epilogue: L = br * accl * f (s < r), P = qs * accp * f (s <= r); br = beta ik, qs = iq (scale 1),
    # f = ik_s e^(gamma_r - gamma_s)
    f = ik[None, :] * np.exp(gam[:, None] - gam[None, :])
    Lf = np.where(np.arange(C)[None, :] < np.arange(C)[:, None], (b * ik)[:, None] * KK * f, 0.0)
    Pf = np.where(np.arange(C)[None, :] <= np.arange(C)[:, None], iq[:, None] * QK * f, 0.0)
    Tf = np.linalg.inv(np.eye(C) + Lf)
    Tk = Tf * be[None, :]
    Tv = Tf * b[None, :]
    XT = V.T - (St_fused @ kr.T) * ke[None, :]  # state_chunk_x's X form
    VnT = XT @ Tv.T
    fused = {
        "Qe": eg[:, None] * qr,
        "Kd": kf[:, None] * kr,
        "Wn": -(Tk @ kr),
        "P": Pf,
        "T": np.tril(Tf),  # bwd_store_t: zeros above the diagonal
        "egc": np.array([np.exp(gc)]),
        "St": St_fused.copy(),
        "Vn": VnT.T,
    }
    St_fused = np.exp(gc) * St_fused + (VnT * kf[None, :]) @ kr  # state_tail's update
    for name in prep:
        note(name, prep[name], fused[name])
    # rows past the sequence: zero in every token tile, T's rows and columns there the identity's
    for name in ("Qe", "Kd", "Wn", "P", "Vn"):
        note(name + " past the chunk", fused[name][n:], 0.0)
    note("T past the chunk", fused["T"][n:, n:], np.eye(C - n))
    note("T's columns past the chunk", fused["T"][:n, n:], 0.0)
note("final state", St_prep, St_fused)
bad = False
for name, err in worst.items():
    print(f"{name:28s} max |prep - fused| {err:.3e}")
    bad |= err > 1e-12
sys.exit(1 if bad else 0)
