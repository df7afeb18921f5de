#!/usr/bin/env python3
"""scripts/emulate_ws3_inverse.py — a float64 emulation, lane by lane, of the R3 fused prefill's inverse
T = (I + L)^-1 as ws::inverse_aux forms it (kernels/gdn_ws_inverse.cuh) under GDN_WS3_MERGE2, with the diagonal
blocks either 16 x 16 by column substitution (inverse_diagonal_blocks_col) or, under GDN_WS3_DIAG8, 8 x 8 by
column substitution (inverse_diagonal_blocks8_col) followed by the 8 -> 16 merge on m16n8k8 mma with the rows
8..15 of A zero (merge8_warp: X = L21 T11, then -T22 X, X handed over by shuffles), or, R3's default since
2026-12-04 (LDF a multiple of 4), 16 x 16 with L read four columns a load (inverse_diagonal_blocks_col_v4: checked
bitwise equal to the column form).

Every product reads its operands through the fragment addressing the kernel uses (A: lanes (g, t) read rows g,
g + 8, columns t, t + 4; B: rows t, t + 4, column g; c_tile_as_b's shuffles), from buffers poisoned with NaN, so a
wrong index or a block read before it is written shows as an error (NaN or a wrong value) against numpy's inverse.
Prints the max abs error of each form; exits 1 above 1e-12.

    python3 scripts/emulate_ws3_inverse.py [LDF]   (68: the engine's GDN_WS3_LD; 65: its value before 2026-12-04)
"""
import sys

import numpy as np

C = 64
LDF = int(sys.argv[1]) if len(sys.argv) > 1 else 68


def case(seed):
    rng = np.random.default_rng(seed)
    k = rng.standard_normal((C, 128))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    beta = rng.uniform(0, 2, C)
    gam = np.cumsum(-rng.uniform(0, 0.5, C))
    a = k @ k.T * np.exp(gam[:, None] - gam[None, :])
    lm = np.tril(beta[:, None] * a, -1)
    lf = np.full(C * LDF, np.nan)
    for r in range(C):
        for s in range(r):  # the kernel's lf holds only what it wrote below the diagonal (EPIW: garbage above)
            lf[r * LDF + s] = lm[r, s]
    return lm, lf


def diag_col(lf, tf, n):
    """inverse_diagonal_blocks_col (n = 16) / inverse_diagonal_blocks8_col (n = 8): thread j a column."""
    for j in range(C):
        b0, jj = (j // n) * n, j % n
        acc = [0.0] * n
        for s in range(n):
            xs = 1.0 if s == jj else (-acc[s] if s > jj else 0.0)
            acc[s] = xs
            for i in range(s + 1, n):
                acc[i] += lf[(b0 + i) * LDF + b0 + s] * xs
        for i in range(n):
            tf[(b0 + i) * LDF + j] = acc[i]
        if n == 8 and (j // 8) % 2 == 0:  # the 16-block's upper right quarter: zeros
            for i in range(8):
                tf[(b0 + i) * LDF + j + 8] = 0.0


def diag_col_v4(lf, tf):
    """inverse_diagonal_blocks_col_v4 (R3 at LDF % 4 == 0; GDN_WS3_DIAGV while under trial): the 16 x 16 chain
    reading L four columns a load (rows s0 + 1 .. 15, columns s0 .. s0 + 3, poisoned entries above the diagonal included), the same FMAs."""
    for j in range(C):
        b0, jj = (j // 16) * 16, j % 16
        acc = [0.0] * 16
        for s0 in range(0, 16, 4):
            lv = {i: lf[(b0 + i) * LDF + b0 + s0:(b0 + i) * LDF + b0 + s0 + 4].copy() for i in range(s0 + 1, 16)}
            for s in range(s0, s0 + 4):
                xs = 1.0 if s == jj else (-acc[s] if s > jj else 0.0)
                acc[s] = xs
                for i in range(s + 1, 16):
                    acc[i] += lv[i][s - s0] * xs
        for i in range(16):
            tf[(b0 + i) * LDF + j] = acc[i]


def frags_a(buf, off, kk, rows16=True):
    am = np.zeros((16, 8))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        am[g, t] = buf[off + g * LDF + kk + t]
        am[g, t + 4] = buf[off + g * LDF + kk + t + 4]
        if rows16:
            am[g + 8, t] = buf[off + (g + 8) * LDF + kk + t]
            am[g + 8, t + 4] = buf[off + (g + 8) * LDF + kk + t + 4]
    return am


def frags_b(buf, off, kk):
    bm = np.zeros((8, 8))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        bm[t, g] = buf[off + (kk + t) * LDF + g]
        bm[t + 4, g] = buf[off + (kk + t + 4) * LDF + g]
    return bm


def to_lanes(d):
    c = np.zeros((32, 4))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        c[lane] = [d[g, 2 * t], d[g, 2 * t + 1], d[g + 8, 2 * t], d[g + 8, 2 * t + 1]]
    return c


def c_tile_as_b(c):
    """The kernel's shuffles: lane (g, t) gets X[t][g], X[t+4][g] (k-step 0), X[8+t][g], X[12+t][g] (1)."""
    b = np.zeros((32, 2, 2))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        s0, s1 = 4 * t + (g >> 1), 4 * (t + 4) + (g >> 1)
        odd = g & 1
        b[lane, 0, 0] = c[s0][1] if odd else c[s0][0]
        b[lane, 0, 1] = c[s1][1] if odd else c[s1][0]
        b[lane, 1, 0] = c[s0][3] if odd else c[s0][2]
        b[lane, 1, 1] = c[s1][3] if odd else c[s1][2]
    return b


def bm_of(b, ks):
    bm = np.zeros((8, 8))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        bm[t, g], bm[t + 4, g] = b[lane, ks, 0], b[lane, ks, 1]
    return bm


def mma_ss(abuf, aoff, bbuf, boff, k0, k1, rows16=True):
    d = np.zeros((16, 8))
    for kk in range(k0, k1, 8):
        d += frags_a(abuf, aoff, kk, rows16) @ frags_b(bbuf, boff, kk)
    return to_lanes(d)


def mma_rb(abuf, aoff, b, nks, rows16=True):
    d = np.zeros((16, 8))
    for ks in range(nks):
        d += frags_a(abuf, aoff, 8 * ks, rows16) @ bm_of(b, ks)
    return to_lanes(d)


def store_neg(buf, off, c, rows16=True):
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        buf[off + g * LDF + 2 * t], buf[off + g * LDF + 2 * t + 1] = -c[lane, 0], -c[lane, 1]
        if rows16:
            buf[off + (g + 8) * LDF + 2 * t], buf[off + (g + 8) * LDF + 2 * t + 1] = -c[lane, 2], -c[lane, 3]


def merge8(lf, tf):
    """merge8_warp, warp w: the 16-block at 16 w: X = L21 T11 (A rows 8..15 zero), T21 = -T22 X."""
    outs = []
    for w in range(4):
        o = 16 * w
        x = mma_ss(lf, (o + 8) * LDF + o, tf, o * LDF + o, 0, 8, rows16=False)
        xb = c_tile_as_b(x)  # only k-step 0 (X's rows 0..7) is used
        c = mma_rb(tf, (o + 8) * LDF + o + 8, xb, 1, rows16=False)
        outs.append((o, c))
    for o, c in outs:  # each warp stores its own block (rows 8..15 of A were zero: c[2], c[3] unused)
        store_neg(tf, (o + 8) * LDF + o, c, rows16=False)


def merges(lf, tf):
    """GDN_WS3_MERGE2's two levels (inverse_aux)."""
    outs = []
    for warp in range(4):  # level 1
        p, nt = (warp >> 1) & 1, warp & 1
        o = 32 * p
        x = mma_ss(lf, (o + 16) * LDF + o, tf, o * LDF + o + 8 * nt, 0, 16)
        c = mma_rb(tf, (o + 16) * LDF + o + 16, c_tile_as_b(x), 2)
        outs.append((o, nt, c))
    for o, nt, c in outs:
        store_neg(tf, (o + 16) * LDF + o + 8 * nt, c)
    outs = []
    for nj in range(4):  # level 2
        x2 = [mma_ss(lf, (32 + 16 * mi) * LDF, tf, 8 * nj, 16 if nj >= 2 else 0, 32) for mi in range(2)]
        xb = np.concatenate([c_tile_as_b(x2[0]), c_tile_as_b(x2[1])], axis=1)
        for mi in range(2):
            outs.append((mi, nj, mma_rb(tf, (32 + 16 * mi) * LDF + 32, xb, 2 if mi == 0 else 4)))
    for mi, nj, c in outs:
        store_neg(tf, (32 + 16 * mi) * LDF + 8 * nj, c)


def run(form, seed):
    lm, lf = case(seed)
    tf = np.full(C * LDF, np.nan)
    if form == "diag8":
        diag_col(lf, tf, 8)
        merge8(lf, tf)
    elif form == "diagv":
        diag_col_v4(lf, tf)
        ref = np.full(C * LDF, np.nan)
        diag_col(lf, ref, 16)
        if not np.array_equal(tf, ref, equal_nan=True):  # the same FMAs in the same order: the same bits
            return float("inf")
    else:
        diag_col(lf, tf, 16)
    merges(lf, tf)
    want = np.linalg.inv(np.eye(C) + lm)
    got = np.zeros((C, C))
    for r in range(C):
        for s in range(C):
            # T's entries the kernel's T_v copy reads: the lower 16 x 16 blocks (block row >= block column)
            got[r, s] = tf[r * LDF + s] if (r >> 4) >= (s >> 4) else 0.0
    return float(np.max(np.abs(got - want)))


if __name__ == "__main__":
    worst = 0.0
    names = {"col": "16 x 16", "diag8": "8 x 8 + the 8 -> 16 merge (GDN_WS3_DIAG8)",
             "diagv": "16 x 16 read four columns a load (R3's default at LDF % 4 == 0; bitwise the 16 x 16 form's)"}
    for form in ("col", "diag8") + (("diagv",) if LDF % 4 == 0 else ()):
        e = max(run(form, seed) for seed in range(3))
        worst = max(worst, e if e == e else float("inf"))
        print("LDF %d, diagonal blocks %s: max abs error against numpy's inverse %.3e" % (LDF, names[form], e))
    sys.exit(0 if worst < 1e-12 else 1)
