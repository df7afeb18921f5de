#!/usr/bin/env bash
# bench/gdn_bwd_suite.sh — one device call for the gdn backward: builds test_la_gpu (carry .device-deps),
# runs every GdnBwdGpu numerics case (against the float64 reference, outputs poisoned first) in four
# gtest shards at once (the reference is CPU-bound), then alone on the GPU GdnBwdGpu.TimingFiveCells
# (the engine's execute, CUDA events). Logs to $OUT; the summary last.
#   bash bench/gdn_bwd_suite.sh            (OPGRAPH_SUITE_NUMERICS_ONLY=1: no timing)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
out=${OUT:-/tmp/gdn_bwd_suite}
mkdir -p "$out"
B=${OPGRAPH_BUILD_DIR:-/tmp/bb}
export XDG_CACHE_HOME=/tmp/xdg-gdn-bwd
CMAKE_ARGS=()
source bench/device_env.sh
t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON "${CMAKE_ARGS[@]}" >"$out/build.log" 2>&1 &&
  ninja -C "$B" -j16 test_la_gpu >>"$out/build.log" 2>&1
brc=$?
echo "build rc $brc in $(( $(date +%s) - t0 )) s"
[ $brc = 0 ] || { tail -30 "$out/build.log"; exit 1; }
# Kernels compiled once before the shards race for the cache.
"$B/tests/test_la_gpu" --gtest_filter='GdnBwdGpu.VarlenBothHeadDims' >"$out/warm.log" 2>&1
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout -s KILL "${OPGRAPH_SUITE_LIMIT:-280}" stdbuf -oL \
    "$B/tests/test_la_gpu" --gtest_filter='GdnBwdGpu*:-GdnBwdGpu*.Timing*' >"$out/bwd_shard$i.log" 2>&1 &
done
wait
echo "numerics done at $(( $(date +%s) - t0 )) s"
if [ "${OPGRAPH_SUITE_NUMERICS_ONLY:-0}" != 1 ]; then
  timeout -s KILL 150 "$B/tests/test_la_gpu" --gtest_filter='GdnBwdGpu.TimingFiveCells' >"$out/bwd_timing.log" 2>&1
  echo "timing rc $?"
fi
echo "==== numerics (shards)"
for i in 0 1 2 3; do
  echo "shard $i: $(grep -E '^\[  (PASSED|FAILED)|tests? ran' "$out/bwd_shard$i.log" | paste -sd ' ') $(grep -c '^\[       OK' "$out/bwd_shard$i.log") ok"
  grep -E '^\[  FAILED|Failure|^\[ gdn_bwd \]' "$out/bwd_shard$i.log" | head -14
done
[ -f "$out/bwd_timing.log" ] && { echo "==== timing"; grep -E 'gdn_bwd timing' "$out/bwd_timing.log"; }
true
