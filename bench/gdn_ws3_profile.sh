#!/usr/bin/env bash
# bench/gdn_ws3_profile.sh — where the warp-specialised fused prefill (PIPELINE_ARCH 3, the R3 form) spends
# its time, region by region between barriers: one launch of gdn_prefill_fused built as the engine builds it
# (NVRTC; the run of 2026-12-03 in bench/results/...-gdn-ws3-profile-h200.txt was an nvcc build)
# (-DGDN_FUSED_WS=1 plus any defines given), the 16/64 4 x 8192 cell of bench/gdn_fused_ab.cu (its first
# launch), under Nsight Compute's source counters, read by scripts/ncu_sass_regions.py. No carry needed.
#   bash bench/gdn_ws3_profile.sh ["-DGDN_WS_EXTRA=1"]
# The aux warpgroup's regions run on 4 of the 12 warps, the state side's on 8: the instruction counts are
# per warp of the CTA (256 CTAs x 12 warps x 128 chunks), so an aux region's own per-warp count is 3x the
# printed one, a state region's 1.5x. Writes sass.csv and regions.txt to ${OUT:-/tmp}; the regions last.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
defs="-DGDN_FUSED_WS=1 ${1:-}"
dir=$(mktemp -d)
# Through NVRTC as the engine compiles it (bench/nvrtc_cubin.cpp; nvcc's build runs ~8% faster), with line tables.
nvcc -std=c++17 bench/nvrtc_cubin.cpp -o "$dir/nvrtc_cubin" -lnvrtc
# shellcheck disable=SC2086
"$dir/nvrtc_cubin" "$dir/b.cubin" sm_90a src/engines/linear_attention/kernels/gdn_fused.cu -DGDN_D=128 -DGDN_IO=0 $defs \
  -lineinfo 2>/dev/null
nvcc -std=c++20 -O2 -Isrc/engines bench/gdn_fused_ab.cu -o "$dir/ab" -lcuda
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "no ncu on this machine"; exit 1; }
"$ncu" --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight \
  -k "regex:^gdn_prefill_fused\$" --launch-count 1 -f -o "$out/ws3" "$dir/ab" "$dir/b.cubin" "$dir/b.cubin" 1 \
  >"$out/profile_ncu.log" 2>&1 || { tail -20 "$out/profile_ncu.log"; exit 1; }
"$ncu" -i "$out/ws3.ncu-rep" --page details --csv >"$out/details.csv" 2>/dev/null || true
"$ncu" -i "$out/ws3.ncu-rep" --page source --csv --print-source sass >"$out/sass.csv"
{
  echo "# gdn_prefill_fused ($defs), bench/gdn_fused_ab.cu's first launch (16/64 4 x 8192), $(date -u +%F' '%T) UTC"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "# command: bash bench/gdn_ws3_profile.sh ${1:-}"
  grep -E '"(Duration|Registers Per Thread|Issue Slots Busy|Executed Ipc Active|Compute \(SM\) Throughput|Memory Throughput)"' \
    "$out/details.csv" | awk -F'","' '{print "# " $(NF-2) " = " $NF}' | tr -d '"' | sort -u || true
  python3 scripts/ncu_sass_regions.py "$out/sass.csv" --per $((256 * 12 * 128))
} | tee "$out/regions.txt"
