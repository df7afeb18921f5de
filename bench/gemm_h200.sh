#!/usr/bin/env bash
# bench/gemm_h200.sh — the gemm family (issue 9) on the H200, one call:
#   1. build Release with Ninja -j16 (GoogleTest / nlohmann-json from the
#      carried .device-deps/: bench/device_deps.sh);
#   2. test_gemm (the CI suite: NVRTC compiles, support rules) and
#      test_gemm_gpu (numerics against the reference engine, outputs poisoned);
#   3. gemm_bench (our kernels' TFLOP/s: the heuristic's pick and the best
#      proposable config) and bench/gemm_torch.py (torch.matmul = cuBLAS, and
#      torch eager matmul + bias + gelu) in the same run.
# Prints a table last and writes it to $OUT/gemm_h200.txt; logs under $OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"

main() {
echo "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || echo "nvidia-smi unavailable"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

CMAKE_ARGS=()
if [ -d .device-deps ]; then
  source "$ROOT/bench/device_env.sh"
fi

echo "== build"
BUILD=${OPGRAPH_BUILD_DIR:-$ROOT/build-h200}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON -DOPGRAPH_BUILD_BENCH=ON \
  "${CMAKE_ARGS[@]}" >"$OUT/cmake.log"
ninja -C "$BUILD" -j16 test_gemm test_gemm_gpu gemm_bench >"$OUT/build.log" || { tail -40 "$OUT/build.log"; exit 1; }
echo "built"
export OPGRAPH_COMPILED_CACHE=$(mktemp -d /tmp/opgraph-gemm-cache-XXXX)

echo "== tests"
ci_rc=0; gpu_rc=0
"$BUILD/tests/test_gemm" >"$OUT/test_gemm.log" 2>&1 || ci_rc=$?
tail -2 "$OUT/test_gemm.log"
"$BUILD/tests/test_gemm_gpu" >"$OUT/test_gemm_gpu.log" 2>&1 || gpu_rc=$?
grep -E "^\[  (FAILED|PASSED)|Failure|bad; worst" "$OUT/test_gemm_gpu.log" | head -40 || true

echo "== bench"
: >"$OUT/gemm_results.txt"
"$BUILD/bench/gemm_bench" ${GEMM_BENCH_ARGS:-} | tee -a "$OUT/gemm_results.txt" || echo "gemm_bench failed rc=$?"
PY=/opt/torch/.venv/bin/python
[ -x "$PY" ] || PY=python3
"$PY" bench/gemm_torch.py | tee -a "$OUT/gemm_results.txt" || echo "torch anchor failed"

python3 - "$OUT/gemm_results.txt" "$ci_rc" "$gpu_rc" >"$OUT/gemm_h200.txt" <<'PY'
import math, sys
ours, torch = {}, {}
for line in open(sys.argv[1]):
    if not line.startswith(("RESULT", "TORCH")):
        continue
    kv = dict(p.split("=", 1) for p in line.split()[1:])
    key = (kv["shape"], kv["chain"])
    (ours if line.startswith("RESULT") else torch)[key] = kv
print("gemm on the H200: bf16 in/out, A row-major, B column-major (TFLOP/s; cuBLAS = torch.matmul, same run)")
print("%-20s %-10s %9s %9s %9s %7s  %s" % ("M x N x K", "epilogue", "v1 pick", "v1 best", "cuBLAS", "best/cB", "best config"))
ratios = {"big": [], "small": []}
for key in sorted(set(ours) | set(torch), key=lambda k: (k[1], [int(x) for x in k[0].split("x")])):
    o, t = ours.get(key, {}), torch.get(key, {})
    best = float(o.get("best_tflops", "nan")); ref = float(t.get("tflops", "nan"))
    r = best / ref if ref == ref and ref > 0 else float("nan")
    if key[1] == "none" and r == r:
        ratios["big" if int(key[0].split("x")[0]) >= 1024 else "small"].append(r)
    print("%-20s %-10s %9s %9s %9s %7.2f  %s" % (key[0], key[1], o.get("pick_tflops", "-"), o.get("best_tflops", "-"),
                                                  t.get("tflops", "-"), r, o.get("best", "-")))
for name, label, target in (("big", "M >= 1024", 1.0), ("small", "M <= 128", 0.9)):
    v = ratios[name]
    g = math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
    print("geomean best/cuBLAS %s: %.2f (target %.2f)" % (label, g, target))
print("test_gemm rc=%s, test_gemm_gpu rc=%s" % (sys.argv[2], sys.argv[3]))
PY
echo
echo "== table (also $OUT/gemm_h200.txt)"
cat "$OUT/gemm_h200.txt"
}

main 2>&1 | tee "$OUT/gemm_h200.log"
