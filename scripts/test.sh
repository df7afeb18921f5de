#!/usr/bin/env bash
# The README's test command: install missing packages, build everything, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_deps.sh
BUILD=${OPGRAPH_BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPGRAPH_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
# The Python binding: build and install the package (the C++ core is built again inside,
# Release, linked statically), then its pytest suite. GPU tests skip without CUDA+torch.
# pytest's exit code stands: 5 (it collected no test) fails this script like any failure.
python3 -m pip install --quiet --disable-pip-version-check numpy pytest
python3 -m pip install --quiet --disable-pip-version-check ./python
python3 -m pytest -q python/tests
