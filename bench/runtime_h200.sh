#!/usr/bin/env bash
# bench/runtime_h200.sh — the GPU runtime (issue 5) on the H200, one call:
#   1. build Release with Ninja -j16 (GoogleTest and nlohmann-json from the
#      carried .device-deps/ when the image lacks them: bench/device_deps.sh);
#   2. test_runtime (the CI suite, here with a real libcuda present) and
#      test_runtime_gpu (kernels compiled, loaded and launched through the
#      runtime give the host's result; output poisoned first);
#   3. cold vs warm start of a process that needs 10 kernels
#      (bench/runtime_cold_warm.cpp): 3 cold processes (each a fresh cache
#      directory), then 5 warm ones on a warmed directory; plus one process
#      under OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1 on a directory warmed
#      device-less by `opgraph cache warm --all --arch sm_90a`.
# Prints a short table last and writes it to $OUT/runtime_h200.txt; the full
# log is $OUT/runtime_h200.log. Targets: warm per-kernel load < 5 ms, warm
# process at least 10x faster than cold.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"
LOG=$OUT/runtime_h200.log

main() {
echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi unavailable"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) $(git status --porcelain 2>/dev/null | wc -l) uncommitted path(s)"

echo "== dependencies"
CMAKE_ARGS=()
if [ -d .device-deps ]; then
  source "$ROOT/bench/device_env.sh"
fi

echo "== build"
BUILD=${OPGRAPH_BUILD_DIR:-$ROOT/build-h200}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON -DOPGRAPH_BUILD_BENCH=ON \
  "${CMAKE_ARGS[@]}" >"$OUT/cmake.log"
ninja -C "$BUILD" -j16 test_runtime test_runtime_gpu runtime_cold_warm opgraph_tool runtime_probe >"$OUT/build.log"
echo "built"

echo "== tests"
cpu_rc=0; gpu_rc=0
"$BUILD/tests/test_runtime" >"$OUT/test_runtime.log" 2>&1 || cpu_rc=$?
tail -3 "$OUT/test_runtime.log"
grep -E "^\[  FAILED  \]" "$OUT/test_runtime.log" || true
"$BUILD/tests/test_runtime_gpu" >"$OUT/test_runtime_gpu.log" 2>&1 || gpu_rc=$?
grep -E "device 0:|for_arch|FAILED|PASSED|Failure" -A2 "$OUT/test_runtime_gpu.log" || true

echo "== cold vs warm (10 kernels)"
BENCH=$BUILD/bench/runtime_cold_warm
RES=$OUT/cold_warm_results.txt
: >"$RES"
timed() {  # timed LABEL CACHE_DIR [env...]: one process, wall time added to its RESULT line
  local label=$1 dir=$2; shift 2
  local t0 t1 line
  t0=$(date +%s%N)
  line=$(env "$@" "$BENCH" --cache "$dir" --label "$label" --kernels 10 | grep '^RESULT') || { echo "FAILED $label"; return 1; }
  t1=$(date +%s%N)
  echo "$line wall_ms=$(( (t1 - t0) / 1000000 ))" | tee -a "$RES"
}
for i in 1 2 3; do
  d=$(mktemp -d /tmp/opgraph-cold-XXXX)
  timed cold "$d"
  [ "$i" = 3 ] && WARM_DIR=$d || rm -rf "$d"
done
for i in 1 2 3 4 5; do timed warm "$WARM_DIR"; done
AOT=$(mktemp -d /tmp/opgraph-aot-XXXX)
aot_rc=0
OPGRAPH_COMPILED_CACHE=$AOT "$BUILD/tools/opgraph" cache warm --all --arch sm_90a >"$OUT/aot_warm.log" 2>&1 || aot_rc=$?
timed aot_require_hit "$AOT" OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1 || aot_rc=$?
OPGRAPH_COMPILED_CACHE=$WARM_DIR "$BUILD/tools/opgraph" cache list >"$OUT/cache_list.txt" 2>&1 || true
OPGRAPH_COMPILED_CACHE=$AOT "$BUILD/tools/opgraph" cache list --arch sm_90a >>"$OUT/cache_list.txt" 2>&1 || true

python3 - "$RES" "$cpu_rc" "$gpu_rc" "$aot_rc" >"$OUT/runtime_h200.txt" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kv = dict(p.split("=", 1) for p in line.split()[1:])
    rows.setdefault(kv["label"], []).append(kv)
def med(label, key):
    v = [float(r[key]) for r in rows.get(label, [])]
    return statistics.median(v) if v else float("nan")
print("runtime on the H200: 10 smoke kernels per process (medians; cold n=%d, warm n=%d)"
      % (len(rows.get("cold", [])), len(rows.get("warm", []))))
print("%-34s %10s %10s" % ("", "cold", "warm"))
for key, name in [("wall_ms", "process wall (ms)"), ("first_result_ms", "main() to 10 results checked (ms)"),
                  ("init_ms", "cuInit+context+env (ms)"), ("kernels_ms", "acquire 10 kernels (ms)"),
                  ("load_median_ms", "per-kernel acquire, median (ms)"), ("load_max_ms", "per-kernel acquire, max (ms)")]:
    print("%-34s %10.2f %10.3f" % (name, med("cold", key), med("warm", key)))
kc, kw = med("cold", "kernels_ms"), med("warm", "kernels_ms")
wc, ww = med("cold", "wall_ms"), med("warm", "wall_ms")
fc, fw = med("cold", "first_result_ms"), med("warm", "first_result_ms")
print("warm/cold speed-up: kernel acquisition %.1fx, main() to first result %.1fx, process wall %.1fx" % (kc / kw, fc / fw, wc / ww))
lm = med("warm", "load_max_ms")
print("target per-kernel warm load < 5 ms: %s (max %.3f ms)" % ("MET" if lm < 5 else "MISSED", lm))
print("target warm >= 10x faster than cold (kernel acquisition): %s" % ("MET" if kc / kw >= 10 else "MISSED"))
bad = sum(int(r["bad"]) for rs in rows.values() for r in rs)
hits_ok = all(int(r["hits"]) == 10 for r in rows.get("warm", []))
print("results checked against the host in every process: %s; warm processes all hits: %s" % ("all right" if bad == 0 else "%d WRONG" % bad, hits_ok))
aot = rows.get("aot_require_hit", [])
print("device-less warm (--arch sm_90a) then REQUIRE_HIT on the GPU: %s" % ("hit" if aot and sys.argv[4] == "0" else "MISS (environment differs; see log)"))
print("test_runtime rc=%s, test_runtime_gpu rc=%s" % (sys.argv[2], sys.argv[3]))
PY
echo
echo "== table (also $OUT/runtime_h200.txt)"
cat "$OUT/runtime_h200.txt"
}

main 2>&1 | tee "$LOG"
