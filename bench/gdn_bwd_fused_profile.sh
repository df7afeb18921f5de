#!/usr/bin/env bash
# bench/gdn_bwd_fused_profile.sh — one device call for the backward's fused forms (PIPELINE_ARCH 2 and 3, rule
# B9): builds test_la_gpu (carry .device-deps), runs their numerics (GdnBwdGpu.FusedRecompute), the batch
# invariance check under 0, 2 and 3 and the shape overrides under 0 and 3, then profiles the first launch of
# gdn_bwd_fwd_fused, gdn_bwd_rev_fused and gdn_bwd_grads under PIPELINE_ARCH 3 at 16/64, 4 x 8192 (the first cell of
# GdnBwdGpu.TimingFusedRecompute, the engine's own NVRTC build) under Nsight Compute: speed of light, occupancy, warp
# states, and each kernel's SASS regions between barriers (scripts/ncu_sass_regions.py). Logs to $OUT; the summary
# last.   bash bench/gdn_bwd_fused_profile.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
out=${OUT:-/tmp/gdn_bwd_fused_profile}
mkdir -p "$out"
B=${OPGRAPH_BUILD_DIR:-/tmp/bb}
export XDG_CACHE_HOME=/tmp/xdg-gdn-bwd
source bench/la_suite_lib.sh
la_build test_la_gpu || exit 1
filter='GdnBwdGpu.FusedRecompute:GdnBwdGpu.BatchInvariantBitwise:GdnBwdGpu.OverriddenShapes*'
timeout -s KILL 200 "$B/tests/test_la_gpu" --gtest_filter="$filter" >"$out/numerics.log" 2>&1
echo "numerics rc $?"
grep -E '^\[ gdn_bwd \]|^\[       OK|^\[  (PASSED|FAILED)|Failure' "$out/numerics.log" | head -30
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "no ncu on this machine"; exit 0; }
# The first launch under PIPELINE_ARCH 3 of each: arch 0 and 2 run before it in the cell, so skip their launches
# (arch 2 runs gdn_bwd_fwd_fused and gdn_bwd_grads, arch 0 gdn_bwd_grads, 23 executes a form: 3 warm-ups and 20).
for k in gdn_bwd_fwd_fused:23 gdn_bwd_rev_fused:0 gdn_bwd_grads:46; do
  name=${k%%:*} skip=${k##*:}
  timeout -s KILL 150 "$ncu" --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats --section SourceCounters \
    -k "regex:^$name" --launch-skip "$skip" --launch-count 1 --kill yes -f -o "$out/$name" \
    "$B/tests/test_la_gpu" --gtest_filter='GdnBwdGpu.TimingFusedRecompute' >"$out/ncu_$name.log" 2>&1
  echo "ncu $name rc $?"
  "$ncu" -i "$out/$name.ncu-rep" --page details --csv >"$out/details_$name.csv" 2>/dev/null || true
  "$ncu" -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/sass_$name.csv" 2>/dev/null || true
done
for k in gdn_bwd_fwd_fused gdn_bwd_rev_fused gdn_bwd_grads; do
  echo "==== $k"
  python3 - "$out/details_$k.csv" <<'PY'
import csv, sys
want = ["Duration", "Registers Per Thread", "Achieved Occupancy", "Executed Ipc Active", "Compute (SM) Throughput",
        "Memory Throughput", "DRAM Throughput", "Issue Slots Busy", "Warp Cycles Per Issued Instruction",
        "Grid Size", "Block Size"]
try:
    rows = {r["Metric Name"]: (r.get("Metric Value", ""), r.get("Metric Unit", ""))
            for r in csv.DictReader(open(sys.argv[1]))}
except Exception as e:  # no report
    print("   (no details: %s)" % e); sys.exit(0)
for m in want:
    if m in rows:
        print("   %-36s %s %s" % (m, *rows[m]))
PY
  [ -s "$out/sass_$k.csv" ] && python3 scripts/ncu_sass_regions.py "$out/sass_$k.csv" 2>&1 | head -40
done
true
