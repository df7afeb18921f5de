#!/usr/bin/env python3
"""scripts/emulate_f16_inverse.py — GDN_WS3_F16INV's inverse (kernels/gdn_ws_inverse.cuh: inverse_diagonal_blocks_h,
merges_h, t_copy_h's reads) run lane by lane in numpy, with ldmatrix / stmatrix / mma.m16n8k16 fragments as the PTX
ISA defines them, on fp16 tiles whose unwritten entries are poisoned (NaN): the kernel's index math is checked without
a GPU. For random chunks (l2-normalised bf16 keys, beta, log-space gates) it forms L as the L / P epilogue stores it
(fp16, rows LH apart), runs the 64 threads' diagonal blocks and the four warps' two merge levels, and checks that T's
lower triangle (every entry t_copy_h reads) is finite and within 1e-2 relative (Frobenius) of the float64 inverse.
Exit 1 on a failure.
  python3 scripts/emulate_f16_inverse.py [chunks (20)]
"""
import sys

import numpy as np

from emulate_inverse_precision import C, chunk  # the chunks its precision comparison draws

LH = 72


def f16(x):
    return np.float16(x)


# ---- the fragment instructions, one warp at a time (lane l: g = l // 4, t = l % 4) ----
def ldsm4(mem, addrs, trans):
    """ldmatrix.x4: addrs[l] = (row, col) of row l % 8 of matrix l // 8. Returns regs[l][q] = (lo, hi)."""
    regs = [[None] * 4 for _ in range(32)]
    for l in range(32):
        g, t = l // 4, l % 4
        for q in range(4):
            def m(row, col):
                r0, c0 = addrs[8 * q + row]
                return mem[r0, c0 + col]
            regs[l][q] = (m(2 * t, g), m(2 * t + 1, g)) if trans else (m(g, 2 * t), m(g, 2 * t + 1))
    return regs


def stsm4_trans(mem, addrs, regs):
    """stmatrix.x4.trans: lane l's regs[q] = fragment (row g, cols 2t, 2t+1) of matrix q, stored transposed: element
    (row, col) to memory row `col` (named by lane 8 q + col), column `row`."""
    for l in range(32):
        g, t = l // 4, l % 4
        for q in range(4):
            for e in range(2):
                col = 2 * t + e
                r0, c0 = addrs[8 * q + col]
                mem[r0, c0 + g] = regs[l][q][e]


def mma_f16(c, a, b0, b1):
    """mma.m16n8k16 f32.f16.f16.f32: c[l] (4 fp32), a[l] (4 pairs), b0[l], b1[l] (pairs). Fragments: A a0 (g, 2t..),
    a1 (g + 8, 2t..), a2 (g, 2t + 8..), a3 (g + 8, 2t + 8..); B b0 (k 2t.., n g), b1 (k 2t + 8.., n g); C c0, c1
    (g, 2t..), c2, c3 (g + 8, 2t..)."""
    A = np.full((16, 16), np.nan)
    B = np.full((16, 8), np.nan)
    for l in range(32):
        g, t = l // 4, l % 4
        for e in range(2):
            A[g, 2 * t + e] = a[l][0][e]
            A[g + 8, 2 * t + e] = a[l][1][e]
            A[g, 2 * t + 8 + e] = a[l][2][e]
            A[g + 8, 2 * t + 8 + e] = a[l][3][e]
            B[2 * t + e, g] = b0[l][e]
            B[2 * t + 8 + e, g] = b1[l][e]
    D = A @ B
    for l in range(32):
        g, t = l // 4, l % 4
        for e in range(2):
            c[l][e] = np.float32(c[l][e] + D[g, 2 * t + e])
            c[l][2 + e] = np.float32(c[l][2 + e] + D[g + 8, 2 * t + e])


def pack(x, y):
    return (f16(x), f16(y))


def zeros(n):
    return [[np.float32(0)] * 4 for _ in range(32)] if n == 1 else [[[np.float32(0)] * 4 for _ in range(32)]
                                                                    for _ in range(n)]


# ---- the kernel's phases ----
def diagonal_blocks(lh, th):
    """inverse_diagonal_blocks_h, threads 0..63 (thread: column jj of 16 x 16 block b0 / 16)."""
    for tid in range(64):
        b0, jj = tid & ~15, tid & 15
        j = b0 + jj
        acc = np.zeros(16, dtype=np.float32)
        for s0 in (0, 8):
            lv = {i: [np.float32(lh[b0 + i, b0 + s0 + e]) for e in range(8)] for i in range(s0 + 1, 16)}
            for s in range(s0, s0 + 8):
                xs = np.float32(1) if s == jj else (np.float32(-acc[s]) if s > jj else np.float32(0))
                acc[s] = xs
                for i in range(s + 1, 16):
                    acc[i] = np.float32(acc[i] + np.float32(lv[i][s - s0] * xs))
        for i in range(16):
            th[b0 + i, j] = f16(acc[i])


def merges(lh, th):
    """merges_h: level 1 on warps 0 and 2, then level 2 on the four warps (the barrier between: phases in order)."""
    def lane_rc(l):
        l8, lq = l & 7, l >> 3
        return 8 * (lq >> 1) + l8, 8 * (lq & 1)
    for warp in (0, 2):  # level 1
        o = 16 * warp
        addr = lambda r0, c0: [(r0 + lane_rc(l)[0], c0 + lane_rc(l)[1]) for l in range(32)]
        at = ldsm4(th, addr(o, o), True)
        bl = ldsm4(lh, addr(o + 16, o), False)
        y = zeros(2)
        mma_f16(y[0], at, [bl[l][0] for l in range(32)], [bl[l][1] for l in range(32)])
        mma_f16(y[1], at, [bl[l][2] for l in range(32)], [bl[l][3] for l in range(32)])
        ay = [[pack(-y[0][l][0], -y[0][l][1]), pack(-y[0][l][2], -y[0][l][3]), pack(-y[1][l][0], -y[1][l][1]),
               pack(-y[1][l][2], -y[1][l][3])] for l in range(32)]
        bt = ldsm4(th, addr(o + 16, o + 16), False)
        z = zeros(2)
        mma_f16(z[0], ay, [bt[l][0] for l in range(32)], [bt[l][1] for l in range(32)])
        mma_f16(z[1], ay, [bt[l][2] for l in range(32)], [bt[l][3] for l in range(32)])
        stsm4_trans(th, addr(o + 16, o), [[pack(z[0][l][0], z[0][l][1]), pack(z[0][l][2], z[0][l][3]),
                                           pack(z[1][l][0], z[1][l][1]), pack(z[1][l][2], z[1][l][3])]
                                          for l in range(32)])
    outs = []
    for warp in range(4):  # level 2 (all warps read before any writes: its stores go to rows 32.., columns 0..31)
        mi, nh = warp >> 1, warp & 1
        addr = lambda r0, c0: [(r0 + lane_rc(l)[0], c0 + lane_rc(l)[1]) for l in range(32)]
        y = zeros(4)
        for s in range(2):
            if s < mi:
                continue
            at = ldsm4(th, addr(16 * s, 16 * mi), True)
            for nn in range(2):
                bl = ldsm4(lh, addr(32 + 16 * nn, 16 * s), False)
                mma_f16(y[2 * nn], at, [bl[l][0] for l in range(32)], [bl[l][1] for l in range(32)])
                mma_f16(y[2 * nn + 1], at, [bl[l][2] for l in range(32)], [bl[l][3] for l in range(32)])
        z = zeros(2)
        for s in range(2):
            if nh == 0 and s == 1:
                continue
            ay = [[pack(-y[2 * s][l][0], -y[2 * s][l][1]), pack(-y[2 * s][l][2], -y[2 * s][l][3]),
                   pack(-y[2 * s + 1][l][0], -y[2 * s + 1][l][1]), pack(-y[2 * s + 1][l][2], -y[2 * s + 1][l][3])]
                  for l in range(32)]
            bt = ldsm4(th, addr(32 + 16 * nh, 32 + 16 * s), False)
            mma_f16(z[0], ay, [bt[l][0] for l in range(32)], [bt[l][1] for l in range(32)])
            mma_f16(z[1], ay, [bt[l][2] for l in range(32)], [bt[l][3] for l in range(32)])
        outs.append((addr(32 + 16 * nh, 16 * mi), [[pack(z[0][l][0], z[0][l][1]), pack(z[0][l][2], z[0][l][3]),
                                                    pack(z[1][l][0], z[1][l][1]), pack(z[1][l][2], z[1][l][3])]
                                                   for l in range(32)]))
    for a, r in outs:
        stsm4_trans(th, a, r)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rng = np.random.default_rng(3)
    regimes = ["strong", "weak", "weak corr", "weak corr neg", "strong corr neg"]
    worst = 0.0
    for i in range(n):
        L32, _ = chunk(rng, regimes[i % len(regimes)])  # as the L / P epilogue forms it (fp32)
        L = L32.astype(np.float64)
        lh = np.full((C, LH), np.float16(np.nan))
        th = np.full((C, LH), np.float16(np.nan))
        for r in range(C):  # the epilogue (EPIW): a row's columns up to its diagonal block's end, L below the
            for s0 in range(0, 16 * (r // 16 + 1)):  # diagonal, any value on and above it, nothing written in the
                if r % 16 < 8 and s0 >= 16 * (r // 16) + 8:  # block's upper right quarter (left poisoned)
                    continue
                lh[r, s0] = f16(L[r, s0]) if s0 < r else f16(rng.standard_normal())
        diagonal_blocks(lh, th)
        merges(lh, th)
        T = np.linalg.inv(np.eye(C) + L)
        lower = np.tril(np.ones((C, C), dtype=bool))
        got = th[:, :C].astype(np.float64)
        block_lower = np.zeros((C, C), dtype=bool)  # what t_copy_h reads: column blocks g <= row // 16
        for r in range(C):
            block_lower[r, :16 * (r // 16 + 1)] = True
        if not np.isfinite(got[block_lower]).all():
            print(f"chunk {i}: a non-finite (unwritten or poisoned) entry where t_copy_h reads")
            return 1
        err = np.linalg.norm(np.where(lower, got - T, 0)) / np.linalg.norm(T)
        upper_in_blocks = block_lower & ~lower
        if np.abs(got[upper_in_blocks]).max() != 0:
            print(f"chunk {i}: a nonzero entry above the diagonal inside a diagonal block")
            return 1
        worst = max(worst, err)
    print(f"{n} chunks: T's lower triangle within {worst:.2e} (relative Frobenius) of the float64 inverse; "
          f"every entry t_copy_h reads written and finite")
    return 0 if worst < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
