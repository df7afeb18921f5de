#!/usr/bin/env bash
# Two builds of the fused gdn prefill on the same inputs in one process (bench/gdn_fused_ab.cu):
# A = kernels/gdn_fused.cu as the engine compiles it, B = the same source with the defines given
# (a variant under trial). Run on the GPU machine from the repository root:
#   bash bench/gdn_fused_ab.sh "-DGDN_FUSED_WS=1" [rounds]          (the warp-specialised form)
#   bash bench/gdn_fused_ab.sh "-DGDN_FUSED_WS=1 -DGDN_WS_CLOCK=1"  (the same with its phase clocks)
# OPGRAPH_AB_A_DEFS: defines for A too (A a variant's base), e.g. the WS form against its row-request point:
#   OPGRAPH_AB_A_DEFS=-DGDN_FUSED_WS=1 bash bench/gdn_fused_ab.sh "-DGDN_FUSED_WS=1 -DGDN_WS_ROWS_AT=1"
# OPGRAPH_AB_COMPILER: nvrtc (default: both sides through NVRTC with the engine's options, bench/nvrtc_cubin.cpp,
# so the figures are the engine's kernels') or nvcc (nvcc -O3; on the H200 the fused prefill's nvcc build ran ~8%
# faster than the NVRTC build the engine runs: bench/results/2026-12-03-gdn-nvrtc-vs-nvcc-h200.txt).
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
compiler=${OPGRAPH_AB_COMPILER:-nvrtc}
case "$compiler" in
  nvrtc) nvcc -std=c++17 bench/nvrtc_cubin.cpp -o "$dir/nvrtc_cubin" -lnvrtc ;;
  nvcc) ;;
  *) echo "OPGRAPH_AB_COMPILER is nvrtc or nvcc, not '$compiler'" >&2; exit 2 ;;
esac
# One side's cubin from the source with defines $2 (the input type and head size as the engine's d128 bf16 build).
build() {
  if [ "$compiler" = nvrtc ]; then
    # shellcheck disable=SC2086
    "$dir/nvrtc_cubin" "$1" sm_90a "$src" -DGDN_D=128 -DGDN_IO=0 $2 --ptxas-options=-v
  else
    # shellcheck disable=SC2086
    nvcc "${common[@]}" $2 -cubin "$src" -o "$1" -Xptxas -v
  fi
}
build "$dir/a.cubin" "$adefs" >"$dir/a.ptxas" 2>&1
# OPGRAPH_AB_B_CUBIN: B is that cubin as built elsewhere (e.g. the engine's NVRTC build from the
# kernel cache), not this source with the defines (then given only to name the run).
if [ -n "${OPGRAPH_AB_B_CUBIN:-}" ]; then
  cp "$OPGRAPH_AB_B_CUBIN" "$dir/b.cubin" && echo "(B: $OPGRAPH_AB_B_CUBIN, not compiled here)" >"$dir/b.ptxas"
else
  build "$dir/b.cubin" "$defs" >"$dir/b.ptxas" 2>&1
fi
nvcc -std=c++20 -O2 -Isrc/engines bench/gdn_fused_ab.cu -o "$dir/ab" -lcuda
{
  echo "# gdn fused A/B: $(date -u +%F' '%T) UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "# command: ${adefs:+OPGRAPH_AB_A_DEFS=\"$adefs\" }OPGRAPH_AB_COMPILER=$compiler bash bench/gdn_fused_ab.sh \"$defs\" $rounds"
  for c in a b; do
    echo "# $c, gdn_prefill_fused: $(grep -A3 "Compiling entry function 'gdn_prefill_fused'" "$dir/$c.ptxas" |
      grep -oE "[0-9]+ bytes spill stores|Used [0-9]+ registers" | paste -sd ' ')"
  done
  # A variant that hangs (a barrier never completing) costs at most this long.
  timeout "${OPGRAPH_AB_TIMEOUT:-120}" "$dir/ab" "$dir/a.cubin" "$dir/b.cubin" "$rounds" ||
    echo "ab exited with status $? (124: the ${OPGRAPH_AB_TIMEOUT:-120} s limit: a hang)"
} 2>&1 | tee "$out/gdn_fused_ab.log"
