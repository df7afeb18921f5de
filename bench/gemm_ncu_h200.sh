#!/usr/bin/env bash
# bench/gemm_ncu_h200.sh — Nsight Compute counters for chosen gemm_v2 variants
# (one device call): for each "MxNxK/chain/label" argument, gemm_bench --study
# times only that variant (OPGRAPH_GEMM_STUDY_ONLY) and ncu profiles its first
# launch (clocks left alone). Prints the headline metrics of each, then the
# full details into $OUT/ncu_<i>.txt.
#   bash bench/gemm_ncu_h200.sh .dev/bin 4096x4096x4096/none/gemm_v2_128x256s4 ...
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$1
shift
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export OPGRAPH_COMPILED_CACHE=${OPGRAPH_COMPILED_CACHE:-$(mktemp -d /tmp/opgraph-ncu-XXXX)}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "commit $(cat "$BIN/COMMIT" | tr '\n' ' '); ncu: $NCU"
i=0
for key in "$@"; do
  i=$((i + 1))
  OPGRAPH_GEMM_STUDY_ONLY=$key timeout 200 "$NCU" --clock-control none -k regex:gemm_v2 -c 1 \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --section SchedulerStats --section LaunchStats --section Occupancy -o "$OUT/prof_$i" -f \
    "$BIN/gemm_bench" --study >"$OUT/run_$i.txt" 2>&1
  echo "== $key (rc=$?)"
  "$NCU" -i "$OUT/prof_$i.ncu-rep" --page details >"$OUT/ncu_$i.txt" 2>&1
  "$NCU" -i "$OUT/prof_$i.ncu-rep" --page raw >"$OUT/raw_$i.txt" 2>&1
  grep VARIANT "$OUT/run_$i.txt"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|L1/TEX Cache Throughput|Executed Ipc Active|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall|Mem Pipes Busy|Shared Memory|L2 Hit|Registers Per|Local Memory|==ERR|==WARNING" "$OUT/ncu_$i.txt" | grep -v "^    ---" | head -45
done
