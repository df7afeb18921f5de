#!/usr/bin/env bash
# bench/gdn_h200.sh — the linear_attention family's gdn forward on the H200 in ONE device call:
#   here:   bash bench/device_deps.sh        # .device-deps (GoogleTest, nlohmann-json)
#   device: run, carry [".device-deps"]:  bash bench/gdn_h200.sh
# Steps, each logged under $OUT, a summary table last ($OUT/gdn_h200.txt):
#   1. build Release -j16: test_linear_attention (CPU suite: support rules, the
#      NVRTC compile of every declared kernel for sm_90a), test_la_gpu;
#   2. test_linear_attention;
#   3. test_la_gpu checks (numerics vs the float64 reference, outputs poisoned,
#      fresh random inputs; state pools; batch invariance);
#   4. GdnGpu.Timing*: the issue's five prefill cells, our kernel time with CUDA
#      events (median of 30) beside the issue's fla / FlashInfer anchors, and
#      decode (T = 1) at B in {1, 64, 256, 1024}, heads 16/32 and 16/64, as state GB/s.
#      OPGRAPH_GDN_TIMING=0 skips it; OPGRAPH_GDN_FILTER picks the checks.
# Exit status: non-zero when any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"
SUM=$OUT/gdn_h200.txt
: >"$SUM"
source "$ROOT/bench/device_steps.sh"  # say, step, fails

say "# gdn forward on the GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
say "commit: ${OPGRAPH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
CMAKE_ARGS=()
[ -d .device-deps ] && source "$ROOT/bench/device_env.sh"
BUILD=${OPGRAPH_BUILD_DIR:-$ROOT/build-h200}
t0=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON "${CMAKE_ARGS[@]}" >"$OUT/cmake.log" 2>&1
if ! ninja -C "$BUILD" -j16 test_linear_attention test_la_gpu >"$OUT/build.log" 2>&1; then
  grep -E "error|FAILED" "$OUT/build.log" | head -20 | tee -a "$SUM"
  say "build failed"
  exit 1
fi
say "build ok ($(( $(date +%s) - t0 )) s)"

step la_cpu 300 "$BUILD/tests/test_linear_attention"
grep -hE "^\[  FAILED  \]|Failure" "$OUT/la_cpu.log" | head -10 | tee -a "$SUM"
step la_gpu 400 "$BUILD/tests/test_la_gpu" --gtest_filter="${OPGRAPH_GDN_FILTER:-GdnGpu.*:-GdnGpu.Timing*}"
grep -hE "^\[ gdn \]" "$OUT/la_gpu.log" | tee -a "$SUM"
grep -hE "^\[  FAILED  \]|Failure|Expected|Which is|actual" "$OUT/la_gpu.log" | head -30 | tee -a "$SUM"
if [ "${OPGRAPH_GDN_TIMING:-1}" = 1 ]; then
  step la_timing 300 "$BUILD/tests/test_la_gpu" --gtest_filter=GdnGpu.Timing*
  grep -hE "^\[ gdn timing \]" "$OUT/la_timing.log" | tee -a "$SUM"
fi
say "steps failed: $fails"
exit $((fails > 0))
