#!/usr/bin/env bash
# scripts/nvrtc_vs_nvcc.sh SOURCE [-DNAME=VALUE ...] — a kernel source's machine code through NVRTC with the engine's
# options (bench/nvrtc_cubin.cpp) and through nvcc -O3 (the A/B harnesses' compiler before 2026-12-03), side by side:
# each entry's instruction count and its loops over 30 instructions (scripts/sass_mix.py), for finding where NVRTC's
# 64-bit shared-memory pointers cost (docs/linear_attention_log.md). SOURCE is under
# src/engines/linear_attention/kernels/; the defines go to both compilers. No GPU needed; cuobjdump from PyPI
# (scripts/nvtools.sh). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc -std=c++17 bench/nvrtc_cubin.cpp -o "$tmp/nvrtc_cubin" -lnvrtc
printf '#include "linear_attention/kernels/%s"\n' "$src" >"$tmp/wrap.cu"
"$tmp/nvrtc_cubin" "$tmp/nvrtc.cubin" sm_90a "src/engines/linear_attention/kernels/$src" "$@" >/dev/null
nvcc -std=c++17 -O3 -cubin -arch=sm_90a --expt-relaxed-constexpr -Isrc/engines -Isrc/runtime/kernels/include "$@" \
  "$tmp/wrap.cu" -o "$tmp/nvcc.cubin" 2>/dev/null
echo "# $src $* — NVRTC (the engine's options) against nvcc -O3, sm_90a; static instruction counts"
for c in nvrtc nvcc; do
  echo "== $c"
  python3 scripts/sass_mix.py "$tmp/$c.cubin" | grep -v '^  [A-Z]'
done
