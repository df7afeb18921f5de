#!/usr/bin/env bash
# Two builds of the gdn backward on the same inputs in one process (bench/gdn_bwd_ab.cu): A =
# kernels/gdn_bwd_states.cu and kernels/gdn_bwd_grads.cu as the engine compiles them (NVRTC, the
# engine's options: bench/nvrtc_cubin.cpp), B = the same sources with the defines given (a variant
# under trial). Run on the GPU machine from the repository root (no carry needed):
#   bash bench/gdn_bwd_ab.sh "-DGDN_BWD_VARIANT=1" [rounds]
# OPGRAPH_AB_A_DEFS: defines for A too. OPGRAPH_AB_A_REV: A's sources from that git revision instead of
# the work tree (the engine's kernels before a change, B the work tree's: pass "" as the defines);
# OPGRAPH_AB_A_DIR: from that directory (holding src/engines and src/runtime/kernels/include, e.g.
# `git archive REV src | tar -x -C DIR` here, carried to a machine without the repository's history).
# OPGRAPH_AB_FUSED=1: both sides run the backward as PIPELINE_ARCH 3 does (gdn_bwd_fwd_fused, gdn_bwd_rev_fused from
# kernels/gdn_fused.cu built with -DGDN_FUSED_WS=1 and the side's defines, then gdn_bwd_grads, gdn_bwd_finish), so the
# fused forms' trials are A/B runs: e.g. OPGRAPH_AB_FUSED=1 bash bench/gdn_bwd_ab.sh "-DGDN_BWD_FWD_STAGE=1" 10.
# OPGRAPH_AB_ONEPASS=1 (with OPGRAPH_AB_FUSED=1 and "-DGDN_BWD_ONEPASS=1" among B's defines): B runs the one-pass
# design's two passes (gdn_bwd_fwd_st_fused, gdn_bwd_onepass) and gdn_bwd_finish against A's PIPELINE_ARCH 3.
# OPGRAPH_AB_TIGHT=1: B's gradients within 1e-5 RMS of A's (a B that reorders a sum; else 4e-3, dG and dBeta 1e-2).
# Writes the log to ${OUT:-/tmp}/gdn_bwd_ab.log; prints the table last. OPGRAPH_AB_TIMEOUT (default
# 300 s) bounds the run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
mkdir -p "$out"
defs=${1-}
rounds=${2:-10}
dir=$(mktemp -d)
adefs=${OPGRAPH_AB_A_DEFS:-}
nvcc -std=c++17 bench/nvrtc_cubin.cpp -o "$dir/nvrtc_cubin" -lnvrtc
asrc=${OPGRAPH_AB_A_DIR:-.}
if [ -n "${OPGRAPH_AB_A_REV:-}" ]; then
  asrc=$dir/arev
  mkdir -p "$asrc"
  git archive "$OPGRAPH_AB_A_REV" src/engines src/runtime/kernels/include | tar -x -C "$asrc"
fi
# The two sides' cubins and launch sizes (bench/gdn_bwd_ab_lib.sh), built in parallel, and the harness.
# shellcheck source=bench/gdn_bwd_ab_lib.sh
source bench/gdn_bwd_ab_lib.sh
fused=${OPGRAPH_AB_FUSED:-0}
files="states grads"
[ "$fused" = 1 ] && files="states grads fused"
ab_side "$asrc" a "$adefs" "$files"
ab_side . b "$defs" "$files"
ab_bg nvcc -std=c++20 -O2 -arch=sm_90 -Isrc/engines -Ibench bench/gdn_bwd_ab.cu -o "$dir/ab" -lcuda
ab_wait || exit 1
fused_args=()
[ "$fused" = 1 ] && fused_args=("$dir/a_fused.cubin" "$dir/b_fused.cubin" "$("$dir/a_fsmem")" "$("$dir/b_fsmem")")
asmem=$("$dir/a_smem")
bsmem=$("$dir/b_smem")
{
  echo "# gdn_bwd A/B: $(date -u +%F' '%T) UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src 2>/dev/null || echo ' (+ uncommitted src changes)')"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  echo "# dynamic shared memory and head grouping (prep,fwd_scan,rev_scan,grads,grouped): A $asmem, B $bsmem"
  [ "$fused" = 1 ] && echo "# fused mode (PIPELINE_ARCH 3's kernels): fwd_fused,rev_fused shared memory A ${fused_args[2]}, B ${fused_args[3]}"
  echo "# command: ${OPGRAPH_AB_ONEPASS:+OPGRAPH_AB_ONEPASS=$OPGRAPH_AB_ONEPASS }${OPGRAPH_AB_TIGHT:+OPGRAPH_AB_TIGHT=$OPGRAPH_AB_TIGHT }${OPGRAPH_AB_FUSED:+OPGRAPH_AB_FUSED=$OPGRAPH_AB_FUSED }${adefs:+OPGRAPH_AB_A_DEFS=\"$adefs\" }${OPGRAPH_AB_A_REV:+OPGRAPH_AB_A_REV=$OPGRAPH_AB_A_REV }${OPGRAPH_AB_A_DIR:+OPGRAPH_AB_A_DIR=$OPGRAPH_AB_A_DIR }bash bench/gdn_bwd_ab.sh \"$defs\" $rounds"
  # shellcheck disable=SC2086
  ab_ptxas a $files
  # shellcheck disable=SC2086
  ab_ptxas b $files
  timeout "${OPGRAPH_AB_TIMEOUT:-300}" "$dir/ab" "$dir/a_states.cubin" "$dir/a_grads.cubin" "$asmem" \
    "$dir/b_states.cubin" "$dir/b_grads.cubin" "$bsmem" "$rounds" "${fused_args[@]}" || echo "ab exited with status $? (124: the ${OPGRAPH_AB_TIMEOUT:-300} s limit)"
} 2>&1 | tee "$out/gdn_bwd_ab.log"
