#!/usr/bin/env bash
# bench/gdn_bwd_trials.sh [rounds] — one device call for the backward's trial defines: every variant an A/B run of
# bench/gdn_bwd_ab.cu in its fused mode (the kernels PIPELINE_ARCH 3 launches: gdn_bwd_fwd_fused, gdn_bwd_rev_fused,
# gdn_bwd_grads, gdn_bwd_finish; A the engine's build, B the engine's sources with the variant's defines; same inputs,
# gradients compared, "(bitwise)" where B's equal A's, per-kernel times interleaved), the cubins built once each and
# in parallel (NVRTC with the engine's options, bench/nvrtc_cubin.cpp), then a summary of the totals' B/A per cell.
# Run on the GPU machine from the repository root (no carry needed):
#   bash bench/gdn_bwd_trials.sh [rounds]
# OPGRAPH_BWD_TRIALS: the variants, ';'-separated define sets (default: the A/B forms left off in
# docs/linear_attention.md's table "Trials written without a device", each alone). Logs to $OUT/trial<i>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
mkdir -p "$out"
rounds=${1:-10}
# (2026-12-05's run of the six trials: bench/results/2026-12-05-gdn-trials-h200.txt; three are the engine's since.
# 2026-12-07's run of five (H100): bench/results/2026-12-07-gdn-trials-h100.txt; none the engine's, L2_PREFETCH and
# REV_QK removed since; the same day's run of the last four (QK_ONCE, SPLIT_WAIT, ROWS_FIRST, M2_SYM, H100,
# bench/results/2026-12-07-gdn-onepass-pass1-h100.txt): 0.989-1.068x, none kept, all four removed. The default now:
# the trials left off, each alone (EPI_DEFER, EPI_SPREAD, SDS_IN_GRADS), all measured: a re-run on another device.
# EPI_DEFER comes out bitwise, EPI_SPREAD within 1e-5 RMS of A (OPGRAPH_AB_TIGHT=1), SDS_IN_GRADS's dG ~9e-4 from A's
# on the varlen cells (within the default bounds, not the tight one).)
variants=${OPGRAPH_BWD_TRIALS:-"-DGDN_BWD_EPI_DEFER=1;-DGDN_BWD_EPI_SPREAD=1;-DGDN_BWD_SDS_IN_GRADS=1"}
IFS=';' read -r -a vs <<<"$variants"
dir=$(mktemp -d)
nvcc -std=c++17 bench/nvrtc_cubin.cpp -o "$dir/nvrtc_cubin" -lnvrtc
# The engine's side and each variant's: cubins and launch sizes (bench/gdn_bwd_ab_lib.sh), built in parallel.
# shellcheck source=bench/gdn_bwd_ab_lib.sh
source bench/gdn_bwd_ab_lib.sh
ab_bg nvcc -std=c++20 -O2 -arch=sm_90 -Isrc/engines -Ibench bench/gdn_bwd_ab.cu -o "$dir/ab" -lcuda
ab_side . a "" "states grads fused"
for i in "${!vs[@]}"; do ab_side . "b$i" "${vs[$i]}" "states grads fused"; done
ab_wait || exit 1
summary=()
for i in "${!vs[@]}"; do
  log=$out/trial$i.log
  {
    echo "# gdn_bwd trial $i: $(date -u +%F' '%T) UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    echo "# command: OPGRAPH_BWD_TRIALS=\"${vs[$i]}\" bash bench/gdn_bwd_trials.sh $rounds (B: ${vs[$i]})"
    ab_ptxas a states grads fused
    ab_ptxas "b$i" states grads fused
    timeout "${OPGRAPH_AB_TIMEOUT:-300}" "$dir/ab" "$dir/a_states.cubin" "$dir/a_grads.cubin" "$("$dir/a_smem")" \
      "$dir/b${i}_states.cubin" "$dir/b${i}_grads.cubin" "$("$dir/b${i}_smem")" "$rounds" "$dir/a_fused.cubin" \
      "$dir/b${i}_fused.cubin" "$("$dir/a_fsmem")" "$("$dir/b${i}_fsmem")" || echo "ab exited with status $?"
  } 2>&1 | tee "$log"
  while read -r line; do summary+=("${vs[$i]} | $line"); done < <(grep -E 'total A .* B/A' "$log" | sed -E \
    's/^(.{46}) total A +([0-9.]+) B +([0-9.]+) ms B\/A ([0-9.]+) .*\| B vs A:(.*)$/\1 | \2 \3 | \4 |\5/')
done
echo
echo "== gdn_bwd trials (PIPELINE_ARCH 3's kernels; A the engine's build): variant | cell | A ms B ms | B/A | B vs A"
printf '%s\n' "${summary[@]}"
