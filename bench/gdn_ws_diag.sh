#!/usr/bin/env bash
# bench/gdn_ws_diag.sh — one device call that checks the warp-specialised fused prefill
# (PIPELINE_ARCH 3, GDN_FUSED_WS) end to end, each step bounded so a hang is reported, not waited on:
#   1. the A/B harness, nvcc builds: eight-warp (A) vs WS (B) on its four cells (incl. test_la_gpu's
#      varlen case), then WS without the start barrier (GDN_WS_START_SYNC=0) as B;
#   2. test_la_gpu (built here, carry .device-deps; PIPELINE_ARCH 3 in every d = 128 case) on the prefill
#      cases; if they hang, the engine's NVRTC cubin of the WS entry goes through the A/B harness as B;
#   3. if every step finished: the whole GdnGpu suite under the opt-in, then GdnGpu.TimingFiveCells.
# Run from the repository root on the GPU machine:  bash bench/gdn_ws_diag.sh
# Logs and the cubins go to $OUT; the last lines are the summary table.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
out=${OUT:-/tmp/gdn_ws_diag}
mkdir -p "$out"
B=${OPGRAPH_BUILD_DIR:-/tmp/bb}
export XDG_CACHE_HOME=/tmp/xdg-gdn-ws
summary=()
note() { summary+=("$1"); echo "== $1"; }
hung() { pkill -9 -f "$1" 2>/dev/null; sleep 2; nvidia-smi --query-compute-apps=pid,name --format=csv,noheader; }
# The build runs beside the A/B steps (CPU vs GPU).
(
  CMAKE_ARGS=()
  source bench/device_env.sh
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON "${CMAKE_ARGS[@]}" >"$out/cmake.log" 2>&1 &&
    ninja -C "$B" -j14 test_la_gpu >>"$out/cmake.log" 2>&1
  echo $? >"$out/build.rc"
) &
build=$!
for defs in "-DGDN_FUSED_WS=1" "-DGDN_FUSED_WS=1 -DGDN_WS_START_SYNC=0"; do
  OUT=$out OPGRAPH_AB_TIMEOUT=90 bash bench/gdn_fused_ab.sh "$defs" 10 >/dev/null 2>&1
  tag=$(echo "$defs" | tr -c 'A-Za-z0-9\n' '_')
  cp "$out/gdn_fused_ab.log" "$out/ab$tag.log"
  n_ok=$(grep -c ' ok$' "$out/ab$tag.log")
  note "A/B nvcc $defs: $n_ok of 4 cells ok$(grep -q 'status 124' "$out/ab$tag.log" && echo ', HUNG after: '"$(grep -E ' ok$| FAIL$' "$out/ab$tag.log" | tail -1 | cut -c1-48)")"
  grep -q 'status 124' "$out/ab$tag.log" && hung "tmp\\..*/ab "
done
wait $build
if [ "$(cat "$out/build.rc")" != 0 ]; then
  note "build failed: $(tail -5 "$out/cmake.log")"
else
  timeout -s KILL 150 stdbuf -oL "$B/tests/test_la_gpu" \
    --gtest_filter='GdnGpu.Prefill*' >"$out/la_prefill_ws.log" 2>&1
  rc=$?
  note "test_la_gpu GdnGpu.Prefill*: rc $rc ($(grep -c 'fused-ws' "$out/la_prefill_ws.log") fused-ws lines; $(grep -E '^\[  (PASSED|FAILED)' "$out/la_prefill_ws.log" | paste -sd ' '))"
  [ $rc = 137 ] && { note "  last line: $(tail -1 "$out/la_prefill_ws.log" | cut -c1-100)"; hung test_la_gpu; }
  cub=$(find "$XDG_CACHE_HOME" -name '*gdn_prefill_fused_ws*bf16*.cubin' | head -1)
  if [ -n "$cub" ] && [ $rc = 137 ]; then
    cp "$cub" "$out/engine_ws.cubin"
    OUT=$out OPGRAPH_AB_TIMEOUT=90 OPGRAPH_AB_B_CUBIN=$cub bash bench/gdn_fused_ab.sh "engine NVRTC cubin" 10 >/dev/null 2>&1
    cp "$out/gdn_fused_ab.log" "$out/ab_engine_cubin.log"
    note "A/B engine NVRTC WS cubin as B: $(grep -c ' ok$' "$out/ab_engine_cubin.log") of 4 cells ok$(grep -q 'status 124' "$out/ab_engine_cubin.log" && echo ' HUNG')"
    grep -q 'status 124' "$out/ab_engine_cubin.log" && hung "tmp\\..*/ab "
  fi
  if [ $rc = 0 ] || [ $rc = 1 ]; then
    timeout -s KILL 200 stdbuf -oL "$B/tests/test_la_gpu" \
      --gtest_filter='GdnGpu*:-GdnGpu*.Timing*:GdnGpu.Prefill*' >"$out/la_rest_ws.log" 2>&1
    note "test_la_gpu GdnGpu* rest: rc $? ($(grep -E '^\[  (PASSED|FAILED)' "$out/la_rest_ws.log" | paste -sd ' '))"
    timeout -s KILL 120 stdbuf -oL "$B/tests/test_la_gpu" \
      --gtest_filter='GdnGpu.TimingFiveCells' >"$out/la_timing_ws.log" 2>&1
    note "timing rc $?"
  fi
fi
for f in "$out"/ab_*.log; do echo "-- $f"; grep -E ' ok$| FAIL$|status|registers|# [ab],' "$f"; done
grep -h '\[  FAILED\|Failure\|fused-ws' "$out"/la_*.log | head -40
echo "==== summary"
printf '%s\n' "${summary[@]}"
