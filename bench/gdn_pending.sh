#!/usr/bin/env bash
# bench/gdn_pending.sh — the figures issue 23's open decisions wait on, in one device call (carry .device-deps),
# each written without a device and not run yet:
#   1. GdnGpu.TimingSplitIdleCells under strong and weak gates (OPGRAPH_GDN_TIMING_GATES): 16/64 1 x 2048 and the
#      peers' varlen batch unsplit and at every shorter span, each split's O against the unsplit plan's — whether
#      fused_split_rule should split them (docs/linear_attention.md, "What is left");
#   2. bench/gdn_decode_sweep.sh: decode_body's kEarly 3 (E 4: state_indices and cu_seqlens loaded first) against
#      the engine's two shapes, bitwise checked, timed against a copy of the same bytes;
#   3. GDN_WS3_F16INV=1 (the fused prefill's inverse on fp16 tiles fed by ldmatrix) against the engine's build:
#      bench/gdn_ws_variants.sh (NVRTC builds, one process, the same inputs, B's outputs within 5e-3 of A's).
# Builds test_la_gpu and the CLI (16 jobs), warms the linear_attention kernel cache, runs 3, 1, 2; logs to $OUT,
# the tables last.
#   bash bench/gdn_pending.sh [sweep rounds (15)] [A/B rounds (10)]
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
out=${OUT:-/tmp/gdn_pending}
mkdir -p "$out"
B=${OPGRAPH_BUILD_DIR:-/tmp/bb}
source bench/la_suite_lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p "$out/f16inv"
OUT=$out/f16inv OPGRAPH_WS_VARIANTS="-DGDN_WS3_F16INV=1" timeout -s KILL 200 bash bench/gdn_ws_variants.sh "${2:-10}" \
  >"$out/f16inv.log" 2>&1
echo "f16inv A/B: rc $?"
la_build test_la_gpu opgraph_tool || exit 1
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/xdg-pending}
timeout -s KILL 300 "$B/tools/opgraph" cache warm --all --family linear_attention --arch sm_90a --jobs 16 \
  >"$out/warm.log" 2>&1
echo "warm: $(tail -1 "$out/warm.log")"
for g in strong weak; do
  OPGRAPH_GDN_TIMING_GATES=$g timeout -s KILL 200 "$B/tests/test_la_gpu" \
    --gtest_filter=GdnGpu.TimingSplitIdleCells >"$out/idle-$g.log" 2>&1
  echo "idle cells, $g gates: rc $?"
done
OUT=$out timeout -s KILL 240 bash bench/gdn_decode_sweep.sh "${1:-15}" >"$out/sweep-stdout.log" 2>&1
echo "decode sweep: rc $?"
echo "==== GDN_WS3_F16INV=1 against the engine's build"
tail -8 "$out/f16inv.log"
echo "==== fused_split_rule's idle-multiprocessor cells (ms; ratios to unsplit)"
for g in strong weak; do grep -E "gdn timing|Failure|^\[  (PASSED|FAILED)" "$out/idle-$g.log"; done
echo "==== decode sweep (the last 40 lines of its log)"
tail -40 "$out/gdn_decode_sweep.log" 2>/dev/null || tail -20 "$out/sweep-stdout.log"
