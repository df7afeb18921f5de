#!/usr/bin/env bash
# The Python binding on the GPU machine (no network there): build the extension with CMake
# directly (nanobind from the installed package; scikit-build-core not needed), run the whole
# pytest suite (GPU tests included) and the execute-overhead benchmark. Logs go to
# bench/results/ (and to $OUT when set, so the device tool brings them back).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${OPGRAPH_PY_BUILD_DIR:-build-py}
NB_DIR=$(python3 -c "import nanobind; print(nanobind.cmake_dir())")
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
cmake -S python -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -Dnanobind_DIR="$NB_DIR" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target _C
export PYTHONPATH="$PWD/$BUILD${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p bench/results
stamp=$(date -u +%Y%m%d)
log=bench/results/python_gpu_tests_${stamp}.log
set +e
{
  echo "# pytest python/tests on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u)"
  echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  python3 -m pytest -v -rs python/tests 2>&1
} | tee "$log"
rc=${PIPESTATUS[0]}
python3 bench/python_overhead.py || rc=1
set -e
if [ -n "${OUT:-}" ]; then cp "$log" bench/results/python_overhead_"${stamp}".md "$OUT"/ 2>/dev/null || true; fi
exit "$rc"
