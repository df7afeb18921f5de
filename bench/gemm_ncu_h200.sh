#!/usr/bin/env bash
# bench/gemm_ncu_h200.sh — Nsight Compute counters for chosen gemm_v2 variants
# (one device call): for each "MxNxK/chain/label" argument, gemm_bench --study
# times only that variant (OPGRAPH_GEMM_STUDY_ONLY) and ncu profiles its first
# launch (clocks left alone). Prints the headline metrics of each, then the
# full details into $OUT/ncu_<i>.txt (with the source lines that stall most:
# the kernels carry line tables, OPGRAPH_NVRTC_LINEINFO=1 from
# gemm_ncu_env.sh) and the raw metrics into $OUT/raw_<i>.txt.
#   bash bench/gemm_ncu_h200.sh .dev/bin 4096x4096x4096/none/gemm_v2_128x256s4 ...
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$1
shift
source bench/gemm_ncu_env.sh
echo "$COMMIT_LINE; ncu: $NCU"
i=0
for key in "$@"; do
  i=$((i + 1))
  OPGRAPH_GEMM_STUDY_ONLY=$key timeout 200 "$NCU" --clock-control none -k regex:gemm_v2 -c 1 \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --section SchedulerStats --section LaunchStats --section Occupancy --section SourceCounters \
    --import-source yes -o "$OUT/prof_$i" -f \
    "$BIN/gemm_bench" --study >"$OUT/run_$i.txt" 2>&1
  rc=$?
  echo "== $key (rc=$rc)"
  "$NCU" -i "$OUT/prof_$i.ncu-rep" --page details >"$OUT/ncu_$i.txt" 2>&1
  grep VARIANT "$OUT/run_$i.txt"
  # The raw metrics kept as $OUT/raw_<i>.txt. Stall reasons (cycles per
  # issued instruction, all warps), largest first, then the tensor pipe and
  # shared-memory use (percentages: sorted apart from the ratios).
  "$NCU" -i "$OUT/prof_$i.ncu-rep" --page raw >"$OUT/raw_$i.txt" 2>&1
  grep -E "warps_issue_stalled_[a-z_]+_per_issue_active.ratio" "$OUT/raw_$i.txt" | awk '{print $NF, $1}' | sort -rn |
    head -10 | tr '\n' ';'
  echo
  grep -E "pipe_tensor.*pct_of_peak_sustained_active |lsu_mem_shared.*pct" "$OUT/raw_$i.txt" | awk '{print $NF, $1}' |
    sort -rn | head -6 | tr '\n' ';'
  echo
  rm -f "$OUT/prof_$i.ncu-rep"
  grep -E "Elapsed Cycles|Compute \(SM\) Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Spilling Requests  |==ERR" "$OUT/ncu_$i.txt" |
    awk '{print $(NF), $0}' | sed 's/  */ /g' | cut -c1-70 | tr '\n' ';'
  echo
done
