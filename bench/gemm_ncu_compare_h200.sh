#!/usr/bin/env bash
# bench/gemm_ncu_compare_h200.sh — Nsight Compute "full" set on the first launch
# of each kernel-name regex, at one shape of gemm_bench (OPGRAPH_GEMM_SHAPES),
# so ours (gemm_v2) and the library kernels cuDNN runs can be read side by side.
#   bash bench/gemm_ncu_compare_h200.sh .dev/bin 4096x4096x4096/none gemm_v2 nvjet
# Writes $OUT/full_<i>.txt (details page) and $OUT/raw_<i>.csv; prints headlines.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$1 SHAPE=$2
shift 2
source bench/gemm_ncu_env.sh
echo "$COMMIT_LINE; shape $SHAPE"
i=0
for k in "$@"; do
  i=$((i + 1))
  OPGRAPH_GEMM_SHAPES=$SHAPE timeout 200 "$NCU" --clock-control none --set full --import-source no -k "regex:$k" -c 1 \
    -o "$OUT/full_$i" -f "$BIN/gemm_bench" >"$OUT/full_run_$i.txt" 2>&1
  echo "== $k (rc=$?)"
  "$NCU" -i "$OUT/full_$i.ncu-rep" --page details >"$OUT/full_$i.txt" 2>&1
  "$NCU" -i "$OUT/full_$i.ncu-rep" --page raw --csv >"$OUT/raw_$i.csv" 2>&1
  rm -f "$OUT/full_$i.ncu-rep"
  grep -E "^  [a-z_]|Duration|Elapsed Cycles|SM Frequency|Compute \(SM\) Throughput|Issue Slots Busy|Warp Cycles Per Issued|Bank Conflicts|L2 Hit Rate" "$OUT/full_$i.txt" | head -30
done
