#!/usr/bin/env bash
# bench/gemm_h200.sh — the gemm family (issue 9) on the H200, one call:
#   1. build Release with Ninja -j16 (GoogleTest / nlohmann-json from the
#      carried .device-deps/: bench/device_deps.sh);
#   2. test_gemm (the CI suite: NVRTC compiles, support rules) and
#      test_gemm_gpu (numerics of v1 and v2 against the reference engine,
#      outputs poisoned);
#   3. gemm_bench (our pick and its best variant, the cudnn family's best plan,
#      same buffers), then bench/gemm_anchor_h200.sh (bench/gemm_vs_torch.py:
#      our pick, torch.matmul = cuBLAS or torch eager matmul + bias + gelu, and
#      the cudnn family's first plan, timed interleaved: the ratios of record);
#      bench/gemm_torch.py instead where the anchor cannot run; a PNG plot
#      (ours, cuBLAS, cuDNN);
#   4. examples/graphs/matmul_bias_gelu.json on this device: what cuDNN answers,
#      `opgraph plan` (where the list puts each engine) and `opgraph run` (the
#      pick, executed on the GPU, checked against the reference).
# Prints a table last and writes it to $OUT/gemm_h200.txt; logs under $OUT.
#
# OPGRAPH_GEMM_BIN=DIR: use the binaries bench/gpu_check_bins.sh built on the
# dev machine (no device build; test_gemm is then the dev machine's run).
# OPGRAPH_GEMM_GPU_RC=N: test_gemm_gpu already ran in this call (bench/gpu_check_h200.sh) with exit N.
# OPGRAPH_GEMM_ANCHOR=0: no interleaved anchor (bench/gemm_torch.py instead).
# GEMM_H200_MODE=confirm: a short re-check (build, the example, test_gemm_gpu,
# gemm_bench --confirm and torch's anchors of its shapes; no test_gemm).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"

main() {
echo "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || echo "nvidia-smi unavailable"
# The binaries' commit where they were built elsewhere (a carried tree's git may be an enclosing checkout's).
if [ -n "${OPGRAPH_GEMM_BIN:-}" ] && [ -f "$OPGRAPH_GEMM_BIN/COMMIT" ]; then
  echo "commit: $(tr '\n' ' ' <"$OPGRAPH_GEMM_BIN/COMMIT") (the binaries')"
else
  echo "commit: $(cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
fi

CMAKE_ARGS=()
if [ -d .device-deps ]; then
  source "$ROOT/bench/device_env.sh"
fi

if [ -n "${OPGRAPH_GEMM_BIN:-}" ]; then
  # Binaries built on the dev machine (bench/gpu_check_bins.sh -> .dev/bin); no test_gemm there.
  echo "== binaries from $OPGRAPH_GEMM_BIN (commit $(cat "$OPGRAPH_GEMM_BIN/COMMIT" 2>/dev/null | tr '\n' ' '))"
  GEMM_BENCH=$OPGRAPH_GEMM_BIN/gemm_bench TEST_GEMM_GPU=$OPGRAPH_GEMM_BIN/test_gemm_gpu TOOL=$OPGRAPH_GEMM_BIN/opgraph
  TEST_GEMM=
else
  echo "== build"
  BUILD=${OPGRAPH_BUILD_DIR:-$ROOT/build-h200}
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON -DOPGRAPH_BUILD_BENCH=ON \
    "${CMAKE_ARGS[@]}" >"$OUT/cmake.log" || { tail -20 "$OUT/cmake.log"; exit 1; }
  ninja -C "$BUILD" -j16 test_gemm test_gemm_gpu gemm_bench opgraph_tool >"$OUT/build.log" || { tail -40 "$OUT/build.log"; exit 1; }
  echo "built"
  GEMM_BENCH=$BUILD/bench/gemm_bench TEST_GEMM_GPU=$BUILD/tests/test_gemm_gpu TOOL=$BUILD/tools/opgraph
  TEST_GEMM=$BUILD/tests/test_gemm
fi
export OPGRAPH_COMPILED_CACHE=$(mktemp -d /tmp/opgraph-gemm-cache-XXXX)

echo "== the example on this device: plan list, cuDNN's answer, opgraph run (gemm on by default)"
EX=examples/graphs/matmul_bias_gelu.json
"$GEMM_BENCH" --device-json "$OUT/h200_device.json" --explain-backend "$EX" >"$OUT/plan_list.txt" 2>&1
timeout 60 "$TOOL" plan --device "$OUT/h200_device.json" "$EX" >>"$OUT/plan_list.txt" 2>&1 || echo "opgraph plan rc=$?"
timeout 60 "$TOOL" run --device "$OUT/h200_device.json" --iters 20 "$EX" >>"$OUT/plan_list.txt" 2>&1 || echo "opgraph run rc=$?" | tee -a "$OUT/plan_list.txt"
cat "$OUT/plan_list.txt"

MODE=${GEMM_H200_MODE:-full}
ci_rc=0; gpu_rc=0
gpu_tests() {
echo "== tests"
if [ -n "${OPGRAPH_GEMM_GPU_RC:-}" ]; then  # run by bench/gpu_check_h200.sh in the same call
  gpu_rc=$OPGRAPH_GEMM_GPU_RC; echo "test_gemm_gpu ran in the GPU check: rc=$gpu_rc"; return
fi
# 20 tests, ~360 s with a cold kernel cache (2026-12-01, S9-3: 12 of them in 290 s).
timeout 400 "$TEST_GEMM_GPU" >"$OUT/test_gemm_gpu.log" 2>&1 || gpu_rc=$?
grep -E "^\[  (FAILED|PASSED)|Failure|bad; worst|CUDA_ERROR" "$OUT/test_gemm_gpu.log" | head -30 || true
}
[ "$MODE" = confirm ] || gpu_tests

echo "== bench"
: >"$OUT/gemm_results.txt"
[ "$MODE" = confirm ] && GEMM_BENCH_ARGS="--confirm"
timeout 200 "$GEMM_BENCH" --device-json "$OUT/h200_device.json" ${GEMM_BENCH_ARGS:-} | tee -a "$OUT/gemm_results.txt" || echo "gemm_bench rc=$?"
PY=/opt/torch/.venv/bin/python3
[ -x "$PY" ] || PY=python3
# The anchors of record: our pick, cuBLAS (torch) and cuDNN's first plan timed
# interleaved in one process (bench/gemm_anchor_h200.sh, ~180 s with its module
# build); gemm_table.py takes a shape's ratios from its ANCHOR line. Where that
# cannot run (OPGRAPH_GEMM_ANCHOR=0, confirm mode, a failed build or check),
# bench/gemm_torch.py times torch on its own, after gemm_bench.
anchored=0
if [ "$MODE" != confirm ] && [ "${OPGRAPH_GEMM_ANCHOR:-1}" = 1 ]; then
  echo "== interleaved anchor (bench/gemm_anchor_h200.sh)"
  OUT="$OUT" OPGRAPH_ANCHOR_TIMEOUT=${OPGRAPH_ANCHOR_TIMEOUT:-300} bash bench/gemm_anchor_h200.sh && anchored=1
  grep -E "^(ANCHOR|CHECK FAILED)" "$OUT/gemm_vs_torch.txt" >>"$OUT/gemm_results.txt" 2>/dev/null || true
fi
if [ "$anchored" = 0 ]; then
  # confirm: the anchors of gemm_bench --confirm's shapes only.
  [ "$MODE" = confirm ] && export OPGRAPH_GEMM_SHAPES=4096x4096x4096/none,4096x4096x4096/bias+gelu,16x4096x4096/bias+gelu
  timeout 120 "$PY" bench/gemm_torch.py | tee -a "$OUT/gemm_results.txt" || echo "torch anchor failed"
fi

[ "$MODE" = confirm ] && gpu_tests
echo "== test_gemm (CI suite)"
if [ -n "$TEST_GEMM" ]; then
  [ "$MODE" = confirm ] || timeout 90 "$TEST_GEMM" >"$OUT/test_gemm.log" 2>&1 || ci_rc=$?
else
  echo "(not built here: the dev machine ran it for this commit)" >"$OUT/test_gemm.log"
fi
tail -2 "$OUT/test_gemm.log"

"$PY" bench/gemm_table.py "$OUT/gemm_results.txt" "$ci_rc" "$gpu_rc" "$OUT/gemm_h200.png" >"$OUT/gemm_h200.txt"
echo
echo "== table (also $OUT/gemm_h200.txt)"
cat "$OUT/gemm_h200.txt"
}

main 2>&1 | tee "$OUT/gemm_h200.log"
