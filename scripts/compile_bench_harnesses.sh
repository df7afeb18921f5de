#!/usr/bin/env bash
# scripts/compile_bench_harnesses.sh — the standalone CUDA benches under bench/ (built by nvcc on the GPU
# machine by their scripts; gdn_bwd_load_probe.cu by hand) still compile here against the tree's kernel headers
# and launch contracts (GdnParams, GdnBwdParams), and bench/nvrtc_cubin.cpp, bench/gdn_bwd_smem.cpp and
# bench/gdn_bwd_fused_smem.cpp (at the engine's defines and under GDN_BWD_FWD_STAGE=1) build: a ctest test (bench_harnesses_compile), so a
# change to a kernel's parameters cannot leave a device-side harness broken until a device call finds it.
# Compile only (no GPU, no libcuda needed), with the flags of each harness's script.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || { echo "nvcc not on PATH"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
nvcc -std=c++20 -O0 -arch=sm_90 -Isrc/engines -Ibench -c bench/gdn_bwd_ab.cu -o "$dir/a.o"
nvcc -std=c++20 -O0 -Isrc/engines -c bench/gdn_fused_ab.cu -o "$dir/b.o"
nvcc -std=c++20 -O0 -arch=sm_90a -DGDN_D=128 -DGDN_IO=0 -Isrc/engines -Isrc/runtime/kernels/include \
  -c bench/gdn_decode_sweep.cu -o "$dir/c.o"
nvcc -std=c++17 -c bench/nvrtc_cubin.cpp -o "$dir/d.o"
nvcc -std=c++17 -O0 -arch=sm_90a -c bench/gdn_bwd_load_probe.cu -o "$dir/h.o"
g++ -std=c++17 -DGROUPED=1 -Isrc/engines -c bench/gdn_bwd_smem.cpp -o "$dir/e.o"
g++ -std=c++17 -Isrc/engines -c bench/gdn_bwd_fused_smem.cpp -o "$dir/f.o"
g++ -std=c++17 -DGDN_BWD_FWD_STAGE=1 -Isrc/engines -c bench/gdn_bwd_fused_smem.cpp -o "$dir/g.o"
echo "bench harnesses compile"
