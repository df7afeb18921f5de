#!/usr/bin/env bash
# bench/gpu_check_h200.sh — every GPU test of the tree in ONE device call, from
# binaries built on the dev machine (device time pays for running, not compiling):
#
#   here:   bash bench/gpu_check_bins.sh          # Release build → .dev/bin (+ .device-deps)
#   device: run, carry [".dev/bin", ".device-deps"]:  bash bench/gpu_check_h200.sh
#
# Steps (each logged under $OUT, one summary line each in $OUT/gpu_check.txt):
#   1. test_cudnn_gpu, every suite but the timing and SDPA ones: each lowered op
#      family on its first cudnn plan vs the reference engine (outputs poisoned;
#      dispatch asserted: "cudnn_eng<N>");
#   2. scripts/gpu_python.sh (builds the Python module for this Python, runs the
#      CPU and GPU pytest suites and the execute-overhead bench);
#   3. bench/cudnn_sdpa_h200.sh on the same binaries (every SDPA case on the
#      system libcudnn — and on torch's with OPGRAPH_SDPA_TORCHLIB_CASES=1 —,
#      bf16 SDPA fwd/bwd timing with both libraries vs torch's cuDNN SDPA);
#   4. test_gemm_gpu: gemm v1/v2 numerics vs the reference engine;
#   5. the matmul example on this device: `opgraph plan` and `opgraph run`
#      (the pick by the family's measured rule, output checked vs the reference).
# Exit status: non-zero when any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out}
BIN=${OPGRAPH_GPU_BIN:-$ROOT/.dev/bin}
mkdir -p "$OUT"
SUM=$OUT/gpu_check.txt
: >"$SUM"
source "$ROOT/bench/device_steps.sh"  # say, step, fails

say "# GPU check: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); commit $(cat "$BIN/COMMIT" 2>/dev/null || echo unknown); $(date -u +%FT%TZ)"
step cudnn_gpu 240 "$BIN/test_cudnn_gpu" --gtest_filter='-*Bench*:Cases/SdpaGpu.*'
grep -h " ran on " "$OUT/cudnn_gpu.log" | wc -l | xargs -I{} say "  {} cases ran on cudnn plans"
grep -hE "Failure|elements off|^\[  FAILED  \]" "$OUT/cudnn_gpu.log" | head -20 | tee -a "$SUM"
mkdir -p "$OUT/py"
OUT=$OUT/py OPGRAPH_JOBS=16 step gpu_python 360 bash scripts/gpu_python.sh
tail -n 25 "$OUT/py/gpu_python.txt" 2>/dev/null | tee -a "$SUM"

mkdir -p "$OUT/sdpa"
OUT=$OUT/sdpa OPGRAPH_SDPA_BIN=$BIN OPGRAPH_SDPA_TORCHLIB_CASES=${OPGRAPH_SDPA_TORCHLIB_CASES:-0} step sdpa 420 bash bench/cudnn_sdpa_h200.sh
tail -n 24 "$OUT/sdpa/cudnn_sdpa_h200.txt" 2>/dev/null | tee -a "$SUM"

step gemm_gpu 400 "$BIN/test_gemm_gpu"
grep -hE "^\[  FAILED  \]" "$OUT/gemm_gpu.log" | head -10 | tee -a "$SUM"

EX=examples/graphs/matmul_bias_gelu.json
"$BIN/gemm_bench" --device-json "$OUT/h200_device.json" --explain-backend "$EX" >"$OUT/example.log" 2>&1 || true
step example_plan 60 "$BIN/opgraph" plan --device "$OUT/h200_device.json" "$EX"
head -8 "$OUT/example_plan.log" | tee -a "$SUM"
step example_run 60 "$BIN/opgraph" run --device "$OUT/h200_device.json" --iters 20 "$EX"
tail -6 "$OUT/example_run.log" | tee -a "$SUM"

say "steps failed: $fails"
( cd "$OUT" && tar czf logs.tgz --exclude=logs.tgz --exclude=gpu_check.txt ./* 2>/dev/null )
find "$OUT" -mindepth 1 -maxdepth 1 ! -name logs.tgz ! -name gpu_check.txt -exec rm -rf {} +
cat "$SUM"
exit $(( fails > 0 ))
