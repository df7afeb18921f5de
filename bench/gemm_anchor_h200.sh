#!/usr/bin/env bash
# bench/gemm_anchor_h200.sh — on the H200, one call: builds the Python module
# (as scripts/gpu_python.sh does, into build-py) and runs bench/gemm_vs_torch.py:
# the gemm family's pick, the cudnn family's first plan and torch.matmul
# (cuBLAS) timed interleaved, round by round, in one process. Arguments pass
# through to the script; OPGRAPH_GEMM_SHAPES selects cases. Writes
# $OUT/gemm_vs_torch.txt and prints its table.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
BUILD=${OPGRAPH_PY_BUILD_DIR:-build-py}
mkdir -p "$OUT"
NB_DIR=$(python3 -c "import nanobind; print(nanobind.cmake_dir())")
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
[ -d .device-deps/prefix ] && GEN+=("-DCMAKE_PREFIX_PATH=$PWD/.device-deps/prefix")
t0=$(date +%s)
cmake -S python -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -Dnanobind_DIR="$NB_DIR" >"$OUT/anchor_cmake.log" 2>&1 &&
  cmake --build "$BUILD" -j"${OPGRAPH_JOBS:-$(nproc)}" --target _C >"$OUT/anchor_build.log" 2>&1 ||
  { echo "module build failed"; tail -20 "$OUT/anchor_cmake.log" "$OUT/anchor_build.log"; exit 1; }
echo "module built in $(( $(date +%s) - t0 )) s"
PYTHONPATH="$PWD/$BUILD${PYTHONPATH:+:$PYTHONPATH}" OPGRAPH_COMPILED_CACHE=${OPGRAPH_COMPILED_CACHE:-$(mktemp -d /tmp/opgraph-anchor-XXXX)} \
  timeout "${OPGRAPH_ANCHOR_TIMEOUT:-400}" python3 bench/gemm_vs_torch.py "$@" >"$OUT/gemm_vs_torch.txt" 2>&1
rc=$?
grep -vE "^ANCHOR" "$OUT/gemm_vs_torch.txt" | tail -45
echo "gemm_vs_torch rc=$rc"
exit "$rc"
