#!/usr/bin/env python3
# bench/cudnn_sdpa_vs_torch.py — torch's own cuDNN SDPA (sdpa_kernel(CUDNN_ATTENTION)
# + F.scaled_dot_product_attention) on bf16 b=4 h=16 s=4096 d=128, causal and
# not, timed like opgraph's cudnn plan in test_cudnn_gpu_sdpa.cpp (CUDA events,
# 5 warm-ups, median of 20, inference: no grad). Prints "RESULT torch_sdpa ..."
# lines and which libcudnn torch loaded.
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def main() -> None:
    b, h, s, d = 4, 16, 4096, 128
    cudnn_v = torch.backends.cudnn.version() or 0
    q, k, v = (torch.randn(b, h, s, d, dtype=torch.bfloat16, device="cuda") for _ in range(3))
    for causal in (False, True):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION), torch.no_grad():
            for _ in range(5):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            torch.cuda.synchronize()
            ms = []
            for _ in range(20):
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                e1.record()
                e1.synchronize()
                ms.append(e0.elapsed_time(e1))
        assert torch.isfinite(o).all()
        med = statistics.median(ms)
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        print(f"RESULT torch_sdpa causal={int(causal)} cudnn={cudnn_v} median_ms={med:.4f} "
              f"tflops={flops / (med * 1e-3) / 1e12:.1f}")
    import glob, os
    lib = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cudnn", "lib", "libcudnn.so.9"))
    print("TORCH_LIBCUDNN", os.path.realpath(lib[0]) if lib else "unknown")


if __name__ == "__main__":
    main()
