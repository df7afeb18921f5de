"""ALiBi slopes as cudnn-frontend computes them (include/cudnn_frontend_utils.h get_alibi_slope, and
the torch reference of its test_mhas): for h_q heads, n = the largest power of two <= h_q; heads
0..n-1 take 2^(-8 (h + 1) / n), the rest the odd terms of the 2n-head sequence. opgraph used
2^(-8 (h + 1) / h_q), which differs whenever h_q is not a power of two (the H200 conformance run's
test_mhas ALiBi cases, h_q = 6, were wrong on every opgraph plan). Checked here on the host
reference engine, fresh random inputs, output poisoned, against a float64 numpy SDPA."""
import math

import numpy as np
import pytest

import opgraph

F32 = np.float32


def cudnn_slopes(h_q):
    n = 2 ** math.floor(math.log2(h_q))
    m = [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]
    m += [2.0 ** (-4.0 * (2 * k + 1) / n) for k in range(h_q - n)]
    return np.array(m)


def reference(q, k, v, scale, slopes):
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    s_q, s_kv = s.shape[2], s.shape[3]
    dist = np.arange(s_kv)[None, :] - np.arange(s_q)[:, None]
    s = s + slopes[None, :, None, None] * dist[None, None]
    s = np.where(dist[None, None] > 0, -np.inf, s)  # causal, top-left
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("bhqk,bhkd->bhqd", p, v)


@pytest.mark.parametrize("h_q", [6, 8, 3, 1])
def test_sdpa_alibi_uses_cudnns_slopes(h_q):
    rng = np.random.default_rng()
    b, s_q, s_kv, d = 2, 5, 7, 8
    q = rng.standard_normal((b, h_q, s_q, d)).astype(F32)
    k = rng.standard_normal((b, h_q, s_kv, d)).astype(F32)
    v = rng.standard_normal((b, h_q, s_kv, d)).astype(F32)
    scale = 1 / math.sqrt(d)
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    Q, K, V = (g.tensor(name=n, dim=list(a.shape), data_type=F32) for n, a in (("Q", q), ("K", k), ("V", v)))
    O, _ = g.sdpa(Q, K, V, attn_scale=scale, use_alibi_mask=True, diagonal_alignment=opgraph.diagonal_alignment.TOP_LEFT,
                  right_bound=0, generate_stats=False, name="attn")
    O.set_output(True).set_data_type(F32)
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    o = np.full((b, h_q, s_q, d), np.nan, F32)
    g.execute({Q: q, K: k, V: v, O: o}, None)
    want = reference(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), scale, cudnn_slopes(h_q))
    np.testing.assert_allclose(o, want, rtol=2e-5, atol=2e-5)
