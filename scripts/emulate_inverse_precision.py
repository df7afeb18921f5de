#!/usr/bin/env python3
"""scripts/emulate_inverse_precision.py — how far two forms of a chunk's T = (I + L)^-1 land from the float64 inverse.

The fused prefill's auxiliary side (kernels/gdn_ws_inverse.cuh) keeps L and T in fp32 shared memory: the 16 x 16
diagonal blocks by column substitution in fp32, then two merge levels (16 -> 32 -> 64: X = L21 T11, T21 = -T22 X) on
one-pass TF32 mma with the fp32 operands' bits as they are (the hardware reads the top 19 bits: truncation), fp32
accumulation. The form docs/linear_attention.md names as the auxiliary side's next lever keeps L and T in fp16, as
FlashInfer's sm90 prefill does (its schedule, read 2026-12-06): 8 x 8 diagonal blocks by Gauss elimination in fp32
rounded to fp16, then 8 -> 16 -> 32 -> 64 merges T21 = -T22 L21 T11 on fp16 operands with fp32 accumulation, each
level's block rounded to fp16. This script draws chunks as the kernels see them (bf16 k rows l2-normalised, beta,
log-space gates with their in-chunk cumulative sum) in several regimes, forms L = diag(beta) tril(K K^T o Gamma, -1),
runs both forms in numpy with the roundings emulated, and prints each form's error against the float64 inverse:
the relative Frobenius error of T and of T_v = T diag(beta) once rounded to bf16 (what the state side reads), and the
largest |T| entry (fp16's range ends at 65504). No GPU; numpy only.
  python3 scripts/emulate_inverse_precision.py [chunks a regime (200)] [seed (1)]
"""
import sys

import numpy as np

C, D = 64, 128


def bf16(x):
    """Round float32 values to bfloat16 (nearest even), returned as float32."""
    a = np.asarray(x, dtype=np.float32).copy()
    u = a.view(np.uint32)
    u += 0x7FFF + ((u >> 16) & 1)
    u &= 0xFFFF0000
    return a


def tf32_trunc(x):
    """The top 19 bits of an fp32 value (the mma's read of raw fp32 bits as TF32)."""
    a = np.asarray(x, dtype=np.float32).copy()
    a.view(np.uint32)[...] &= 0xFFFFE000
    return a


def f16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


def inv_lower_col(L):
    """(I + L)^-1 of a strictly lower-triangular block by column substitution in fp32 (the kernel's diagonal blocks)."""
    n = L.shape[0]
    T = np.zeros((n, n), dtype=np.float32)
    for j in range(n):
        acc = np.zeros(n, dtype=np.float32)
        for s in range(j, n):
            xs = np.float32(1.0) if s == j else np.float32(-acc[s])
            acc[s] = xs
            for i in range(s + 1, n):
                acc[i] = np.float32(acc[i] + np.float32(L[i, s] * xs))
        T[:, j] = acc
    return T


def mm32(a, b, op):
    """a @ b with operands through `op` (a rounding), fp32 accumulation (float64 products, then fp32)."""
    return (op(a).astype(np.float64) @ op(b).astype(np.float64)).astype(np.float32)


def form_tf32(L):
    """The engine's form: fp32 16 x 16 diagonal blocks, then the two TF32 merge levels."""
    T = np.zeros((C, C), dtype=np.float32)
    for b in range(0, C, 16):
        T[b:b + 16, b:b + 16] = inv_lower_col(L[b:b + 16, b:b + 16])
    for h in (16, 32):  # merge blocks of h into 2h
        for o in range(0, C, 2 * h):
            X = mm32(L[o + h:o + 2 * h, o:o + h], T[o:o + h, o:o + h], tf32_trunc)
            T[o + h:o + 2 * h, o:o + h] = -mm32(T[o + h:o + 2 * h, o + h:o + 2 * h], X, tf32_trunc)
    return T


def form_f16(L):
    """The fp16 form: L in fp16, 8 x 8 Gauss blocks in fp32 rounded to fp16, fp16-operand merges 8 -> 64."""
    Lh = f16(L)
    T = np.zeros((C, C), dtype=np.float32)
    for b in range(0, C, 8):
        T[b:b + 8, b:b + 8] = f16(inv_lower_col(Lh[b:b + 8, b:b + 8]))
    for h in (8, 16, 32):
        for o in range(0, C, 2 * h):
            Y = f16(-mm32(T[o + h:o + 2 * h, o + h:o + 2 * h], Lh[o + h:o + 2 * h, o:o + h], f16))
            T[o + h:o + 2 * h, o:o + h] = f16(mm32(Y, T[o:o + h, o:o + h], f16))
    return T


def chunk(rng, regime):
    """One chunk's L and beta in `regime`: keys independent or correlated, beta in (0, 1) or (0, 2), gates strong
    (logsigmoid of U[-2, 2)) or weak (U[-0.02, 0))."""
    if "corr" in regime:
        base = rng.standard_normal(D)
        k = base + 0.3 * rng.standard_normal((C, D))
    else:
        k = rng.standard_normal((C, D))
    k = bf16(k / np.linalg.norm(k, axis=1, keepdims=True)).astype(np.float64)
    beta = rng.uniform(0, 2 if "neg" in regime else 1, C)
    g = rng.uniform(-0.02, 0, C) if "weak" in regime else -np.log1p(np.exp(-rng.uniform(-2, 2, C)))
    gam = np.cumsum(g)
    decay = np.exp(gam[:, None] - gam[None, :])
    L = np.tril(beta[:, None] * (k @ k.T) * decay, -1).astype(np.float32)  # fp32, as the L / P epilogue stores it
    return L, beta


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    regimes = ["strong", "weak", "weak corr", "weak corr neg", "strong corr neg"]
    print(f"{n} chunks a regime; errors relative (Frobenius) to the float64 inverse of the same fp32 L: median / max")
    print(f"{'regime':18s} {'T tf32 form':>22s} {'T fp16 form':>22s} {'T_v bf16, tf32':>22s} {'T_v bf16, fp16':>22s}"
          f" {'max |T|':>9s}")
    for regime in regimes:
        e = {key: [] for key in ("t32", "t16", "v32", "v16")}
        tmax = 0.0
        for _ in range(n):
            L, beta = chunk(rng, regime)
            T = np.linalg.inv(np.eye(C) + L.astype(np.float64))
            tmax = max(tmax, float(np.abs(T).max()))
            Tv = T * beta[None, :]
            nt, nv = np.linalg.norm(T), np.linalg.norm(Tv)
            for key, Tf in (("32", form_tf32(L)), ("16", form_f16(L))):
                e["t" + key].append(np.linalg.norm(Tf - T) / nt)
                e["v" + key].append(np.linalg.norm(bf16(Tf * beta[None, :].astype(np.float32)) - Tv) / nv)
        cols = " ".join(f"{np.median(e[key]):9.2e} / {np.max(e[key]):9.2e}" for key in ("t32", "t16", "v32", "v16"))
        print(f"{regime:18s} {cols} {tmax:9.3g}")


if __name__ == "__main__":
    main()
