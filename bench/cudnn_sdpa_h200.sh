#!/usr/bin/env bash
# bench/cudnn_sdpa_h200.sh — SDPA through the cuDNN engine family (issue 7) on the
# H200, one call:
#   1. test_cudnn (the CI suite; libcudnn loads there, so device-less finalize runs);
#   2. test_cudnn_gpu Cases/SdpaGpu.*: every SDPA case (fwd/bwd, causal, sliding
#      window, bottom-right, GQA, padding, THD ragged, paged, ALiBi, Max/Sum_exp,
#      Bias + dBias, SINK_TOKEN) on its first cudnn
#      plan (dispatch asserted: "cudnn_eng<N>") vs the reference engine;
#   3. bf16 SDPA forward AND backward b=4 h=16 s=4096 d=128, causal and not, through
#      opgraph's cudnn plan with the system libcudnn AND with torch's libcudnn
#      (OPGRAPH_LIBCUDNN=<torch wheel's nvidia/cudnn/lib/libcudnn.so.9>), then
#      torch's own cuDNN SDPA fwd / autograd bwd (bench/cudnn_sdpa_vs_torch.py) in the same call.
# Binaries: $OPGRAPH_SDPA_BIN (a folder holding test_cudnn and test_cudnn_gpu,
# e.g. carried prebuilt) or a Release build here (-j16, .device-deps as in
# cudnn_h200.sh). Prints a short table last ($OUT/cudnn_sdpa_h200.txt); logs in $OUT.
#
# Device command: run: cd .dev/sdpa && OPGRAPH_SDPA_BIN=$PWD/prebuilt bash bench/cudnn_sdpa_h200.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/cudnn_sdpa_h200.log") 2>&1

echo "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || echo "nvidia-smi unavailable"
echo "commit: $(cat COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
BIN=${OPGRAPH_SDPA_BIN:-}
if [ -z "$BIN" ]; then
  CMAKE_ARGS=()
  [ -d .device-deps ] && source "$ROOT/bench/device_env.sh"
  BUILD=${OPGRAPH_BUILD_DIR:-$ROOT/build-h200}
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON "${CMAKE_ARGS[@]}" >"$OUT/cmake.log" 2>&1 \
    || { tail -20 "$OUT/cmake.log"; exit 1; }
  ninja -C "$BUILD" -j"${OPGRAPH_JOBS:-16}" test_cudnn test_cudnn_gpu >"$OUT/build.log" 2>&1 \
    || { grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1; }
  BIN=$BUILD/tests
fi
PY=python3; [ -x /opt/torch/.venv/bin/python ] && PY=/opt/torch/.venv/bin/python
TORCH_CUDNN=$($PY -c "import os, nvidia.cudnn as c; print(os.path.join(list(c.__path__)[0], 'lib', 'libcudnn.so.9'))" 2>/dev/null || true)
echo "torch's libcudnn: ${TORCH_CUDNN:-not found}"

echo "== test_cudnn (CI suite)"
cpu_rc=0
timeout 60 "$BIN/test_cudnn" >"$OUT/test_cudnn.log" 2>&1 || cpu_rc=$?
grep -E "libcudnn [0-9]|^\[  (PASSED|FAILED) " "$OUT/test_cudnn.log" | sort -u | head -8

echo "== SDPA GPU cases (system libcudnn)"
gpu_rc=0
timeout 150 "$BIN/test_cudnn_gpu" --gtest_filter='Cases/SdpaGpu.*' >"$OUT/sdpa_gpu.log" 2>&1 || gpu_rc=$?
grep -E " ran on |Failure|elements off|no cudnn plan|^\[  (PASSED|FAILED|  OK) " "$OUT/sdpa_gpu.log" | head -80

# OPGRAPH_SDPA_TORCHLIB_CASES=0 skips the second pass of the cases (timing still uses both libraries).
if [ -n "$TORCH_CUDNN" ] && [ "${OPGRAPH_SDPA_TORCHLIB_CASES:-1}" != 0 ]; then
  echo "== SDPA GPU cases (torch's libcudnn)"
  OPGRAPH_LIBCUDNN=$TORCH_CUDNN LD_LIBRARY_PATH="$(dirname "$TORCH_CUDNN"):${LD_LIBRARY_PATH:-}" \
    timeout 150 "$BIN/test_cudnn_gpu" --gtest_filter='Cases/SdpaGpu.*' >"$OUT/sdpa_gpu_torchlib.log" 2>&1 || gpu_rc=$?
  grep -E "Failure|elements off|no cudnn plan|^\[  (PASSED|FAILED) " "$OUT/sdpa_gpu_torchlib.log" | head -20
fi

echo "== bf16 SDPA timing"
bench_rc=0
timeout 90 "$BIN/test_cudnn_gpu" --gtest_filter='CudnnGpuSdpaBench.*' >"$OUT/bench_system.log" 2>&1 || bench_rc=$?
if [ -n "$TORCH_CUDNN" ]; then
  OPGRAPH_LIBCUDNN=$TORCH_CUDNN LD_LIBRARY_PATH="$(dirname "$TORCH_CUDNN"):${LD_LIBRARY_PATH:-}" \
    timeout 90 "$BIN/test_cudnn_gpu" --gtest_filter='CudnnGpuSdpaBench.*' >"$OUT/bench_torchlib.log" 2>&1 || bench_rc=$?
fi
torch_lines=$(timeout 120 $PY bench/cudnn_sdpa_vs_torch.py 2>&1 | tee "$OUT/torch.log" | grep -E "RESULT|TORCH_LIBCUDNN" || true)
grep -hE "RESULT|Failure" "$OUT"/bench_*.log; echo "$torch_lines"

{
  echo "SDPA on the cuDNN engine family, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  echo "test_cudnn rc=$cpu_rc ($(grep -E '^\[  PASSED|^\[  FAILED' "$OUT/test_cudnn.log" | head -1))"
  echo "SDPA GPU cases rc=$gpu_rc: $(grep -c ' ran on ' "$OUT/sdpa_gpu.log") ran on cudnn plans; $(grep -c '^\[       OK' "$OUT/sdpa_gpu.log") passed; $(grep -cE '^\[  FAILED  \] Cases.*\([0-9]+ ms\)$' "$OUT/sdpa_gpu.log") failed"
  grep -h " ran on " "$OUT/sdpa_gpu.log"
  [ -f "$OUT/sdpa_gpu_torchlib.log" ] && echo "with torch's libcudnn: $(grep -c ' ran on ' "$OUT/sdpa_gpu_torchlib.log") ran on cudnn plans; $(grep -c '^\[       OK' "$OUT/sdpa_gpu_torchlib.log") passed; $(grep -cE '^\[  FAILED  \] Cases.*\([0-9]+ ms\)$' "$OUT/sdpa_gpu_torchlib.log") failed" && grep -h " ran on " "$OUT/sdpa_gpu_torchlib.log" | grep -E "fwd_plain |fwd_padding "
  printf "%-8s %-4s %-7s %-8s %-10s %-8s %s\n" who pass causal cudnn median_ms TFLOP/s plan
  for f in "$OUT"/bench_*.log; do
    grep -h RESULT "$f" | sed -E 's/.*RESULT sdpa(_bwd)? causal=([01]) cudnn=([0-9]+) plan=([^ ]+) median_ms=([0-9.]+) tflops=([0-9.]+)/opgraph  fwd\1 \2       \3    \5     \6    \4/; s/fwd_bwd/bwd /; s/fwd /fwd  /'
  done
  echo "$torch_lines" | grep RESULT | sed -E 's/.*RESULT torch_sdpa(_bwd)? causal=([01]) cudnn=([0-9]+) median_ms=([0-9.]+) tflops=([0-9.]+)/torch    fwd\1 \2       \3    \4     \5    (torch cuDNN SDPA)/; s/fwd_bwd/bwd /; s/fwd /fwd  /'
} >"$OUT/cudnn_sdpa_h200.txt"
echo "== summary"
cat "$OUT/cudnn_sdpa_h200.txt"
exit $(( cpu_rc || gpu_rc || bench_rc ))
