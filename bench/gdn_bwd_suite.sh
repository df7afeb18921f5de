#!/usr/bin/env bash
# bench/gdn_bwd_suite.sh — one device call for the gdn backward: builds test_la_gpu (carry .device-deps),
# runs every GdnBwdGpu numerics case (against the float64 reference, outputs poisoned first) in four
# gtest shards at once (the reference is CPU-bound), then alone on the GPU GdnBwdGpu.TimingFiveCells
# (the engine's execute, CUDA events). Logs to $OUT; the summary last.
#   bash bench/gdn_bwd_suite.sh            (OPGRAPH_SUITE_NUMERICS_ONLY=1: no timing; OPGRAPH_BWD_TIMING=<gtest filter>:
#                                           other timing tests, e.g. 'GdnBwdGpu.TimingCheckpoints' or
#                                           'GdnBwdGpu.TimingFusedRecompute'; OPGRAPH_BWD_FIRST=<gtest filter>: those
#                                           cases alone first, 150 s at most (OPGRAPH_BWD_FIRST_LIMIT), the suite
#                                           stopped if they fail or hang: a form's first run, e.g.
#                                           'GdnBwdGpu.FusedRecompute'; OPGRAPH_BWD_SHARDS=0: not the numerics
#                                           shards, only the first cases and the timing)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
out=${OUT:-/tmp/gdn_bwd_suite}
mkdir -p "$out"
B=${OPGRAPH_BUILD_DIR:-/tmp/bb}
export XDG_CACHE_HOME=/tmp/xdg-gdn-bwd
source bench/la_suite_lib.sh
t0=$(date +%s)
la_build test_la_gpu || exit 1
if [ -n "${OPGRAPH_BWD_FIRST:-}" ]; then
  lim=${OPGRAPH_BWD_FIRST_LIMIT:-150}
  timeout -s KILL "$lim" "$B/tests/test_la_gpu" --gtest_filter="$OPGRAPH_BWD_FIRST" >"$out/bwd_first.log" 2>&1
  rc=$?
  echo "==== first: $OPGRAPH_BWD_FIRST rc $rc ($([ $rc = 137 ] && echo "killed at $lim s: a hang?" || echo done))"
  grep -E '^\[ gdn_bwd \]|Failure|^\[  (PASSED|FAILED)' "$out/bwd_first.log" | head -40
  [ $rc = 0 ] || exit 1
fi
shards=${OPGRAPH_BWD_SHARDS:-1}
[ "$shards" = 0 ] || la_shards 'GdnBwdGpu.VarlenBothHeadDims' 'GdnBwdGpu*:-GdnBwdGpu*.Timing*' bwd_shard
echo "numerics done at $(( $(date +%s) - t0 )) s"
if [ "${OPGRAPH_SUITE_NUMERICS_ONLY:-0}" != 1 ]; then
  timeout -s KILL 360 "$B/tests/test_la_gpu" --gtest_filter="${OPGRAPH_BWD_TIMING:-GdnBwdGpu.TimingFiveCells}" \
    >"$out/bwd_timing.log" 2>&1
  echo "timing rc $?"
fi
[ "$shards" = 0 ] || la_shard_summary bwd_shard '^\[  FAILED|Failure|^\[ gdn_bwd \]' 14
[ -f "$out/bwd_timing.log" ] &&
  { echo "==== timing"; grep -E 'gdn_bwd (timing|ckpt|fused|fsplit|1split|host)' "$out/bwd_timing.log"; }
true
