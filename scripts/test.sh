#!/usr/bin/env bash
# The README's test command: install missing packages, build everything, run every test,
# install the build and build the README's C++ example against the installed package.
# One line per phase, with the seconds since the start, so no stretch is silent.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)
phase() { echo "== test.sh [$(( $(date +%s) - START )) s] $*"; }
BUILD=${OPGRAPH_BUILD_DIR:-build}

phase "setup: scripts/setup_deps.sh"
bash scripts/setup_deps.sh
phase "configure: $BUILD (RelWithDebInfo, -Werror)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPGRAPH_WERROR=ON >/dev/null
phase "build: every target in $BUILD"
cmake --build "$BUILD" -j"$(nproc)"
phase "ctest"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"

# The installed package: headers, libopgraph.a, the tool, find_package(opgraph). The
# README's C++ example (examples/cpp_first_graph/) is configured against it alone.
phase "install + example: cmake --install into a temporary prefix, build examples/cpp_first_graph against it"
PREFIX=$(mktemp -d "${TMPDIR:-/tmp}/opgraph-install.XXXXXX")
trap 'rm -rf "$PREFIX"' EXIT
cmake --install "$BUILD" --prefix "$PREFIX/usr" >/dev/null
cmake -S examples/cpp_first_graph -B "$PREFIX/example" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX/usr" >/dev/null
cmake --build "$PREFIX/example"
"$PREFIX/example/first_graph" >"$PREFIX/example.out"
grep -q "^y dims = 1 x 128 x 14336$" "$PREFIX/example.out"
grep "plan(s), first: " "$PREFIX/example.out"
"$PREFIX/usr/bin/opgraph" --help >/dev/null

# The Python binding: build and install the package and its dependency numpy, linking the
# package installed above (the C++ core is compiled once: only the binding's own files
# build here), then its pytest suite. GPU tests skip without CUDA+torch.
# pytest's exit code stands: 5 (it collected no test) fails this script like any failure.
phase "python build: pip install ./python against the installed package (the binding's files only)"
python3 -m pip install --quiet --disable-pip-version-check pytest
python3 -m pip install --quiet --disable-pip-version-check \
  --config-settings=cmake.define.OPGRAPH_PREFIX="$PREFIX/usr" ./python
phase "pytest python/tests"
python3 -m pytest -q python/tests
phase "done"
