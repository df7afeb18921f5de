#!/usr/bin/env bash
# bench/trust_h200.sh — issue 21 on the H200 in ONE device call (builds there):
#   here:   bash bench/device_deps.sh        # .device-deps (GoogleTest, nlohmann-json)
#   device: run, carry [".device-deps"]:  bash bench/trust_h200.sh
# Steps, each logged under $OUT, a summary table last ($OUT/trust_h200.txt):
#   1. build Release -j16: trust_gpu, test_gemm_gpu, test_cudnn_gpu, test_exec;
#   2. bench/trust_gpu.cpp: conv fprop + {bias, bias+relu, relu, scale} x {NHWC,
#      NCHW} x every plan vs the reference, the other layout refused; gemm plans
#      with mismatched strides / dtype / alignment / read-only output refused;
#      the gemm plan's execute vs a raw cuLaunchKernelEx of the same kernel;
#   3. test_exec with a real libcuda present (the CPU suite, engine tables);
#   4. test_gemm_gpu (OPGRAPH_TRUST_GEMM_FILTER, default: the layout sweep, the
#      threaded and host-side suites) and test_cudnn_gpu's op families
#      (OPGRAPH_TRUST_CUDNN_FILTER): every engine's execute now goes through
#      its operand table.
# OPGRAPH_TRUST_STEPS (default "sweep tests"): "sweep" = build + trust_gpu + test_exec,
# "tests" = the GPU suites (a second call on a warm machine reuses OPGRAPH_BUILD_DIR).
# Exit status: non-zero when any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"
SUM=$OUT/trust_h200.txt
: >"$SUM"
source "$ROOT/bench/device_steps.sh"  # say, step, fails

say "# issue 21 trust sweep: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
say "commit: ${OPGRAPH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
CMAKE_ARGS=()
[ -d .device-deps ] && source "$ROOT/bench/device_env.sh"
BUILD=${OPGRAPH_BUILD_DIR:-$ROOT/build-h200}
t0=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON -DOPGRAPH_BUILD_BENCH=ON \
  "${CMAKE_ARGS[@]}" >"$OUT/cmake.log" 2>&1
if ! ninja -C "$BUILD" -j16 trust_gpu test_gemm_gpu test_cudnn_gpu test_exec >"$OUT/build.log" 2>&1; then
  grep -E "error|FAILED" "$OUT/build.log" | head -20 | tee -a "$SUM"
  say "build failed"
  exit 1
fi
say "build ok ($(( $(date +%s) - t0 )) s)"

STEPS=${OPGRAPH_TRUST_STEPS:-sweep tests}
if [[ " $STEPS " == *" sweep "* ]]; then
  step trust_gpu 240 "$BUILD/bench/trust_gpu"
  cat "$OUT/trust_gpu.log" >>"$SUM"
  step test_exec 120 "$BUILD/tests/test_exec"
fi
if [[ " $STEPS " == *" tests "* ]]; then
step gemm_gpu 240 "$BUILD/tests/test_gemm_gpu" \
  --gtest_filter="${OPGRAPH_TRUST_GEMM_FILTER:-GemmGpu.EveryLayoutAndType*:GemmGpu.FlashInferShaped*:GemmGpu.V2EveryLayoutTileSplitAndSwap:GemmGpu.V2StreamK*:GemmGpuThreads.*:GemmGpuHost.*}"
grep -hE "^\[  FAILED  \]|Failure" "$OUT/gemm_gpu.log" | head -10 | tee -a "$SUM"
step cudnn_gpu 200 "$BUILD/tests/test_cudnn_gpu" --gtest_filter="${OPGRAPH_TRUST_CUDNN_FILTER:--*Bench*:Cases/SdpaGpu.*}"
grep -hE "^\[  FAILED  \]|Failure" "$OUT/cudnn_gpu.log" | head -10 | tee -a "$SUM"
fi
say "steps failed: $fails"
exit $((fails > 0))
