#!/usr/bin/env bash
# The README's test command: install missing packages, build everything, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_deps.sh
BUILD=${OPGRAPH_BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPGRAPH_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
