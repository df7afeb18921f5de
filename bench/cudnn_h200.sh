#!/usr/bin/env bash
# bench/cudnn_h200.sh — the cuDNN engine family (issue 7) on the H200, one call:
#   1. build Release with Ninja -j16 (GoogleTest / nlohmann-json from the carried
#      .device-deps/: run bench/device_deps.sh here first);
#   2. test_cudnn (the CI suite; here libcudnn loads, so device-less finalize runs);
#   3. test_cudnn_gpu: every lowered op family planned for the device, run on its
#      first cudnn plan (dispatch asserted: "cudnn_eng<N>") on device buffers with
#      poisoned outputs, compared with the reference engine on fresh random inputs;
#   4. bf16 matmul 4096^3 and 8192^3 through opgraph's cudnn plan, CUDA events,
#      median of 20; bench/cudnn_vs_torch.py times torch.matmul when torch is there.
# Which libcudnn the loader picked (system 9.14 vs the torch venv's 9.19) is
# printed; OPGRAPH_LIBCUDNN=<path> overrides the search. Prints a short table
# last and writes it to $OUT/cudnn_h200.txt; the full log is $OUT/cudnn_h200.log.
#
# Device command (from the repo root, after bench/device_deps.sh here):
#   run: bash bench/cudnn_h200.sh      carry: [".device-deps"]
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"
LOG=$OUT/cudnn_h200.log
exec > >(tee "$LOG") 2>&1

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi unavailable"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
ls /usr/lib/x86_64-linux-gnu/libcudnn.so* /usr/local/cuda/lib64/libcudnn.so* 2>/dev/null | head -3

echo "== dependencies"
CMAKE_ARGS=()
if [ -d .device-deps ]; then
  source "$ROOT/bench/device_env.sh"
  # cudnn_graph.h (enums only) if the image has no cuDNN headers: device_deps.sh copies them.
  if [ -f "$PREFIX/include/cudnn_graph.h" ] && ! ls /usr/include/cudnn_graph*.h /usr/local/cuda/include/cudnn_graph*.h >/dev/null 2>&1; then
    export CUDNN_INCLUDE_DIR=$PREFIX/include
  fi
fi

echo "== build"
BUILD=${OPGRAPH_BUILD_DIR:-$ROOT/build-h200}  # shared with the other *_h200.sh scripts (same cache options)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON -DOPGRAPH_BUILD_BENCH=ON "${CMAKE_ARGS[@]}" >"$OUT/cmake.log" 2>&1 \
  || { tail -20 "$OUT/cmake.log"; exit 1; }
ninja -C "$BUILD" -j"${OPGRAPH_JOBS:-16}" test_cudnn test_cudnn_gpu >"$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1; }
echo "built"

echo "== test_cudnn (CI suite, libcudnn present)"
cpu_rc=0
"$BUILD/tests/test_cudnn" >"$OUT/test_cudnn.log" 2>&1 || cpu_rc=$?
grep -E "libcudnn|^\[  (PASSED|FAILED) " "$OUT/test_cudnn.log" | head -20

echo "== test_cudnn_gpu (cudnn plans vs reference)"
gpu_rc=0
"$BUILD/tests/test_cudnn_gpu" --gtest_filter='CudnnGpu.*' >"$OUT/test_cudnn_gpu.log" 2>&1 || gpu_rc=$?
grep -E "LIBCUDNN|Failure|off \(|build error|FAILED|PASSED" "$OUT/test_cudnn_gpu.log" | head -60

echo "== bf16 matmul timing"
bench_rc=0
"$BUILD/tests/test_cudnn_gpu" --gtest_filter='CudnnGpuBench.*' >"$OUT/bench.log" 2>&1 || bench_rc=$?
grep -E "RESULT|Failure|FAILED" -A2 "$OUT/bench.log" | head -20
torch_lines=""
if python3 -c "import torch" 2>/dev/null || [ -x /opt/torch/.venv/bin/python ]; then
  PY=python3; [ -x /opt/torch/.venv/bin/python ] && PY=/opt/torch/.venv/bin/python
  torch_lines=$($PY bench/cudnn_vs_torch.py 2>&1 | grep RESULT || true)
  echo "$torch_lines"
fi

{
  echo "cuDNN engine family on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  grep -h "LIBCUDNN" "$OUT/test_cudnn_gpu.log" | head -1
  echo "test_cudnn rc=$cpu_rc ($(grep -E '^\[  PASSED' "$OUT/test_cudnn.log" | head -1))"
  echo "test_cudnn_gpu rc=$gpu_rc: $(grep -c '^CASE .* ran on ' "$OUT/test_cudnn_gpu.log") cases ran on cudnn plans, $(grep -c '^CASE .* declined: ' "$OUT/test_cudnn_gpu.log") declined; $(grep -c 'elements off' "$OUT/test_cudnn_gpu.log") output mismatches; $(grep -c 'Failure' "$OUT/test_cudnn_gpu.log") failed assertions"
  grep -h "^CASE" "$OUT/test_cudnn_gpu.log"
  printf "%-12s %-7s %-16s %-10s %s\n" what n plan median_ms TFLOP/s
  grep -h RESULT "$OUT/bench.log" | sed -E 's/.*matmul_bf16 n=([0-9]+) plan=([^ ]+) median_ms=([0-9.]+) tflops=([0-9.]+)/opgraph      \1    \2 \3 \4/'
  echo "$torch_lines" | grep RESULT | sed -E 's/.*torch_bf16 n=([0-9]+) cudnn=([0-9]+) median_ms=([0-9.]+) tflops=([0-9.]+)/torch        \1    cudnn \2 (torch) \3 \4/'
} >"$OUT/cudnn_h200.txt"
echo "== summary"
cat "$OUT/cudnn_h200.txt"
exit $(( cpu_rc || gpu_rc || bench_rc ))
