#!/usr/bin/env python3
"""scripts/model_gdn_bwd_fused.py — the schedule a one-pass Gated DeltaNet backward would run, in float64, against
a token-by-token adjoint of the recurrence.

The engine's backward (docs/linear_attention.md, "Backward") runs three passes over memory: the forward recompute
stores per chunk S^T at its start and the tiles Vn, Wn, Qe, Kd, P, T; the reverse scan stores dS^T and dVn; the
gradient kernel reads all of them back (~15-19 GB at 16/64, 4 x 8192). The schedule modelled here stores only the
state at each chunk's start (S_c, what the reverse pass cannot rebuild cheaply), and one reverse pass per (sequence,
head) forms, chunk by chunk and from the chunk's own rows, S_c and the state gradient dS carried in registers,
every tile and every token gradient, then dS for the chunk before (the structure FlashQLA's Hopper backward uses,
QwenLM/FlashQLA at c18a486, read for its structure). The per-chunk formulas are the ones gdn_bwd_grads and the
reverse scan implement (kernels/gdn_bwd_common.cuh): only where they run changes.

Checks (exit 1 on failure): the token-level adjoint against central finite differences of the forward (a few random
directions), then the chunked one-pass schedule against the adjoint: dq, dk, dv, dg, dbeta, d_initial_state,
sequences of several chunks with a short last one. Prints what one chunk of a (sequence, head) moves through global
memory in the engine's three passes and in the one-pass schedule (d = 128, bf16 tiles), and its tensor-core work.
No GPU; numpy only.
  python3 scripts/model_gdn_bwd_fused.py [seed (7)]
"""
import sys

import numpy as np

C = 64


def forward_tokens(q, k, v, g, beta, S0, scale):
    """The recurrence token by token, S [K][V]: S_t = e^g_t (I - beta_t k_t k_t^T) S_(t-1) + beta_t k_t v_t^T,
    o_t = scale S_t^T q_t. Returns O, the final state and every state before its token (for the adjoint)."""
    S = S0.copy()
    O = np.zeros_like(v)
    before = []
    for t in range(len(q)):
        before.append(S.copy())
        kt = k[t]
        S = np.exp(g[t]) * (S - beta[t] * np.outer(kt, kt @ S)) + beta[t] * np.outer(kt, v[t])
        O[t] = scale * S.T @ q[t]
    return O, S, before


def adjoint_tokens(q, k, v, g, beta, S0, scale, dO, dSf):
    """The recurrence's adjoint token by token (the reference): gradients of <O, dO> + <S_final, dSf>."""
    _, _, before = forward_tokens(q, k, v, g, beta, S0, scale)
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    dg, db = np.zeros(len(q)), np.zeros(len(q))
    dS = dSf.copy()
    for t in reversed(range(len(q))):
        Sp, kt, e, b = before[t], k[t], np.exp(g[t]), beta[t]
        St = e * (Sp - b * np.outer(kt, kt @ Sp)) + b * np.outer(kt, v[t])
        dS = dS + scale * np.outer(q[t], dO[t])  # o_t = scale S_t^T q_t
        dq[t] = scale * St @ dO[t]
        decayed = e * (Sp - b * np.outer(kt, kt @ Sp))
        dg[t] = np.sum(dS * decayed)
        db[t] = kt @ dS @ v[t] - e * (kt @ dS @ Sp.T @ kt)
        dv[t] = b * dS.T @ kt
        dk[t] = b * dS @ v[t] - e * b * (Sp @ dS.T @ kt + dS @ Sp.T @ kt)
        dS = e * (dS - b * np.outer(kt, kt @ dS))  # A_t^T dS, A_t symmetric
    return dq, dk, dv, dg, db, dS


def chunk_tiles(Qc, Kc, Vc, gc, bc):
    """The state-free tiles of one chunk (gdn_bwd_prep's): gamma, Gamma, T, Qe, Kd, W (= -Wn), U, P."""
    gam = np.cumsum(gc)
    Gam = np.tril(np.exp(gam[:, None] - gam[None, :]))
    L = np.tril(bc[:, None] * (Kc @ Kc.T) * Gam, -1)
    Tm = np.linalg.inv(np.eye(len(gc)) + L)
    eg = np.exp(gam)
    return dict(gam=gam, Gam=Gam, T=Tm, Qe=eg[:, None] * Qc, Kd=np.exp(gam[-1] - gam)[:, None] * Kc,
                W=(Tm * (bc * eg)[None, :]) @ Kc, U=(Tm * bc[None, :]) @ Vc, P=np.tril(Qc @ Kc.T) * Gam)


def one_pass(q, k, v, g, beta, S0, scale, dO, dSf):
    """Pass 1: the states at the chunks' starts only. Pass 2, chunks in reverse: from the chunk's rows, S_c and dS,
    every tile, every token gradient and dS for the chunk before."""
    T = len(q)
    starts = list(range(0, T, C))
    S, Sc = S0.copy(), []
    for c0 in starts:  # pass 1 (the forward's own chunk step; only S_c leaves it)
        sl = slice(c0, min(c0 + C, T))
        t = chunk_tiles(q[sl], k[sl], v[sl], g[sl], beta[sl])
        Sc.append(S.copy())
        Vn = t["U"] - t["W"] @ S
        S = np.exp(t["gam"][-1]) * S + t["Kd"].T @ Vn
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    dg, db = np.zeros(T), np.zeros(T)
    dS = dSf.copy()
    for ci in reversed(range(len(starts))):  # pass 2
        sl = slice(starts[ci], min(starts[ci] + C, T))
        Qc, Kc, Vc, dOc, bc = q[sl], k[sl], v[sl], dO[sl], beta[sl]
        t = chunk_tiles(Qc, Kc, Vc, g[sl], bc)
        S = Sc[ci]
        gam, Gam, Tm, P = t["gam"], t["Gam"], t["T"], t["P"]
        eg, ekd = np.exp(gam), np.exp(gam[-1] - gam)
        Vn = t["U"] - t["W"] @ S  # rebuilt, not loaded
        dVn = scale * P.T @ dOc + t["Kd"] @ dS
        # token gradients (gdn_bwd_grads' formulas, S [K][V] here)
        dQe = scale * dOc @ S.T
        dKd = Vn @ dS.T
        dW = -dVn @ S.T
        dP = scale * dOc @ Vn.T
        dT = dW @ Kc.T * (bc * eg)[None, :] + dVn @ Vc.T * bc[None, :]
        dL = np.tril(-Tm.T @ dT @ Tm.T, -1)
        M1 = np.tril(dP * Gam)
        M2 = dL * bc[:, None] * Gam
        dKb, dVb = Tm.T @ dW, Tm.T @ dVn
        dq[sl] = eg[:, None] * dQe + M1 @ Kc
        dk[sl] = ekd[:, None] * dKd + (bc * eg)[:, None] * dKb + M1.T @ Qc + M2 @ Kc + M2.T @ Kc
        dv[sl] = bc[:, None] * dVb
        F = dL * (Kc @ Kc.T) * Gam
        E = dP * P + bc[:, None] * F
        db[sl] = eg * np.sum(Kc * dKb, 1) + np.sum(Vc * dVb, 1) + F.sum(1)
        dgam = (eg * np.sum(Qc * dQe, 1) - ekd * np.sum(Kc * dKd, 1) + bc * eg * np.sum(Kc * dKb, 1)
                + E.sum(1) - E.sum(0))
        dgam[-1] += np.sum(ekd * np.sum(Kc * dKd, 1)) + np.exp(gam[-1]) * np.sum(S * dS)
        dg[sl] = np.cumsum(dgam[::-1])[::-1]
        dS = np.exp(gam[-1]) * dS + scale * t["Qe"].T @ dOc - t["W"].T @ dVn  # the chunk before's dS
    return dq, dk, dv, dg, db, dS


def one_pass_x(q, k, v, g, beta, S0, scale, dO, dSf):
    """Pass 2 in the X form (the forward's own state-side form, kernels/gdn_fused_ws.cuh state_chunk_x, and the form
    FlashQLA's backward uses): Vn = T diag(beta) X with X = V - diag(e^gamma) K S, so no W, no U, no dW and no dKb.
    Pass 1 hands over S_c and T (gdn_bwd_fwd_st_fused: T is not formed again). Per chunk, from dS (after the chunk):
      Y = K S_c, X = V - e^gamma Y, Vn = (T diag beta) X             the tiles
      dVn = scale P^T dO + e^(gamma_C - gamma) (K dS)                 the chain's first product pair
      dVb = T^T dVn, dv = dX = beta dVb, dY = -e^gamma dX             v's gradient is X's
      dS_before = e^gamma_C dS + scale (e^gamma Q)^T dO + K^T dY      the chain's update
      dq = e^gamma (scale dO S_c^T) + M1 K
      dk = e^(gamma_C - gamma) (Vn dS^T) + dY S_c^T + M1^T Q + M2 K + M2^T K
      dT = dVn (diag(beta) X)^T -> dL = strict_tril(-T^T dT T^T), M1, M2, E, F as before
      dbeta = <X, dVb> a row + F's row sums;  dgamma adds -e^gamma <Y, dX> in place of the W path's term."""
    T = len(q)
    starts = list(range(0, T, C))
    S, Sc, Tc = S0.copy(), [], []
    for c0 in starts:  # pass 1: S_c and T only
        sl = slice(c0, min(c0 + C, T))
        t = chunk_tiles(q[sl], k[sl], v[sl], g[sl], beta[sl])
        Sc.append(S.copy())
        Tc.append(t["T"])
        Vn = t["U"] - t["W"] @ S
        S = np.exp(t["gam"][-1]) * S + t["Kd"].T @ Vn
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    dg, db = np.zeros(T), np.zeros(T)
    dS = dSf.copy()
    for ci in reversed(range(len(starts))):
        sl = slice(starts[ci], min(starts[ci] + C, T))
        Qc, Kc, Vc, dOc, bc = q[sl], k[sl], v[sl], dO[sl], beta[sl]
        S, Tm = Sc[ci], Tc[ci]
        gam = np.cumsum(g[sl])
        Gam = np.tril(np.exp(gam[:, None] - gam[None, :]))
        eg, ekd = np.exp(gam), np.exp(gam[-1] - gam)
        KK, P = Kc @ Kc.T, np.tril(Qc @ Kc.T) * Gam
        Y = Kc @ S
        X = Vc - eg[:, None] * Y
        Vn = (Tm * bc[None, :]) @ X
        dVn = scale * P.T @ dOc + ekd[:, None] * (Kc @ dS)
        dVb = Tm.T @ dVn
        dX = bc[:, None] * dVb
        dY = -eg[:, None] * dX
        dQe = scale * dOc @ S.T
        dKd = Vn @ dS.T
        dP = scale * dOc @ Vn.T
        dT = dVn @ (bc[:, None] * X).T
        dL = np.tril(-Tm.T @ dT @ Tm.T, -1)
        M1 = np.tril(dP * Gam)
        M2 = dL * bc[:, None] * Gam
        dq[sl] = eg[:, None] * dQe + M1 @ Kc
        dk[sl] = ekd[:, None] * dKd + dY @ S.T + M1.T @ Qc + M2 @ Kc + M2.T @ Kc
        dv[sl] = dX
        F = dL * KK * Gam
        E = dP * P + bc[:, None] * F
        db[sl] = np.sum(X * dVb, 1) + F.sum(1)
        dgam = (eg * np.sum(Qc * dQe, 1) - ekd * np.sum(Kc * dKd, 1) - eg * np.sum(Y * dX, 1) + E.sum(1) - E.sum(0))
        dgam[-1] += np.sum(ekd * np.sum(Kc * dKd, 1)) + np.exp(gam[-1]) * np.sum(S * dS)
        dg[sl] = np.cumsum(dgam[::-1])[::-1]
        dS = np.exp(gam[-1]) * dS + scale * (eg[:, None] * Qc).T @ dOc + Kc.T @ dY
    return dq, dk, dv, dg, db, dS


def traffic(D=128):
    """Bytes one (chunk, head) moves through global memory, bf16 tiles, d = D; and its tensor-core multiply-adds."""
    row = C * D * 2  # one [C][D] bf16 tile
    st = D * D * 2  # S^T or dS^T, bf16
    cc = C * C * 2
    rows_in = 3 * row  # q, k, v
    three = {
        "forward recompute": rows_in + st + 4 * row + 2 * cc,  # rows in; S^T, Vn, Wn, Qe, Kd, P, T out
        "reverse scan": 3 * row + cc + row + st + row,  # Qe, Wn, Kd, P, dO in; dS^T, dVn out
        "gradients": rows_in + row + 2 * st + 2 * row + cc + 3 * row,  # rows, dO, S^T, dS^T, Vn, dVn, T; dq dk dv
    }
    one = {"pass 1": rows_in + st, "pass 2": rows_in + row + st + 3 * row}  # S_c out; rows, dO, S_c in; dq dk dv
    # multiply-adds of pass 2's products for one chunk, (m, n, k) shapes (one_pass, the inverse not counted): K K^T,
    # Q K^T, dP, dW K^T, dVn V^T [C][C][D]; T^T dT, X T^T [C][C][C]; W, U, P^T dO, dKb, dVb, M1 K, M1^T Q, M2 K, M2^T K
    # [C][D][C]; Vn, Kd dS, dQe, dKd, dW [C][D][D]; the update's two [D][D][C] (until 2026-12-07 this list held 18 of
    # the 23 products: 23.1 MFLOP printed, docs' "~23 MFLOP")
    shapes = [(C, C, D)] * 5 + [(C, C, C)] * 2 + [(C, D, C)] * 9 + [(C, D, D)] * 5 + [(D, D, C)] * 2
    macs = sum(m * n * kk for m, n, kk in shapes)
    # the X form (one_pass_x) with T from pass 1: K K^T, Q K^T, dP, dT [C][C][D]; X (T^T dT), dL [C][C][C]; Vn, P^T dO,
    # dVb, M1 K, M1^T Q, M2 K, M2^T K [C][D][C]; Y, K dS, dQe, dKd, dY S^T [C][D][D]; the update's two [D][D][C]
    shapes_x = [(C, C, D)] * 4 + [(C, C, C)] * 2 + [(C, D, C)] * 7 + [(C, D, D)] * 5 + [(D, D, C)] * 2
    macs_x = sum(m * n * kk for m, n, kk in shapes_x)
    return three, one, macs, macs_x


def main():
    rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
    ok = True
    # 1. the adjoint against finite differences (small: D 8, 150 tokens)
    T, D = 150, 8
    q, k, v = (rng.standard_normal((T, D)) for _ in range(3))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    g = -np.log1p(np.exp(-rng.standard_normal(T)))
    beta = rng.uniform(0, 2, T)
    S0, dSf = 0.5 * rng.standard_normal((D, D)), rng.standard_normal((D, D))
    dO = rng.standard_normal((T, D))
    scale = 0.7
    grads = adjoint_tokens(q, k, v, g, beta, S0, scale, dO, dSf)

    def loss(q_, k_, v_, g_, b_, S0_):
        O, Sf, _ = forward_tokens(q_, k_, v_, g_, b_, S0_, scale)
        return np.sum(O * dO) + np.sum(Sf * dSf)

    worst_fd = 0.0
    for i, x in enumerate((q, k, v, g, beta, S0)):
        for _ in range(3):
            u = rng.standard_normal(x.shape)
            h = 1e-6
            args_p = [y + h * u if j == i else y for j, y in enumerate((q, k, v, g, beta, S0))]
            args_m = [y - h * u if j == i else y for j, y in enumerate((q, k, v, g, beta, S0))]
            fd = (loss(*args_p) - loss(*args_m)) / (2 * h)
            an = np.sum(grads[(0, 1, 2, 3, 4, 5)[i]] * u)
            worst_fd = max(worst_fd, abs(fd - an) / max(1.0, abs(an)))
    ok &= worst_fd < 1e-6
    print(f"token adjoint against finite differences: largest relative difference {worst_fd:.2e}")
    # 2. the one-pass schedule against the adjoint (d 32; lengths with a short last chunk)
    names = ("dq", "dk", "dv", "dg", "dbeta", "d_initial_state")
    for T, D in ((64 * 3 + 17, 32), (64, 32), (5, 16), (64 * 5, 16), (64 * 2 + 40, 16)):
        q, k, v = (rng.standard_normal((T, D)) for _ in range(3))
        k /= np.linalg.norm(k, axis=1, keepdims=True)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        g = -np.log1p(np.exp(-rng.standard_normal(T)))
        beta = rng.uniform(0, 2, T)
        S0, dSf, dO = 0.5 * rng.standard_normal((D, D)), rng.standard_normal((D, D)), rng.standard_normal((T, D))
        ref = adjoint_tokens(q, k, v, g, beta, S0, scale, dO, dSf)
        for form, fn in (("one pass", one_pass), ("X form  ", one_pass_x)):
            got = fn(q, k, v, g, beta, S0, scale, dO, dSf)
            errs = [np.abs(a - b).max() / max(1e-30, np.abs(a).max()) for a, b in zip(ref, got)]
            ok &= max(errs) < 1e-10
            print(f"{form}, T {T:3d}, d {D}: " + ", ".join(f"{n} {e:.1e}" for n, e in zip(names, errs)))
    three, one, macs, macs_x = traffic()
    print("global memory a (chunk, head), d = 128, bf16 tiles (KiB):")
    print("  three passes: " + ", ".join(f"{n} {b / 1024:.0f}" for n, b in three.items())
          + f"; total {sum(three.values()) / 1024:.0f}")
    print("  one pass:     " + ", ".join(f"{n} {b / 1024:.0f}" for n, b in one.items())
          + f"; total {sum(one.values()) / 1024:.0f}")
    print(f"pass 2's products a (chunk, head): {2 * macs / 1e6:.1f} MFLOP; in the X form with T from pass 1: "
          f"{2 * macs_x / 1e6:.1f} MFLOP")
    print("schedule matches the adjoint" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
