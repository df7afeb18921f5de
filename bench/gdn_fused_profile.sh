#!/usr/bin/env bash
# Where the fused gdn prefill's time goes, region by region between its barriers: one launch of
# gdn_prefill_fused (the 16/64, 4 x 8192 cell of GdnGpu.TimingFiveCells) under Nsight Compute's
# source counters, read by scripts/ncu_sass_regions.py (instructions a warp and chunk, stall samples).
# Run on the GPU machine from the repository root, .device-deps carried:
#   bash bench/gdn_fused_profile.sh [kernel regex (default gdn_prefill_fused)]
# Writes sass.csv and regions.txt to ${OUT:-/tmp}; prints the regions last.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
build=${OPGRAPH_BUILD_DIR:-/tmp/bb}
kernel=${1:-gdn_prefill_fused}
ROOT=$(pwd)
CMAKE_ARGS=()
[ -d .device-deps ] && source bench/device_env.sh >/dev/null
if [ ! -x "$build/tests/test_la_gpu" ] || [ "${OPGRAPH_REBUILD:-1}" = 1 ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON "${CMAKE_ARGS[@]}" >"$out/profile_cmake.log" 2>&1
  ninja -C "$build" -j"${OPGRAPH_JOBS:-14}" test_la_gpu >"$out/profile_build.log" 2>&1
fi
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "no ncu on this machine"; exit 1; }
# TimingFiveCells with OPGRAPH_GDN_REPS=1: per cell and mode 3 warm-up executes and 1 timed; the fused
# kernel's launches of cell 1 (2/8) come first, so skip 4 to profile cell 2 (16/64, 4 x 8192:
# 256 CTAs of 8 warps, 128 chunks each).
OPGRAPH_GDN_REPS=1 "$ncu" --section SourceCounters --section WarpStateStats -k "regex:^${kernel}\$" --launch-skip 4 \
  --launch-count 1 -f -o "$out/fused" "$build/tests/test_la_gpu" --gtest_filter=GdnGpu.TimingFiveCells \
  >"$out/profile_ncu.log" 2>&1
"$ncu" -i "$out/fused.ncu-rep" --page details --csv >"$out/details.csv" 2>/dev/null || true
"$ncu" -i "$out/fused.ncu-rep" --page source --csv --print-source sass >"$out/sass.csv"
{
  echo "# $kernel, GdnGpu.TimingFiveCells cell 16/64 4 x 8192, $(date -u +%F' '%T) UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "# command: bash bench/gdn_fused_profile.sh $kernel"
  grep -E '"(Duration|Registers Per Thread|Achieved Occupancy|Issue Slots Busy|Executed Ipc Active)"' "$out/details.csv" |
    awk -F'","' '{print "# " $(NF-2) " = " $NF}' | tr -d '"' | sort -u || true
  python3 scripts/ncu_sass_regions.py "$out/sass.csv" --per $((256 * 8 * 128))
} | tee "$out/regions.txt"
