#!/usr/bin/env bash
# The Python binding on the GPU machine (no network there), in ONE call (bench/run.sh tests):
#   1. build the extension with CMake directly (Release, symbols kept; nanobind from the
#      installed package; scikit-build-core not needed), and a second link of the same objects
#      WITHOUT the symbol-isolation flags (python/CMakeLists.txt: --exclude-libs,ALL, -Bsymbolic):
#      the pre-fix module, for the crash experiment;
#   2. the crash probe (python/tests/validate_probe.py) on both links, with and without torch
#      imported after opgraph (the pre-fix link is expected to crash where the toolchain puts a
#      copy of libstdc++ in the module, as /opt/gcc's g++ 13 does on the H200 machine); a crash
#      of the fixed link is re-run under cuda-gdb for a native backtrace;
#   3. the whole pytest suite with OPGRAPH_REQUIRE_GPU=1: the GPU tests must RUN (a skipped
#      GPU test fails this script: a skip never counts as a pass here);
#   4. bench/compare.py host (Python execute vs the C++ execute of the same plan vs torch's own call).
# Writes $OUT/gpu_python.txt (the summary bench/run.sh tests prints) and the logs; exit 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out/gpu_python}
mkdir -p "$OUT"
BUILD=${OPGRAPH_PY_BUILD_DIR:-build-py}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
OLD=$BUILD-oldlink
SUM=$OUT/gpu_python.txt
: >"$SUM"
say() { echo "$*" | tee -a "$SUM"; }
rc=0

NB_DIR=$(python3 -c "import nanobind; print(nanobind.cmake_dir())")
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
# The carried .device-deps (bench/device_deps.sh) holds this tree's cuDNN headers:
# the device image's own are older than the lowering is written against.
[ -d .device-deps/prefix ] && GEN+=("-DCMAKE_PREFIX_PATH=$PWD/.device-deps/prefix")
t0=$(date +%s)
cmake -S python -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_PY_NOSTRIP=ON -Dnanobind_DIR="$NB_DIR" \
  >"$OUT/cmake.log" 2>&1 || { say "cmake failed"; tail -20 "$OUT/cmake.log"; exit 1; }
cmake --build "$BUILD" -j"${OPGRAPH_JOBS:-$(nproc)}" --target _C >"$OUT/build.log" 2>&1 ||
  { say "build failed"; grep -m5 -A5 "error" "$OUT/build.log"; exit 1; }
mkdir -p "$OLD/opgraph" && cp "$BUILD"/opgraph/*.py "$OLD/opgraph/"
link=$(cd "$BUILD" && ninja -t commands _C | tail -1)
old_link=${link//-Wl,--exclude-libs,ALL/}
old_link=${old_link//-Wl,-Bsymbolic/}
old_link=${old_link// -o opgraph\// -o $OLD\/opgraph\/}
(cd "$BUILD" && eval "$old_link") >>"$OUT/build.log" 2>&1 || say "pre-fix relink failed"
say "# Python binding on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%FT%TZ)"
say "python $(python3 -c 'import sys;print(sys.version.split()[0])'), $(c++ --version | head -1), build $(( $(date +%s) - t0 )) s"
say "exported dynamic symbols: fixed $(nm -D --defined-only "$BUILD"/opgraph/_C*.so | wc -l), pre-fix $(nm -D --defined-only "$OLD"/opgraph/_C*.so 2>/dev/null | wc -l)"

# 2. The crash experiment.
say "crash probe (rc; 0 = clean, 139 = SIGSEGV):"
for variant in fixed prefix; do
  dir=$BUILD; [ "$variant" = prefix ] && dir=$OLD
  for mode in torch no-torch; do
    arg=(); [ "$mode" = no-torch ] && arg=(--no-torch)
    log=$OUT/probe_${variant}_${mode}.log
    PYTHONPATH=$dir timeout 120 python3 -X faulthandler python/tests/validate_probe.py "${arg[@]}" >"$log" 2>&1
    prc=$?
    say "  $variant link, $mode: rc=$prc $(grep -m1 -o 'Segmentation fault\|probe ok' "$log")"
    # A native backtrace (cuda-gdb also debugs host-only programs; there is no gdb there) for a
    # crash of the fixed link, or of both links with OPGRAPH_PROBE_GDB=1.
    if [ "$prc" != 0 ] && { [ "$variant" = fixed ] || [ "${OPGRAPH_PROBE_GDB:-0}" = 1 ]; } && command -v cuda-gdb >/dev/null; then
      PYTHONPATH=$dir timeout 120 cuda-gdb -batch -ex run -ex bt --args python3 python/tests/validate_probe.py \
        "${arg[@]}" >"$OUT/gdb_${variant}_${mode}.log" 2>&1
      grep -m12 "^#" "$OUT/gdb_${variant}_${mode}.log" | cut -c1-200 | sed 's/^/    /' | tee -a "$SUM"
    fi
    [ "$variant" = fixed ] && [ "$prc" != 0 ] && rc=1
  done
done

# 3. pytest, GPU tests required: test_gpu.py in its own process first (a CPU test that hands a
#    GPU engine bad pointers cannot poison their CUDA context), then every other test.
export PYTHONPATH="$BUILD${PYTHONPATH:+:$PYTHONPATH}"
OPGRAPH_REQUIRE_GPU=1 timeout 200 python3 -X faulthandler -m pytest -v -rsP python/tests/test_gpu.py >"$OUT/pytest_gpu.log" 2>&1
grc=$?
OPGRAPH_REQUIRE_GPU=1 timeout 200 python3 -X faulthandler -m pytest -v -rs --ignore=python/tests/test_gpu.py python/tests \
  >"$OUT/pytest.log" 2>&1
prc=$?
say "pytest GPU tests: rc=$grc; $(tail -1 "$OUT/pytest_gpu.log")"
say "pytest other tests: rc=$prc; $(tail -1 "$OUT/pytest.log")"
grep -E "test_gpu.py::.*(PASSED|FAILED|SKIPPED|ERROR)" "$OUT/pytest_gpu.log" | sed -E -e 's|^python/tests/||' -e 's/ *\[ *[0-9]+%\]$//' \
  | sed 's/^/  /' | tee -a "$SUM"
grep -E "^plan:" "$OUT/pytest_gpu.log" | cut -c1-200 | sed "s/^/  /" | tee -a "$SUM"
grep -hE "^E  |^(FAILED|ERROR) " "$OUT/pytest_gpu.log" "$OUT/pytest.log" | cut -c1-200 | head -16 | sed 's/^/  /' | tee -a "$SUM"
ran=$(grep -cE "test_gpu.py::.*PASSED" "$OUT/pytest_gpu.log")
skipped=$(grep -cE "test_gpu.py::.*SKIPPED" "$OUT/pytest_gpu.log")
{ [ "$grc" = 0 ] && [ "$prc" = 0 ]; } || rc=1
if [ "$ran" = 0 ] || [ "$skipped" != 0 ]; then say "GPU tests: $ran passed, $skipped skipped: a GPU test did not run"; rc=1; fi

# 4. The overhead bench (bench/timing.py's host timing).
timeout 180 python3 bench/compare.py host >"$OUT/python_overhead.log" 2>&1 || rc=1
sed -n '/^host enqueue per call/,$p' "$OUT/python_overhead.log" | tee -a "$SUM"
grep -E "Error|error" "$OUT/python_overhead.log" | head -5 | tee -a "$SUM"
say "gpu_python rc=$rc"
exit "$rc"
