"""opgraph.training.GatedDeltaNet on host buffers (the float64 reference engine): the forward
against a float64 token recurrence, the backward against central finite differences of a scalar
loss through the forward (every input, varlen with an empty sequence, grouped heads, an initial
state), and one graph per kind and layout class across calls of other T and N (execute-time
overrides)."""
import numpy as np
import pytest

import opgraph
from opgraph import training

F32 = np.float32


def inputs(rng, lens, hq=1, hv=2, d=4, h0=True):
    t, n = sum(lens), len(lens)
    ho = max(hq, hv)
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    q = rng.standard_normal((t, hq, d)).astype(F32)
    k = rng.standard_normal((t, hq, d)).astype(F32)
    k /= np.linalg.norm(k, axis=-1, keepdims=True)  # contractive steps: finite differences stay smooth
    v = rng.standard_normal((t, hv, d)).astype(F32)
    g = np.log(1 / (1 + np.exp(-rng.standard_normal((t, ho))))).astype(F32)  # logsigmoid
    beta = rng.uniform(0.1, 0.9, (t, ho)).astype(F32)
    init = (0.3 * rng.standard_normal((n, ho, d, d))).astype(F32) if h0 else None
    return dict(q=q, k=k, v=v, g=g, beta=beta, cu_seqlens=cu, initial_state=init)


def recurrence(x, scale):
    """float64 token recurrence (research note §1.2): S <- a S; S <- S + beta k (v - S^T k)^T; o = scale S^T q,
    with S [K, V]; the IR's states are V-major ([.., V, K] = S^T)."""
    q, k, v, g, beta, cu = (x[n].astype(np.float64) for n in ("q", "k", "v", "g", "beta", "cu_seqlens"))
    cu = x["cu_seqlens"]
    t, hq, d = q.shape
    hv = v.shape[1]
    ho = max(hq, hv)
    o = np.zeros((t, ho, d))
    fin = np.zeros((len(cu) - 1, ho, d, d))
    for s in range(len(cu) - 1):
        for h in range(ho):
            st = x["initial_state"][s, h].astype(np.float64).T.copy() if x.get("initial_state") is not None \
                else np.zeros((d, d))
            qh, kh, vh = h // (ho // hq), h // (ho // hq), h // (ho // hv)
            for i in range(cu[s], cu[s + 1]):
                st *= np.exp(g[i, h])
                kv = k[i, kh]
                st += beta[i, h] * np.outer(kv, v[i, vh] - st.T @ kv)
                o[i, h] = scale * st.T @ q[i, qh]
            fin[s, h] = st.T
    return o, fin


def test_forward_matches_the_token_recurrence():
    rng = np.random.default_rng(1)
    x = inputs(rng, [3, 0, 5], hq=1, hv=2)
    layer = training.GatedDeltaNet()
    o, fin = layer.forward(**x)
    want_o, want_fin = recurrence(x, 1 / np.sqrt(4))
    np.testing.assert_allclose(o, want_o, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(fin, want_fin, rtol=2e-5, atol=2e-5)


def loss(layer, x, w_o, w_f):
    o, fin = layer.forward(**x)
    return float((o.astype(np.float64) * w_o).sum() + (fin.astype(np.float64) * w_f).sum())


@pytest.mark.parametrize("hq,hv", [(1, 2), (2, 2)])
def test_backward_matches_finite_differences(hq, hv):
    rng = np.random.default_rng(2 + hq)
    x = inputs(rng, [2, 0, 3], hq=hq, hv=hv)
    layer = training.GatedDeltaNet()
    o, fin = layer.forward(**x)
    w_o = rng.standard_normal(o.shape)
    w_f = rng.standard_normal(fin.shape)
    grads = layer.backward(**x, d_o=w_o.astype(F32), d_final_state=w_f.astype(F32))
    assert set(grads) == {"q", "k", "v", "g", "beta", "initial_state"}
    eps = 1e-2
    for name in ("q", "k", "v", "g", "beta", "initial_state"):
        base = x[name]
        want = np.zeros(base.shape)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                y = dict(x)
                y[name] = base.copy()
                y[name][idx] += sign * eps
                want[idx] += sign * loss(layer, y, w_o, w_f) / (2 * eps)
        got = grads[name].astype(np.float64)
        assert grads[name].shape == base.shape, name
        err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-6)
        assert err < 2e-2, f"d{name}: max error {err:.3g} relative to the largest gradient"


def test_one_graph_per_kind_and_layout_class():
    rng = np.random.default_rng(5)
    layer = training.GatedDeltaNet(use_qk_l2norm=True)
    fresh = training.GatedDeltaNet(use_qk_l2norm=True)
    for lens in ([3, 4], [5, 1, 6], [2, 9]):  # other T and N: the same class (extents above 1 stay above 1)
        x = inputs(rng, lens)
        o, fin = layer.forward(**x)
        d_o = rng.standard_normal(o.shape).astype(F32)
        grads = layer.backward(**x, d_o=d_o)
        assert layer.graph_count == 2, "a forward and a backward graph, reused through overrides"
        # The same call on graphs built for these shapes agrees.
        o2, fin2 = fresh.forward(**x)
        np.testing.assert_allclose(o, o2, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(fin, fin2, rtol=1e-6, atol=1e-6)
        g2 = fresh.backward(**x, d_o=d_o)
        for name in grads:
            np.testing.assert_allclose(grads[name], g2[name], rtol=1e-6, atol=1e-6, err_msg=name)
        fresh = training.GatedDeltaNet(use_qk_l2norm=True)
    # Another class (no initial state): a new pair of graphs.
    x = inputs(rng, [3, 4], h0=False)
    layer.forward(**x)
    assert layer.graph_count == 3


def test_torch_autograd_function_needs_torch():
    torch = pytest.importorskip("torch")  # the device machine runs it (scripts/gpu_python.sh)
    rng = np.random.default_rng(7)
    x = inputs(rng, [3, 0, 4])
    tx = {n: torch.tensor(v, requires_grad=n not in ("cu_seqlens",)) if v is not None else None for n, v in x.items()}
    layer = training.GatedDeltaNet()
    o, fin = training.gdn(tx["q"], tx["k"], tx["v"], tx["g"], tx["beta"], tx["cu_seqlens"], tx["initial_state"],
                          layer=layer)
    (o.double().sum() + fin.double().sum()).backward()
    grads = layer.backward(**x, d_o=np.ones(o.shape, F32), d_final_state=np.ones(fin.shape, F32))
    for name in ("q", "k", "v", "g", "beta", "initial_state"):
        np.testing.assert_allclose(tx[name].grad.numpy(), grads[name], rtol=1e-5, atol=1e-5, err_msg=name)
