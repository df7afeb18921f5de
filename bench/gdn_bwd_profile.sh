#!/usr/bin/env bash
# bench/gdn_bwd_profile.sh — where the gdn backward's kernels spend their time: one execute of the
# 16/64 4 x 8192 cell of bench/gdn_bwd_ab.cu (the work tree's kernels, built through NVRTC as the
# engine builds them, with line tables) under Nsight Compute: per kernel the speed-of-light, occupancy
# and warp-state summary; for gdn_bwd_grads (or the kernel named) the SASS regions between barriers
# (scripts/ncu_sass_regions.py). No carry needed. Writes its files to ${OUT:-/tmp}; the summary last.
#   bash bench/gdn_bwd_profile.sh [kernel]       (default gdn_bwd_grads)
# OPGRAPH_PROFILE_DEFINES: defines for both sources (a trial's build, e.g. "-DGDN_BWD_GRADS_WIDE=1").
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
mkdir -p "$out"
kernel=${1:-gdn_bwd_grads}
dir=$(mktemp -d)
nvcc -std=c++17 bench/nvrtc_cubin.cpp -o "$dir/nvrtc_cubin" -lnvrtc
defs=${OPGRAPH_PROFILE_DEFINES:-}
for f in states grads; do
  # shellcheck disable=SC2086
  "$dir/nvrtc_cubin" "$dir/$f.cubin" sm_90a "src/engines/linear_attention/kernels/gdn_bwd_$f.cu" \
    -DGDN_D=128 -DGDN_IO=0 $defs -lineinfo 2>/dev/null
done
nvcc -std=c++20 -O2 -arch=sm_90 -Isrc/engines -Ibench bench/gdn_bwd_ab.cu -o "$dir/ab" -lcuda
g++ -std=c++17 -DGROUPED="$(grep -q kBwdFlagQkDirect src/engines/linear_attention/kernels/gdn_bwd_params.cuh && echo 1 || echo 0)" \
  -Isrc/engines bench/gdn_bwd_smem.cpp -o "$dir/smem"
smem=$("$dir/smem")
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "no ncu on this machine"; exit 1; }
# Side A's five kernels of the first cell (A and B are the same build here).
OPGRAPH_AB_CELLS=1 "$ncu" --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
  --section LaunchStats --section MemoryWorkloadAnalysis --section SourceCounters -k "regex:^gdn_bwd_" \
  --launch-count 5 -f -o "$out/bwd" "$dir/ab" "$dir/states.cubin" "$dir/grads.cubin" "$smem" "$dir/states.cubin" \
  "$dir/grads.cubin" "$smem" 1 >"$out/profile_ncu.log" 2>&1 || { tail -20 "$out/profile_ncu.log"; exit 1; }
"$ncu" -i "$out/bwd.ncu-rep" --page details --csv >"$out/details.csv" 2>/dev/null || true
"$ncu" -i "$out/bwd.ncu-rep" --page source --csv --print-source sass -k "$kernel" >"$out/sass.csv" || true
{
  echo "# gdn_bwd kernels at 16/64 4 x 8192 (bench/gdn_bwd_ab.cu's first cell), $(date -u +%F' '%T) UTC," \
    "commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD -- src 2>/dev/null || echo ' (+ uncommitted src changes)')"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  echo "# command: ${defs:+OPGRAPH_PROFILE_DEFINES=\"$defs\" }bash bench/gdn_bwd_profile.sh $kernel"
  python3 - "$out/details.csv" <<'PY'
import csv, sys
want = ["Duration", "Registers Per Thread", "Achieved Occupancy", "Executed Ipc Active", "Compute (SM) Throughput",
        "Memory Throughput", "DRAM Throughput", "Issue Slots Busy", "Warp Cycles Per Issued Instruction",
        "Dynamic Shared Memory Per Block", "Block Limit Shared Mem", "Block Limit Registers"]
rows = {}
order = []
with open(sys.argv[1]) as f:
    for r in csv.DictReader(f):
        k = r.get("Kernel Name", "?").split("(")[0]
        if k not in rows:
            rows[k] = {}
            order.append(k)
        if r.get("Metric Name") in want:
            rows[k][r["Metric Name"]] = (r.get("Metric Value", ""), r.get("Metric Unit", ""))
for k in order:
    print("## " + k)
    for m in want:
        if m in rows[k]:
            print("   %-36s %s %s" % (m, *rows[k][m]))
PY
  [ -s "$out/sass.csv" ] && python3 scripts/ncu_sass_regions.py "$out/sass.csv" --per $((516 * 64 * 16))
} | tee "$out/regions.txt"
