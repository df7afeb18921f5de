"""Training a small Gated DeltaNet layer through opgraph on the GPU (scripts/gpu_python.sh runs it on
the H200): the same model, initial weights, data and optimiser run twice for STEPS Adam steps — once
on CUDA tensors (the linear_attention family's gdn and gdn_bwd kernels, bf16 q / k / v) and once on CPU
tensors of the same dtypes (the float64 reference engine) — and the GPU loss curve must track the
reference's: every RECORD-th step within CURVE_RTOL of it (relative) plus CURVE_ATOL of the first loss
(the layer fits its 256 tokens, and a loss of 1e-6 differs by more than 10 % between two runs in bf16),
and both must have learned (the last loss at most LEARNED of the first).

Without CUDA + torch it is skipped, except under OPGRAPH_REQUIRE_GPU=1, where a missing torch or device
fails it."""
import copy
import os

import pytest

from opgraph import training

REQUIRE_GPU = os.environ.get("OPGRAPH_REQUIRE_GPU") == "1"
if REQUIRE_GPU:
    import torch  # an ImportError fails the module: the GPU run must have torch
else:
    torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.skipif(not REQUIRE_GPU and not torch.cuda.is_available(), reason="needs a CUDA device")]

STEPS = 200          # Adam steps per run
RECORD = 20          # the curve is compared every RECORD steps
CURVE_RTOL = 0.10    # |loss_gpu - loss_ref| <= CURVE_RTOL * loss_ref + CURVE_ATOL * loss_ref[0] at each compared step
CURVE_ATOL = 1e-3
LEARNED = 0.5        # last loss <= LEARNED * first loss, on both runs
LENS = [96, 0, 160]  # varlen with an empty sequence
HQ, HV, D, C_IN = 2, 4, 64, 32


class Layer(torch.nn.Module):
    """x [T, C_IN] -> q, k [T, HQ, D], v [T, HV, D] (bf16), g = logsigmoid, beta = sigmoid [T, HO] (fp32)
    -> gdn (opgraph.training) -> a linear readout of O [T, HO * D]."""

    def __init__(self):
        super().__init__()
        ho = max(HQ, HV)
        self.q = torch.nn.Linear(C_IN, HQ * D, bias=False)
        self.k = torch.nn.Linear(C_IN, HQ * D, bias=False)
        self.v = torch.nn.Linear(C_IN, HV * D, bias=False)
        self.g = torch.nn.Linear(C_IN, ho)
        self.b = torch.nn.Linear(C_IN, ho)
        self.out = torch.nn.Linear(ho * D, 1)

    def forward(self, x, cu, gdn_layer):
        t = x.shape[0]
        q = self.q(x).view(t, HQ, D).to(torch.bfloat16)
        k = self.k(x).view(t, HQ, D).to(torch.bfloat16)
        v = self.v(x).view(t, HV, D).to(torch.bfloat16)
        g = torch.nn.functional.logsigmoid(self.g(x)).float().contiguous()
        beta = torch.sigmoid(self.b(x)).float().contiguous()
        o, _ = training.gdn(q, k, v, g, beta, cu, None, layer=gdn_layer)
        return self.out(o.float().reshape(t, -1)).squeeze(-1)


def train(model, x, y, cu, device):
    model = model.to(device)
    x, y, cu = x.to(device), y.to(device), cu.to(device)
    gdn_layer = training.GatedDeltaNet(use_qk_l2norm=True)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.mean((model(x, cu, gdn_layer) - y) ** 2)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach().cpu()))
    # One forward and one backward graph for the whole run (one layout class).
    assert gdn_layer.graph_count == 2
    return losses


def test_training_tracks_the_reference_loss_curve():
    torch.manual_seed(1234)
    t = sum(LENS)
    cu = torch.tensor([0] + [sum(LENS[:i + 1]) for i in range(len(LENS))], dtype=torch.int32)
    x = torch.randn(t, C_IN)
    # A target the layer can learn: a smooth function of a running mean of the inputs per sequence.
    y = torch.zeros(t)
    for s in range(len(LENS)):
        a, b = int(cu[s]), int(cu[s + 1])
        if b > a:
            run = torch.cumsum(x[a:b, :4], 0) / torch.arange(1, b - a + 1).unsqueeze(1)
            y[a:b] = torch.sin(2 * run[:, 0]) + 0.5 * run[:, 1] * run[:, 2]
    model = Layer()
    ref = train(copy.deepcopy(model), x, y, cu, "cpu")
    gpu = train(copy.deepcopy(model), x, y, cu, "cuda")
    for i in range(0, STEPS, RECORD):
        print(f"step {i:4d}  loss gpu {gpu[i]:.3e}  reference {ref[i]:.3e}")
    for i in list(range(0, STEPS, RECORD)) + [STEPS - 1]:
        assert abs(gpu[i] - ref[i]) <= CURVE_RTOL * ref[i] + CURVE_ATOL * ref[0], \
            f"step {i}: gpu {gpu[i]:.3e}, reference {ref[i]:.3e}"
    assert ref[-1] <= LEARNED * ref[0] and gpu[-1] <= LEARNED * gpu[0], (ref[0], ref[-1], gpu[0], gpu[-1])
