#!/usr/bin/env python3
"""scripts/emulate_lsym_epilogue.py — the fp16 build's per-warp L / P epilogue's L stores (kernels/gdn_fused_ws.cuh,
lp_epilogue<kOut, WI, false, kH = true>) lane by lane, under GDN_WS3_LSYM 0 and 1, without a GPU.

Each of the auxiliary warpgroup's four warps holds the m64n64 accumulators of its 16 rows of K K^T (wgmma's layout:
lane l of warp WI, register 4 t + 2 hh + e = row 16 WI + l / 4 + 8 hh, column 8 t + 2 (l % 4) + e) and writes L's
entries as fp16 into a tile of rows LH halves apart, here poisoned (NaN) first. Under 0 it writes its rows' blocks up
to its diagonal block; under 1 the blocks below the diagonal are shared out (warp 0: (1, 0), (2, 0); warp 1: (2, 1),
(3, 1); warp 2: (3, 2); warp 3: (3, 0)), the transposed ones from the warp's own blocks (WI, jb) by stmatrix.x4.trans
(emulate_f16_inverse.py's model of it, as the PTX ISA defines it). Checks, on random chunks (raw keys with their
inverse norms, beta in (0, 2), log2-space gates): every entry below the diagonal, which the inverse reads, is written
and within fp16 rounding of beta_r ik_r ik_s (k_r . k_s) 2^(gamma_r - gamma_s); and the two forms agree to fp16's last
bit (their factors multiply in another order). Exit 1 on a failure.
  python3 scripts/emulate_lsym_epilogue.py [chunks (8)]
"""
import sys

import numpy as np

from emulate_f16_inverse import LH, stsm4_trans

C, D = 64, 128


def lsym_first(wi):
    return wi + 1


def lsym_end(wi):
    return 3 if wi == 0 else 4


def lsym_direct(wi, jb):
    return jb == wi or (wi == 3 and jb == 0)


def epilogue(acc, gam, bet, ik, lsym):
    """The four warps' L stores into a poisoned fp16 tile; acc the fp32 accumulators [C][C] (K K^T)."""
    f32, f16 = np.float32, np.float16
    lh = np.full((C, LH), f16(np.nan))
    ex2 = lambda x: f32(np.exp2(f32(x)))  # noqa: E731 - ex2.approx.ftz's value to fp32
    for wi in range(4):
        regs = [[None] * 4 for _ in range(32)]  # per transposed block, rebuilt below
        for lane in range(32):
            fr, fc = 16 * wi + lane // 4, 2 * (lane % 4)
            gr = [gam[fr], gam[fr + 8]]
            br = [f32(bet[fr] * ik[fr]), f32(bet[fr + 8] * ik[fr + 8])]
            for t in range(8):
                if t > 2 * wi + 1:
                    continue
                s0 = 8 * t + fc
                for hh in range(2):
                    if t == 2 * wi + 1 and hh == 0:
                        continue  # the diagonal block's upper right quarter
                    r = fr + 8 * hh
                    if lsym and not lsym_direct(wi, t >> 1):
                        continue
                    for e in range(2):
                        s = s0 + e
                        f = f32(ik[s] * ex2(gr[hh] - gam[s]))
                        lh[r, s] = f16(f32(f32(br[hh] * acc[r, s]) * f))
        if not lsym:
            continue
        for jb in range(lsym_first(wi), lsym_end(wi)):
            addrs, regs = [None] * 32, [[None] * 4 for _ in range(32)]
            for lane in range(32):
                lq = lane >> 3
                mr, mc = 8 * (lq >> 1) + (lane & 7), 8 * (lq & 1)
                addrs[lane] = (16 * jb + mr, 16 * wi + mc)
                fr, fc = 16 * wi + lane // 4, 2 * (lane % 4)
                gr = [gam[fr], gam[fr + 8]]
                ir = [ik[fr], ik[fr + 8]]
                for tt in range(2):
                    t = 2 * jb + tt
                    s0 = 8 * t + fc
                    for hh in range(2):
                        r = fr + 8 * hh
                        pair = []
                        for e in range(2):
                            s = s0 + e
                            c = f32(bet[s] * ik[s])
                            pair.append(f16(f32(f32(c * acc[r, s]) * f32(ir[hh] * ex2(gam[s] - gr[hh])))))
                        regs[lane][2 * tt + hh] = tuple(pair)
            stsm4_trans(lh, addrs, regs)
    return lh


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    rng = np.random.default_rng(5)
    worst, worst_ab = 0.0, 0
    for i in range(n):
        k = (rng.standard_normal((C, D)) * rng.uniform(0.5, 3.0)).astype(np.float32)
        ik = (1.0 / np.sqrt((k.astype(np.float64) ** 2).sum(axis=1) + 1e-6)).astype(np.float32)
        acc = np.zeros((C, C), dtype=np.float32)
        for r in range(C):  # one fp32 sum per pair, mirrored: (r, s) and (s, r) are the same products
            for s in range(r, C):
                acc[r, s] = acc[s, r] = np.float32(np.dot(k[r].astype(np.float64), k[s].astype(np.float64)))
        bet = rng.uniform(0, 2, C).astype(np.float32)
        g = (rng.uniform(-0.5, 0, C) if i % 2 else -np.log1p(np.exp(-rng.uniform(-2, 2, C)))) / np.log(2)
        gam = np.cumsum(g).astype(np.float32)
        want = (bet[:, None].astype(np.float64) * ik[:, None] * ik[None, :] * acc.astype(np.float64)
                * np.exp2(gam[:, None].astype(np.float64) - gam[None, :]))
        lower = np.tril(np.ones((C, C), dtype=bool), -1)
        got = {}
        for lsym in (0, 1):
            lh = epilogue(acc, gam, bet, ik, lsym)
            x = lh[:, :C].astype(np.float64)
            if not np.isfinite(x[lower]).all():
                bad = np.argwhere(lower & ~np.isfinite(x))[0]
                print(f"chunk {i}, GDN_WS3_LSYM={lsym}: L[{bad[0]}][{bad[1]}] below the diagonal not written")
                return 1
            err = np.abs(x - want)[lower] / np.maximum(np.abs(want[lower]), 6.1e-5)
            worst = max(worst, float(err.max()))
            got[lsym] = x
        ulps = np.abs(got[1][lower].astype(np.float16).view(np.int16).astype(np.int64)
                      - got[0][lower].astype(np.float16).view(np.int16).astype(np.int64))
        worst_ab = max(worst_ab, int(ulps.max()))
    print(f"{n} chunks: every L entry below the diagonal written under GDN_WS3_LSYM 0 and 1, within {worst:.2e} "
          f"(relative, fp16 normal range) of the float64 value; the two forms at most {worst_ab} fp16 ulp apart")
    return 0 if worst < 2e-3 and worst_ab <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
