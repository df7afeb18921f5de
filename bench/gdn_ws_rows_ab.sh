#!/usr/bin/env bash
# bench/gdn_ws_rows_ab.sh — the warp-specialised fused prefill (A: as the engine builds it, GDN_WS_ROWS_AT 0)
# against its two earlier row-request points (B: GDN_WS_ROWS_AT 1, then 2) in bench/gdn_fused_ab.cu, the
# three cubins and the harness compiled at once. GPU machine, repository root, no carry:
#   bash bench/gdn_ws_rows_ab.sh [rounds]
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
d=$(mktemp -d)
common=(-std=c++20 -O3 -arch=sm_90a -DGDN_D=128 -DGDN_IO=0 -DGDN_FUSED_WS=1 -Isrc/engines -Isrc/runtime/kernels/include -cubin)
src=src/engines/linear_attention/kernels/gdn_fused.cu
nvcc "${common[@]}" "$src" -o "$d/a.cubin" 2>/dev/null &
nvcc "${common[@]}" -DGDN_WS_ROWS_AT=1 "$src" -o "$d/b1.cubin" 2>/dev/null &
nvcc "${common[@]}" -DGDN_WS_ROWS_AT=2 "$src" -o "$d/b2.cubin" 2>/dev/null &
nvcc -std=c++20 -O2 -Isrc/engines bench/gdn_fused_ab.cu -o "$d/ab" -lcuda &
wait
echo "# gdn WS rows A/B: $(date -u +%F' '%T) UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for b in 1 2; do
  echo "## B = GDN_WS_ROWS_AT $b (A = 0)"
  timeout -s KILL 60 "$d/ab" "$d/a.cubin" "$d/b$b.cubin" "$rounds" 2>&1 | grep -v "^# /tmp" || echo "ab exited with status $?"
done
