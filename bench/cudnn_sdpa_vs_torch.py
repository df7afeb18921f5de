#!/usr/bin/env python3
# bench/cudnn_sdpa_vs_torch.py — torch's own cuDNN SDPA (sdpa_kernel(CUDNN_ATTENTION)
# + F.scaled_dot_product_attention) on bf16 b=4 h=16 s=4096 d=128, causal and
# not, timed like opgraph's cudnn plans in test_cudnn_gpu_sdpa.cpp (CUDA events,
# 5 warm-ups, median of 20): the forward under no_grad, and the backward through
# autograd (torch.autograd.grad of one recorded forward, retain_graph, so no
# gradient accumulation is timed). FLOPs: forward 4 b h s^2 d, backward 2.5x,
# halved when causal. Prints "RESULT torch_sdpa ..." / "RESULT torch_sdpa_bwd ..."
# lines and which libcudnn torch loaded.
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def timed(fn) -> float:
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(20):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        ms.append(e0.elapsed_time(e1))
    return statistics.median(ms)


def main() -> None:
    b, h, s, d = 4, 16, 4096, 128
    cudnn_v = torch.backends.cudnn.version() or 0
    q, k, v = (torch.randn(b, h, s, d, dtype=torch.bfloat16, device="cuda") for _ in range(3))
    for causal in (False, True):
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION), torch.no_grad():
            out = {}
            med = timed(lambda: out.__setitem__("o", F.scaled_dot_product_attention(q, k, v, is_causal=causal)))
        assert torch.isfinite(out["o"]).all()
        print(f"RESULT torch_sdpa causal={int(causal)} cudnn={cudnn_v} median_ms={med:.4f} "
              f"tflops={flops / (med * 1e-3) / 1e12:.1f}")
    for causal in (False, True):
        flops = 2.5 * 4 * b * h * s * s * d / (2 if causal else 1)
        qg, kg, vg = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            o = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
            do = torch.randn_like(o)
            grads = {}
            med = timed(lambda: grads.__setitem__("g", torch.autograd.grad(o, (qg, kg, vg), do, retain_graph=True)))
        assert all(torch.isfinite(g).all() for g in grads["g"])
        print(f"RESULT torch_sdpa_bwd causal={int(causal)} cudnn={cudnn_v} median_ms={med:.4f} "
              f"tflops={flops / (med * 1e-3) / 1e12:.1f}")
    import glob, os
    lib = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cudnn", "lib", "libcudnn.so.9"))
    print("TORCH_LIBCUDNN", os.path.realpath(lib[0]) if lib else "unknown")


if __name__ == "__main__":
    main()
