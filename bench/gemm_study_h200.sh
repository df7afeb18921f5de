#!/usr/bin/env bash
# bench/gemm_study_h200.sh — one device call for gemm_v2 experiments, from the
# binaries bench/gpu_check_bins.sh built (.dev/bin): the cluster and thread
# GPU tests (CLUSTER_M, STREAM_K, threads), then gemm_bench --study with the
# driver's resident-cluster answer and, when $2 is given, again with
# OPGRAPH_GEMM_RESIDENT_CLUSTERS=$2. Prints a table last.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.dev/bin}
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
echo "commit $(cat "$BIN/COMMIT" | tr '\n' ' '); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
export OPGRAPH_COMPILED_CACHE=$(mktemp -d /tmp/opgraph-study-XXXX)
timeout 240 "$BIN/test_gemm_gpu" --gtest_filter='*Cluster*:*Thread*:*StreamK*:*PingPong*' >"$OUT/tests.log" 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tr '\n' ' ')"
grep -E "Failure|bad;|^\[  FAILED" "$OUT/tests.log" | head -10
timeout 150 "$BIN/gemm_bench" --study >"$OUT/study.txt" 2>&1; echo "study rc=$?"
grep CLUSTERS "$OUT/study.txt"
if [ -n "${2:-}" ]; then
  OPGRAPH_GEMM_RESIDENT_CLUSTERS=$2 timeout 150 "$BIN/gemm_bench" --study >"$OUT/study_override.txt" 2>&1
  echo "== TFLOP/s (driver's resident clusters | override $2)"
  paste <(grep VARIANT "$OUT/study.txt" | sed 's/VARIANT //') <(grep VARIANT "$OUT/study_override.txt" | sed 's/.*tflops=/| /')
else
  echo "== TFLOP/s"
  grep VARIANT "$OUT/study.txt" | sed 's/VARIANT //'
fi
