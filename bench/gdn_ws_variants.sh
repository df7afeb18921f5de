#!/usr/bin/env bash
# bench/gdn_ws_variants.sh — one device call: the WS fused prefill's trial variants, each against a
# base build on the same inputs (bench/gdn_fused_ab.sh, one process a variant), then the table.
#   bash bench/gdn_ws_variants.sh [rounds]
# Base: OPGRAPH_WS_BASE (default "-DGDN_FUSED_WS=1": the engine's PIPELINE_ARCH 3, the R3 form). Variants:
# OPGRAPH_WS_VARIANTS, ';'-separated define sets added to the base (default: the previous two-stage form
# (GDN_WS_R3=0 with GDN_WS_ROWS_AT=1), R3's auxiliary side before 0b900ea (GDN_WS3_GATES, GDN_WS3_TF32RAW at 0; its L / P epilogue is the one form since),
# and the base with its phase clocks). No carry needed. Logs to $OUT/ab<i>/; the summary last.
# (2026-12-03's runs: bench/results/2026-12-03-gdn-ws-variants-634f576-h200.txt and ...-gdn-ws3-aux-h200.txt,
# with the base and variants their headers name.)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gdn_ws_variants}
rounds=${1:-10}
base=${OPGRAPH_WS_BASE:-"-DGDN_FUSED_WS=1"}
variants=${OPGRAPH_WS_VARIANTS:-"-DGDN_WS_R3=0 -DGDN_WS_ROWS_AT=1;-DGDN_WS3_GATES=0 -DGDN_WS3_TF32RAW=0;-DGDN_WS_CLOCK=1"}
IFS=';' read -r -a list <<<"$variants"
i=0
for v in "${list[@]}"; do
  i=$((i + 1))
  mkdir -p "$out/ab$i"
  OUT="$out/ab$i" OPGRAPH_AB_A_DEFS="$base" OPGRAPH_AB_TIMEOUT="${OPGRAPH_AB_TIMEOUT:-90}" \
    bash bench/gdn_fused_ab.sh "$base $v" "$rounds" >"$out/ab$i/stdout.txt" 2>&1
  echo "variant $i ($v): rc $?"
done
echo "==== base: $base"
i=0
for v in "${list[@]}"; do
  i=$((i + 1))
  echo "== variant $i: $v"
  grep -E "^# [ab], gdn_prefill_fused|B/A|clocks a chunk|FAIL|exited|error" "$out/ab$i/stdout.txt" | head -14
done
