"""GPU tests (H200): sdpa, matmul+bias+gelu and rmsnorm planned for the device and run by opgraph
on torch CUDA tensors, against torch computed in float32; each asserts that a GPU plan ran (never
the host reference). Also: planning targets the handle's device (or the CUDA tensors' device),
host numpy on a device graph runs on the reference, device buffers on a host plan are refused.

Without CUDA+torch these tests are skipped, except under OPGRAPH_REQUIRE_GPU=1 (scripts/gpu_python.sh
on the GPU machine), where a missing torch or device FAILS them: a skip never counts as a pass there.

Tolerances: bf16/fp16 outputs, fp32 accumulation — |err| <= 2e-2 + 2e-2 * |ref| for SDPA and
rmsnorm, 1e-2 + 1e-2 * |ref| for the matmul chain (K = 256).
"""
import os

import numpy as np
import pytest

import opgraph

REQUIRE_GPU = os.environ.get("OPGRAPH_REQUIRE_GPU") == "1"
if REQUIRE_GPU:
    import torch  # an ImportError fails the module: the GPU run must have torch
else:
    torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not REQUIRE_GPU and not torch.cuda.is_available(), reason="needs a CUDA device")]


def device_graph(**context):
    """A graph on a handle created on the current device (cudnn.pygraph's pattern)."""
    handle = opgraph.create_handle()
    assert handle.device == torch.cuda.current_device(), handle.device_error
    opgraph.set_stream(handle, torch.cuda.current_stream())
    return opgraph.pygraph(handle=handle, **context)


def plan_and_build(g):
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.build_plans()
    name = g.get_plan_name_at_index(g.get_selected_plan_index())
    print("plan:", name, "of", [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())])
    assert not name.startswith("reference"), f"a GPU plan should run, got {name}; notes: {g.planning_notes}"
    return torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)


def close(out, ref, atol, rtol):
    err = (out.float() - ref).abs()
    bound = atol + rtol * ref.abs()
    worst = (err - bound).max().item()
    assert worst <= 0, f"max excess error {worst} (max |err| {err.max().item()})"


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_vs_torch(causal):
    torch.manual_seed(1234 + causal)
    b, h, s, d = 2, 4, 256, 64
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    g = device_graph(io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                     compute_data_type=torch.float32)
    Q, K, V = (g.tensor_like(t, name=n) for t, n in ((q, "q"), (k, "k"), (v, "v")))
    o, stats = g.sdpa(q=Q, k=K, v=V, attn_scale=d ** -0.5, use_causal_mask=causal, generate_stats=False)
    assert stats is None
    o.set_output(True).set_dim([b, h, s, d]).set_stride(list(q.stride())).set_data_type(torch.bfloat16)
    ws = plan_and_build(g)
    out = torch.full_like(q, float("nan"))
    g.execute({Q: q, K: k, V: v, o: out}, ws)
    torch.cuda.synchronize()
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                           scale=d ** -0.5)
    close(out, ref, 2e-2, 2e-2)


def test_matmul_bias_gelu_vs_torch():
    torch.manual_seed(7)
    m, kdim, n = 128, 256, 192
    a = torch.randn(1, m, kdim, device="cuda", dtype=torch.float16)
    w = torch.randn(1, kdim, n, device="cuda", dtype=torch.float16) * kdim ** -0.5
    bias = torch.randn(1, 1, n, device="cuda", dtype=torch.float16)
    g = device_graph(io_data_type=torch.float16, intermediate_data_type=torch.float32,
                     compute_data_type=torch.float32)
    A, W, B = g.tensor_like(a), g.tensor_like(w), g.tensor_like(bias)
    y = g.gelu(input=g.bias(input=g.matmul(A=A, B=W), bias=B))
    y.set_output(True).set_data_type(torch.float16)
    ws = plan_and_build(g)
    out = torch.full((1, m, n), float("nan"), device="cuda", dtype=torch.float16)
    g.execute({A: a, W: w, B: bias, y: out}, ws)
    torch.cuda.synchronize()
    ref = torch.nn.functional.gelu(a.float() @ w.float() + bias.float())
    close(out, ref, 1e-2, 1e-2)


def test_rmsnorm_vs_torch():
    torch.manual_seed(11)
    n, hidden = 64, 1024
    x = torch.randn(n, hidden, 1, 1, device="cuda", dtype=torch.bfloat16)
    scale = torch.randn(1, hidden, 1, 1, device="cuda", dtype=torch.bfloat16)
    g = device_graph(io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                     compute_data_type=torch.float32)
    X, S = g.tensor_like(x), g.tensor_like(scale)
    y, inv_var = g.rmsnorm(norm_forward_phase=opgraph.norm_forward_phase.INFERENCE, input=X, scale=S,
                           epsilon=1e-5)
    assert inv_var is None  # INFERENCE produces no statistics
    y.set_output(True).set_data_type(torch.bfloat16)
    ws = plan_and_build(g)
    out = torch.full_like(x, float("nan"))
    g.execute({X: x, S: scale, y: out}, ws)
    torch.cuda.synchronize()
    xf = x.float()
    ref = xf * torch.rsqrt(xf.pow(2).mean(dim=1, keepdim=True) + 1e-5) * scale.float()
    close(out, ref, 2e-2, 2e-2)


def test_cuda_tensors_make_the_graph_plan_for_their_device_and_prepared_packs_run():
    torch.manual_seed(3)
    a = torch.randn(1, 8, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(1, 8, 512, device="cuda", dtype=torch.float16)
    g = opgraph.pygraph(io_data_type=torch.float16, compute_data_type=torch.float32)  # no handle: the
    # CUDA tensors given to tensor_like decide the target
    A, B = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
    assert g._has_device_target
    C = g.add(a=A, b=B)
    C.set_output(True).set_data_type(torch.float16)
    ws = plan_and_build(g)
    c = torch.full_like(a, float("nan"))
    g.execute({A.uid: a, B.uid: b, C.uid: c}, ws)  # uid keys
    torch.cuda.synchronize()
    close(c, a.float() + b.float(), 1e-3, 1e-3)
    c.fill_(float("nan"))
    pack = g.prepare_variant_pack({A: a, B: b, C: c})
    assert len(pack) == 3
    g.execute(pack, ws)
    g._execute_repeat({A: a, B: b, C: c}, ws, 3)
    torch.cuda.synchronize()
    close(c, a.float() + b.float(), 1e-3, 1e-3)


def test_host_numpy_on_a_device_graph_runs_on_the_reference():
    rng = np.random.default_rng(int(torch.randint(0, 2**31 - 1, (1,)).item()))
    x = rng.standard_normal((4, 32)).astype(np.float32)
    g = device_graph(io_data_type=np.float32, compute_data_type=np.float32)
    X = g.tensor_like(x, name="x")
    y = g.relu(input=X)
    y.set_output(True)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.build_plans()
    out = np.full_like(x, np.nan)
    g.execute({X: x, y: out}, np.empty(max(g.get_workspace_size(), 1), np.uint8))
    np.testing.assert_allclose(out, np.maximum(x, 0), rtol=1e-6, atol=1e-6)


def test_device_buffers_on_a_host_plan_are_refused_naming_the_tensor():
    x_np = np.random.default_rng(5).standard_normal((4, 32)).astype(np.float32)
    g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)  # host target
    X = g.tensor_like(x_np, name="xin")
    y = g.relu(input=X)
    y.set_output(True)
    g.build()
    x = torch.from_numpy(x_np).cuda()
    with pytest.raises(ValueError, match=r"uid \d+ \(tensor 'xin'\).*device memory"):
        g.execute({X: x, y: torch.empty_like(x)})
