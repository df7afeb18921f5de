#!/usr/bin/env bash
# bench/gdn_ws_suite.sh — one device call: builds test_la_gpu and gdn_host_overhead_gpu (carry
# .device-deps), runs every GdnGpu numerics case (every prefill mode, PIPELINE_ARCH 3 included) in four
# gtest shards at once (the float64 reference is CPU-bound), then alone on the GPU GdnGpu.TimingFiveCells
# (3 vs 2 on the same inputs, interleaved) and gdn_host_overhead_gpu. Logs to $OUT; the summary last.
#   bash bench/gdn_ws_suite.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
out=${OUT:-/tmp/gdn_ws_suite}
mkdir -p "$out"
B=${OPGRAPH_BUILD_DIR:-/tmp/bb}
export XDG_CACHE_HOME=/tmp/xdg-gdn-ws
source bench/la_suite_lib.sh
t0=$(date +%s)
la_build test_la_gpu gdn_host_overhead_gpu || exit 1
la_shards 'GdnGpu.PrefillTypesAndGva' 'GdnGpu*:-GdnGpu*.Timing*' la_shard
echo "numerics done at $(( $(date +%s) - t0 )) s"
# OPGRAPH_SUITE_NUMERICS_ONLY=1: the numerics shards alone (no timing, no host overhead).
if [ "${OPGRAPH_SUITE_NUMERICS_ONLY:-0}" != 1 ]; then
  timeout -s KILL 200 "$B/tests/test_la_gpu" --gtest_filter='GdnGpu.TimingFiveCells' >"$out/la_timing.log" 2>&1
  echo "timing rc $?"
  timeout -s KILL 60 "$B/bench/gdn_host_overhead_gpu" >"$out/host.log" 2>&1
  echo "host rc $?"
fi
la_shard_summary la_shard '^\[  FAILED|Failure' 5
[ -f "$out/la_timing.log" ] && { echo "==== timing"; grep -E 'gdn timing \]  *[0-9]' "$out/la_timing.log"; }
[ -f "$out/host.log" ] && { echo "==== host"; tail -12 "$out/host.log"; }
true
