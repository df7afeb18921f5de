#!/usr/bin/env bash
# Host overhead per execute (bench/host_overhead.cpp): builds Release, runs, and
# writes the table with machine, commit and command to $OUT/host_overhead.txt.
#   OUT=dir bash bench/host_overhead.sh            (OUT defaults to build-bench/out)
#   OPGRAPH_JOBS=16 on the device machine (default: nproc, at most 16).
# GPU part (a one-kernel plan vs a raw cuLaunchKernelEx of the same kernel, target
# within 1.3x): NOT BUILT YET. It needs the runtime layer (src/runtime/: loader,
# NVRTC) on main; until then this script measures the CPU rows on any machine
# and says so in the table.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build-bench/out}
JOBS=${OPGRAPH_JOBS:-$(nproc)}
[ "$JOBS" -gt 16 ] && JOBS=16
mkdir -p "$OUT"
bash scripts/setup_deps.sh >/dev/null
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_BUILD_BENCH=ON \
  -DOPGRAPH_BUILD_TESTS=OFF -DOPGRAPH_BUILD_TOOLS=OFF >/dev/null
cmake --build build-bench -j"$JOBS" --target host_overhead >/dev/null
{
  echo "# host_overhead  $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "machine: $(uname -srm); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); cores: $(nproc)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n1)"
  fi
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (+local changes)')"
  echo "command: OUT=$OUT bash bench/host_overhead.sh  (Release, g++ $(g++ -dumpversion))"
  echo
  ./build-bench/bench/host_overhead
} | tee "$OUT/host_overhead.txt"
