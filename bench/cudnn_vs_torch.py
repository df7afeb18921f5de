#!/usr/bin/env python3
# bench/cudnn_vs_torch.py — torch.matmul bf16 at 4096^3 and 8192^3, timed like
# opgraph's cudnn plan in test_cudnn_gpu (CUDA events, 5 warm-ups, median of
# 20), for bench/cudnn_h200.sh's table. Prints "RESULT torch_bf16 ..." lines.
import statistics

import torch


def main() -> None:
    cudnn_v = torch.backends.cudnn.version() or 0
    for n in (4096, 8192):
        a = torch.full((n, n), 1.0, dtype=torch.bfloat16, device="cuda")
        b = torch.full((n, n), 0.5, dtype=torch.bfloat16, device="cuda")
        for _ in range(5):
            c = a @ b
        torch.cuda.synchronize()
        assert float(c[0, 0]) == n * 0.5
        ms = []
        for _ in range(20):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            c = a @ b
            e1.record()
            e1.synchronize()
            ms.append(e0.elapsed_time(e1))
        med = statistics.median(ms)
        print(f"RESULT torch_bf16 n={n} cudnn={cudnn_v} median_ms={med:.4f} tflops={2 * n**3 / (med * 1e-3) / 1e12:.1f}")


if __name__ == "__main__":
    main()
