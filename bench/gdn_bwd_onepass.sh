#!/usr/bin/env bash
# bench/gdn_bwd_onepass.sh — the one-pass backward's trials (issue 25) in one device call: each variant an A/B of
# bench/gdn_bwd_ab.sh in one-pass mode (B = gdn_bwd_fwd_st_fused + gdn_bwd_onepass + gdn_bwd_finish built with the
# variant's defines, A = the engine's PIPELINE_ARCH 3, same inputs, interleaved), each log in its own folder under
# $OUT, every variant's table printed last. Run on the GPU machine from the repository root (no carry needed):
#   bash bench/gdn_bwd_onepass.sh [rounds] [variant ...]
# A variant is B's defines; "clock:DEFINES" runs the first three cells only (a build with GDN_BWD_CLOCK=1: the phase
# clocks, a measuring aid). Default: the engine's build (PIPELINE_ARCH 5's: RED and BATCH), the per-head staging (no
# RED) beside it, and the engine build's clocks.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
rounds=${1:-3}
variants=("${@:2}")
if [ ${#variants[@]} = 0 ]; then
  engine="-DGDN_BWD_ONEPASS=1 -DGDN_BWD_ONEPASS_RED=1 -DGDN_BWD_ONEPASS_BATCH=1"
  variants=("$engine" "-DGDN_BWD_ONEPASS=1 -DGDN_BWD_ONEPASS_BATCH=1" "clock:$engine -DGDN_BWD_CLOCK=1")
fi
i=0
for v in "${variants[@]}"; do
  i=$((i + 1))
  mkdir -p "$out/v$i"
  defs=$v
  env=(OUT="$out/v$i" OPGRAPH_AB_FUSED=1 OPGRAPH_AB_ONEPASS=1 OPGRAPH_AB_TIMEOUT="${OPGRAPH_AB_TIMEOUT:-200}")
  if [[ $v == clock:* ]]; then
    defs=${v#clock:}
    env+=(OPGRAPH_AB_CELLS=3)
  fi
  env "${env[@]}" bash bench/gdn_bwd_ab.sh "$defs" "$rounds" >"$out/v$i/stdout" 2>&1 || echo "variant $i exited $?"
done
i=0
for v in "${variants[@]}"; do
  i=$((i + 1))
  echo
  echo "==== variant $i: $v"
  grep -E '^# B gdn_bwd_onepass' "$out/v$i/gdn_bwd_ab.log" | head -1
  sed -n '/^== gdn_bwd A/,$p' "$out/v$i/gdn_bwd_ab.log"
done
