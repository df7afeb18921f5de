#!/usr/bin/env bash
# Two builds of the fused gdn prefill on the same inputs in one process (bench/gdn_fused_ab.cu):
# A = kernels/gdn_fused.cu as the engine compiles it, B = the same source with the defines given
# (a variant under trial). Run on the GPU machine from the repository root:
#   bash bench/gdn_fused_ab.sh "-DGDN_FUSED_WS=1" [rounds]          (the warp-specialised form)
#   bash bench/gdn_fused_ab.sh "-DGDN_FUSED_WS=1 -DGDN_WS_CLOCK=1"  (the same with its phase clocks)
# OPGRAPH_AB_A_DEFS: defines for A too (A a variant's base), e.g. the WS form against its row-request point:
#   OPGRAPH_AB_A_DEFS=-DGDN_FUSED_WS=1 bash bench/gdn_fused_ab.sh "-DGDN_FUSED_WS=1 -DGDN_WS_ROWS_AT=1"
# Writes the log to ${OUT:-/tmp}/gdn_fused_ab.log; prints the table last. No carry needed.
# OPGRAPH_AB_TIMEOUT (default 120 s) bounds the run: a variant that hangs is reported, not waited on.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
defs=${1:?"the variant's defines, e.g. -DGDN_FUSED_WS=1"}
rounds=${2:-20}
dir=$(mktemp -d)
common=(-std=c++20 -O3 -arch=sm_90a -DGDN_D=128 -DGDN_IO=0 -Isrc/engines -Isrc/runtime/kernels/include)
src=src/engines/linear_attention/kernels/gdn_fused.cu
adefs=${OPGRAPH_AB_A_DEFS:-}
# shellcheck disable=SC2086
nvcc "${common[@]}" $adefs -cubin "$src" -o "$dir/a.cubin" -Xptxas -v >"$dir/a.ptxas" 2>&1
# OPGRAPH_AB_B_CUBIN: B is that cubin as built elsewhere (e.g. the engine's NVRTC build from the
# kernel cache), not this source with the defines (then given only to name the run).
if [ -n "${OPGRAPH_AB_B_CUBIN:-}" ]; then
  cp "$OPGRAPH_AB_B_CUBIN" "$dir/b.cubin" && echo "(B: $OPGRAPH_AB_B_CUBIN, not compiled here)" >"$dir/b.ptxas"
else
  # shellcheck disable=SC2086
  nvcc "${common[@]}" $defs -cubin "$src" -o "$dir/b.cubin" -Xptxas -v >"$dir/b.ptxas" 2>&1
fi
nvcc -std=c++20 -O2 -Isrc/engines bench/gdn_fused_ab.cu -o "$dir/ab" -lcuda
{
  echo "# gdn fused A/B: $(date -u +%F' '%T) UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "# command: ${adefs:+OPGRAPH_AB_A_DEFS=\"$adefs\" }bash bench/gdn_fused_ab.sh \"$defs\" $rounds"
  for c in a b; do
    echo "# $c, gdn_prefill_fused: $(grep -A3 "Compiling entry function 'gdn_prefill_fused'" "$dir/$c.ptxas" |
      grep -oE "[0-9]+ bytes spill stores|Used [0-9]+ registers" | paste -sd ' ')"
  done
  # A variant that hangs (a barrier never completing) costs at most this long.
  timeout "${OPGRAPH_AB_TIMEOUT:-120}" "$dir/ab" "$dir/a.cubin" "$dir/b.cubin" "$rounds" ||
    echo "ab exited with status $? (124: the ${OPGRAPH_AB_TIMEOUT:-120} s limit: a hang)"
} 2>&1 | tee "$out/gdn_fused_ab.log"
