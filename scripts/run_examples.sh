#!/usr/bin/env bash
# The README's second command: install missing packages, build the `opgraph` tool,
# then plan and run every example graph (examples/graphs/*.json). Without a GPU the
# plans run on the CPU reference engine; `opgraph run` compares every output with
# the reference and exits non-zero when one exceeds its tolerance.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_deps.sh
BUILD=${OPGRAPH_BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPGRAPH_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target opgraph_tool
TOOL="$BUILD/tools/opgraph"
"$TOOL" info
status=0
for graph in examples/graphs/*.json; do
  echo
  echo "== $graph"
  "$TOOL" plan "$graph" || status=1
  "$TOOL" run "$graph" --iters 3 --seed 0 || status=1
done
exit $status
