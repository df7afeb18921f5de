"""GPU tests (H200): sdpa, matmul+bias+gelu and rmsnorm planned and run by opgraph on torch
CUDA tensors, against torch computed in float32. Skipped (and not counted) without CUDA+torch.

Tolerances: bf16/fp16 outputs, fp32 accumulation — |err| <= 2e-2 + 2e-2 * |ref| for SDPA and
rmsnorm, 1e-2 + 1e-2 * |ref| for the matmul chain (K = 256).
"""
import pytest

torch = pytest.importorskip("torch")
import opgraph  # noqa: E402

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
              pytest.mark.skipif(not opgraph.HAS_PLANNING, reason="needs the planning layer")]

def device_kwargs():
    """Plan for the GPU torch runs on (deviceless planning otherwise targets the host)."""
    major, minor = torch.cuda.get_device_capability()
    return {"sm_version": major * 10 + minor, "sm_count": torch.cuda.get_device_properties(0).multi_processor_count}


def plan_and_build(g):
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.build_plans()
    name = g.get_plan_name_at_index(g.get_selected_plan_index())
    print("plan:", name)
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
    g = opgraph.pygraph(io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                        compute_data_type=torch.float32, handle=opgraph.create_handle(), **device_kwargs())
    Q, K, V = (g.tensor_like(t, name=n) for t, n in ((q, "q"), (k, "k"), (v, "v")))
    o, stats = g.sdpa(q=Q, k=K, v=V, attn_scale=d ** -0.5, use_causal_mask=causal, generate_stats=False)
    assert stats is None
    o.set_output(True).set_dim([b, h, s, d]).set_stride(list(q.stride())).set_data_type(torch.bfloat16)
    ws = plan_and_build(g)
    out = torch.empty_like(q)
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
    g = opgraph.pygraph(io_data_type=torch.float16, intermediate_data_type=torch.float32,
                        compute_data_type=torch.float32, **device_kwargs())
    A, W, B = g.tensor_like(a), g.tensor_like(w), g.tensor_like(bias)
    y = g.gelu(input=g.bias(input=g.matmul(A=A, B=W), bias=B))
    y.set_output(True).set_data_type(torch.float16)
    ws = plan_and_build(g)
    out = torch.empty(1, m, n, device="cuda", dtype=torch.float16)
    g.execute({A: a, W: w, B: bias, y: out}, ws)
    torch.cuda.synchronize()
    ref = torch.nn.functional.gelu(a.float() @ w.float() + bias.float())
    close(out, ref, 1e-2, 1e-2)


def test_rmsnorm_vs_torch():
    torch.manual_seed(11)
    n, hidden = 64, 1024
    x = torch.randn(n, hidden, 1, 1, device="cuda", dtype=torch.bfloat16)
    scale = torch.randn(1, hidden, 1, 1, device="cuda", dtype=torch.bfloat16)
    g = opgraph.pygraph(io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                        compute_data_type=torch.float32, **device_kwargs())
    X, S = g.tensor_like(x), g.tensor_like(scale)
    y, inv_var = g.rmsnorm(norm_forward_phase=opgraph.norm_forward_phase.INFERENCE, input=X, scale=S,
                           epsilon=1e-5)
    assert inv_var is None  # INFERENCE produces no statistics
    y.set_output(True).set_data_type(torch.bfloat16)
    ws = plan_and_build(g)
    out = torch.empty_like(x)
    g.execute({X: x, S: scale, y: out}, ws)
    torch.cuda.synchronize()
    xf = x.float()
    ref = xf * torch.rsqrt(xf.pow(2).mean(dim=1, keepdim=True) + 1e-5) * scale.float()
    close(out, ref, 2e-2, 2e-2)
