"""bench/gemm_torch.py — the cuBLAS anchor for bench/gemm_h200.sh: torch.matmul
(bf16, A [M, K] row-major @ W [N, K]^T, the layout gemm_bench uses) and torch
eager matmul + bias + gelu (two shapes), timed with CUDA events (median of 10 x 10 launches).
OPGRAPH_GEMM_SHAPES="MxNxK/chain,..." (chain "none" or "bias+gelu") keeps only those.
OPGRAPH_GEMM_TORCH_KERNELS=1 also prints the GPU kernels each case launches (torch.profiler), so a
table can say which cuBLAS kernel (tile, cluster) it was measured against.
Prints: TORCH shape=MxNxK chain=.. tflops=.. [KERNELS shape=.. chain=.. names=..]"""
import os
import torch

_want = [w for w in os.environ.get("OPGRAPH_GEMM_SHAPES", "").split(",") if w]

def wanted(m, n, k, chain):
    return not _want or "%dx%dx%d/%s" % (m, n, k, chain) in _want

def bench(fn, flops):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(10):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(10):
            fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 10 / 1e3)
    times.sort()
    return flops / times[len(times) // 2] / 1e12

def kernels(fn):
    """The names of the GPU kernels one call of fn launches."""
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.key for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA})

def report(m, n, k, chain, fn):
    print("TORCH shape=%dx%dx%d chain=%s tflops=%.1f" % (m, n, k, chain, bench(fn, 2.0 * m * n * k)), flush=True)
    if os.environ.get("OPGRAPH_GEMM_TORCH_KERNELS") == "1":
        print("KERNELS shape=%dx%dx%d chain=%s names=%s" % (m, n, k, chain, " | ".join(kernels(fn))), flush=True)

shapes = [(4096, 4096, 4096), (8192, 8192, 8192)]
shapes += [(m, n, k) for m in (16, 128, 1024, 4096, 16384)
           for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336), (28672, 8192), (8192, 28672))]
torch.manual_seed(0)
for (m, n, k) in shapes:
    if not wanted(m, n, k, "none"):
        continue
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    report(m, n, k, "none", lambda: torch.matmul(a, w.t()))
    del a, w
for (m, n, k) in ((4096, 4096, 4096), (16, 4096, 4096)):
    if not wanted(m, n, k, "bias+gelu"):
        continue
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    f = lambda: torch.nn.functional.gelu(torch.matmul(a, w.t()) + bias)
    report(m, n, k, "bias+gelu", f)
