#!/usr/bin/env bash
# bench/gpu_check_bins.sh — run HERE (the dev machine): builds, Release, the GPU
# test and bench binaries bench/gpu_check_h200.sh runs on the device, and copies
# them (stripped) with the commit id into .dev/bin (git-ignored through
# .git/info/exclude), plus .device-deps for the Python build there. The
# binaries dlopen libcuda / libnvrtc / libcudnn at run time: nothing links them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${OPGRAPH_GPU_BIN_BUILD:-build-gpu-bins}
bash bench/device_deps.sh >/dev/null
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >>"$(git rev-parse --git-path info/exclude)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON -DOPGRAPH_BUILD_BENCH=ON \
  -DCMAKE_PREFIX_PATH="$PWD/.device-deps/prefix" >/dev/null
ninja -C "$BUILD" -j"$(nproc)" test_cudnn test_cudnn_gpu test_gemm_gpu gemm_bench opgraph_tool
rm -rf .dev/bin && mkdir -p .dev/bin
for b in tests/test_cudnn tests/test_cudnn_gpu tests/test_gemm_gpu bench/gemm_bench tools/opgraph; do
  strip -o ".dev/bin/$(basename "$b")" "$BUILD/$b"
done
git rev-parse --short HEAD >.dev/bin/COMMIT
git status --porcelain | grep -q . && echo "+uncommitted" >>.dev/bin/COMMIT
du -sh .dev/bin
