#!/usr/bin/env bash
# Host overhead per execute: builds Release (Ninja), runs bench/host_overhead.cpp
# (CPU rows: a 3-operand plan on a no-op engine vs an empty call) and, where a GPU
# is present, bench/host_overhead_gpu.cpp (a one-kernel plan vs a raw
# cuLaunchKernelEx of the same kernel); writes the table with machine, commit and
# command to $OUT/host_overhead.txt.
#   here:    bash bench/host_overhead.sh            (OUT defaults to build-bench/out)
#   device:  bash bench/device_deps.sh here first, then on the device, carrying
#            .device-deps:  OUT=$OUT bash bench/host_overhead.sh   (-j16 where a GPU is)
# Targets: CPU execute < 300 ns per call; GPU execute within 1.3x of the raw launch.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/build-bench/out}
mkdir -p "$OUT"
CMAKE_ARGS=()
if [ -d .device-deps ]; then  # the device image cannot install packages (bench/device_deps.sh)
  PREFIX=$ROOT/.device-deps/prefix
  CMAKE_ARGS+=("-DCMAKE_PREFIX_PATH=$PREFIX")
else
  bash scripts/setup_deps.sh >/dev/null
fi
GPU=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && GPU=1
JOBS=${OPGRAPH_JOBS:-$([ "$GPU" = 1 ] && echo 16 || echo 2)}  # the dev machine is shared: -j2 there
TARGETS=(host_overhead)
[ "$GPU" = 1 ] && TARGETS+=(host_overhead_gpu)
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_BUILD_BENCH=ON \
  -DOPGRAPH_BUILD_TESTS=OFF -DOPGRAPH_BUILD_TOOLS=OFF "${CMAKE_ARGS[@]}" >"$OUT/cmake.log"
ninja -C build-bench -j"$JOBS" "${TARGETS[@]}" >"$OUT/build.log"
{
  echo "# host_overhead  $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "machine: $(uname -srm); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); cores: $(nproc)"
  [ "$GPU" = 1 ] && echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n1)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (+local changes)')"
  echo "command: OPGRAPH_JOBS=$JOBS bash bench/host_overhead.sh  (Release, $(c++ --version | head -n1))"
  echo
  ./build-bench/bench/host_overhead
  if [ "$GPU" = 1 ]; then
    echo
    ./build-bench/bench/host_overhead_gpu
  else
    echo
    echo "GPU rows: no GPU on this machine (run on the device machine)"
  fi
} 2>&1 | tee "$OUT/host_overhead.txt"
