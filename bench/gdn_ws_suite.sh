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
CMAKE_ARGS=()
source bench/device_env.sh
t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON -DOPGRAPH_BUILD_BENCH=ON \
  "${CMAKE_ARGS[@]}" >"$out/build.log" 2>&1 && ninja -C "$B" -j16 test_la_gpu gdn_host_overhead_gpu >>"$out/build.log" 2>&1
brc=$?
echo "build rc $brc in $(( $(date +%s) - t0 )) s"
[ $brc = 0 ] || { tail -30 "$out/build.log"; exit 1; }
# Kernels compiled once before the shards race for the cache.
"$B/tests/test_la_gpu" --gtest_filter='GdnGpu.PrefillTypesAndGva' >"$out/warm.log" 2>&1
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout -s KILL "${OPGRAPH_SUITE_LIMIT:-280}" stdbuf -oL \
    "$B/tests/test_la_gpu" --gtest_filter='GdnGpu*:-GdnGpu*.Timing*' >"$out/la_shard$i.log" 2>&1 &
done
wait
echo "numerics done at $(( $(date +%s) - t0 )) s"
# OPGRAPH_SUITE_NUMERICS_ONLY=1: the numerics shards alone (no timing, no host overhead).
if [ "${OPGRAPH_SUITE_NUMERICS_ONLY:-0}" != 1 ]; then
  timeout -s KILL 100 "$B/tests/test_la_gpu" --gtest_filter='GdnGpu.TimingFiveCells' >"$out/la_timing.log" 2>&1
  echo "timing rc $?"
  timeout -s KILL 60 "$B/bench/gdn_host_overhead_gpu" >"$out/host.log" 2>&1
  echo "host rc $?"
fi
echo "==== numerics (shards)"
for i in 0 1 2 3; do
  echo "shard $i: $(grep -E '^\[  (PASSED|FAILED)|tests? ran' "$out/la_shard$i.log" | paste -sd ' ') $(grep -c '^\[       OK' "$out/la_shard$i.log") ok"
  grep -E '^\[  FAILED|Failure' "$out/la_shard$i.log" | head -5
done
[ -f "$out/la_timing.log" ] && { echo "==== timing"; grep -E 'gdn timing \]  *[0-9]' "$out/la_timing.log"; }
[ -f "$out/host.log" ] && { echo "==== host"; tail -12 "$out/host.log"; }
true
