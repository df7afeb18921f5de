#!/usr/bin/env bash
# The gdn decode kernel's CTA shapes timed against each other and a copy of the same bytes
# (bench/gdn_decode_sweep.cu). Run on the GPU machine from the repository root:
#   bash bench/gdn_decode_sweep.sh [rounds]
# Writes the log to ${OUT:-/tmp}/gdn_decode_sweep.log; prints the summary table last.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
bin=$(mktemp -d)/gdn_decode_sweep
nvcc -std=c++20 -O3 -arch=sm_90a -DGDN_D=128 -DGDN_IO=0 -Isrc/engines -Isrc/runtime/kernels/include \
  bench/gdn_decode_sweep.cu -o "$bin"
{
  echo "# gdn decode shapes: $(date -u +%F' '%T) UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "# command: bash bench/gdn_decode_sweep.sh ${1:-15}"
  "$bin" "${1:-15}"
} 2>&1 | tee "$out/gdn_decode_sweep.log"
