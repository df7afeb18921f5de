#!/usr/bin/env bash
# bench/run.sh — the one device entry point of the benchmarks: builds what the named areas need
# (Release, Ninja, -j$OPGRAPH_JOBS, default 16), runs them and writes ONE dated result file,
#   $RESULTS/<UTC date>-<area>[_<area>...]-<gpu>.txt
# ($RESULTS: $OUT when set, as on the device machine; else bench/results), whose header names the
# device, driver, CUDA, both cuDNN copies and which one each part loads, torch, the compiler, the
# commit and the exact command; then one section per area, each ending with its table. Logs go to
# $OUT/logs.tgz (the device tool returns at most 8 files).
#
#   bash bench/run.sh [area ...]          (no area: gemm sdpa host)
#
# areas (timing method: bench/timing.py and bench/timing.h; every comparison with a peer is kernel
# time against kernel time, CUDA-graph replays interleaved round by round in one process, on the
# same random inputs, outputs checked against each other; host time measured apart):
#   gemm           bench/compare.py gemm: ours vs cuBLAS (torch.mm) vs the cudnn family's first plan
#                  over the table's shapes; fused matmul+bias+gelu vs torch eager, cuBLASLt's GELU
#                  epilogue (torch._addmm_activation) and torch.compile; class geomeans
#   gemm-variants  bench/gemm_bench: our pick's variants against every cudnn plan ($OPGRAPH_GEMM_BENCH_ARGS:
#                  --quick / --confirm / --study; OPGRAPH_GEMM_SHAPES, OPGRAPH_GEMM_STUDY_* as documented there)
#   gemm-ncu       Nsight Compute: OPGRAPH_NCU_KEYS="MxNxK/chain/label ..." (gemm_bench --study variants)
#                  or OPGRAPH_NCU_SHAPE=MxNxK/chain (a shape's pick and cuDNN's plans); OPGRAPH_NCU_KERNEL:
#                  the kernel-name regex (default gemm_v2; e.g. nvjet for the library's kernels)
#   sdpa           bench/compare.py sdpa: bf16 SDPA fwd/bwd, ours (cudnn plan) vs torch's cuDNN attention
#   host           host cost (HOST time only, each figure measured alone; docs/autotune.md "Measured host
#                  cost"): bench/host_overhead (CPU: execute on a no-op engine), plan_host_cost (planning
#                  on the CPU; --exec: create_execution_plans + build_plans per example graph with every
#                  kernel cached, and a new shape of a known layout class - override execute, plan-cache
#                  new graph + build + execute, uncached - above a plain execute, for gemm, cudnn, gdn),
#                  host_overhead_gpu (execute vs a raw cuLaunchKernelEx), gdn_host_overhead_gpu (a gdn decode
#                  and fused prefill plan's execute vs a raw launch of its kernel), trust_gpu --host-only (the gemm
#                  plan vs a raw launch of its kernel), bench/compare.py host (plan + build through Python
#                  beside cudnn-frontend's, Python execute vs trust_gpu's raw launch of the same plan, cuDNN
#                  plans' Python execute vs the C++ execute and cudnn-frontend's pygraph.execute).
#                  cudnn-frontend: OPGRAPH_CUDNN_FE_WHEELS=<folder> (../shared/tools/peer_wheels.py DEST/c,
#                  carried into the call) is installed with its install.sh into /tmp/opgraph-cudnn-fe
#                  first; absent, its columns say why. No GPU here: the CPU paths (--exec --host --small,
#                  compare.py host --dry-run) run instead, as a check, not as figures
#   runtime        test_runtime(+_gpu); cold vs warm process start (runtime_cold_warm), device-less warm
#   trust          trust_gpu (conv/gemm plans vs the reference, misbindings refused), test_exec, GPU suites
#   cudnn          test_cudnn, test_cudnn_gpu (every op family and SDPA case on cudnn plans vs the
#                  reference), with the system libcudnn and with torch's
#   gdn            the linear_attention family's gdn forward: test_linear_attention (CPU: support rules, NVRTC
#                  compile of every declared kernel for sm_90a), test_la_gpu checks (vs the float64 reference,
#                  outputs poisoned, fresh random inputs; state pools; batch invariance; device ordinals;
#                  OPGRAPH_GDN_FILTER picks them), then GdnGpu.Timing*: the issue's five prefill cells (CUDA
#                  events, median of 30; the fla / FlashInfer columns are the issue's anchors, not same-run)
#                  and decode (T = 1) at B in {1, 64, 256, 1024} as state GB/s (OPGRAPH_GDN_TIMING=0 skips it);
#                  then each prefill kernel's device time per cell under ncu (bench/gdn_kernel_times.py)
#   gdn-peers      bench/compare.py gdn (bench/compare_gdn.py): gdn forward in ONE process, ours (every
#                  linear_attention plan through the Python binding) vs fla-core 0.6.0 and FlashInfer 0.7.2
#                  (chunk_gated_delta_rule; decode: gated_delta_rule_decode_pretranspose and a torch copy of the
#                  state bytes), CUDA-graph replays interleaved, outputs cross-checked (RMS ratio), the table
#                  last with ours/fla, ours/FlashInfer and the issue's anchors. The peers come from
#                  $OPGRAPH_PEER_SITE (default /tmp/site: ../shared/tools/peer_wheels.py's install.sh; docs/
#                  linear_attention.md "Same-run comparison with fla and FlashInfer" has the device calls);
#                  OPGRAPH_GDN_PEERS_ARGS (e.g. "--only decode", "--cells 1x32768"), OPGRAPH_GDN_ROUNDS (20),
#                  OPGRAPH_GDN_PEERS_TIMEOUT (default: 540 s less the time run.sh took to get there;
#                  on expiry the cells done are tabled)
#   gdn-bwd-peers  bench/compare.py gdn-bwd (bench/compare_gdn_bwd.py): gdn backward alone and forward +
#                  backward in ONE process, ours (gdn_bwd, and our forward's first plan) vs fla-core 0.6.0
#                  (torch.autograd.grad through chunk_gated_delta_rule), fla's gradients checked against ours
#                  (RMS ratio), the table last with the issue's anchors and FlashQLA's published figure; the
#                  peer site and OPGRAPH_GDN_PEERS_ARGS / _TIMEOUT / OPGRAPH_GDN_ROUNDS as gdn-peers
#   tests          every GPU suite, in parallel processes (gemm in 6 shards, cudnn in 2, with
#                  OPGRAPH_CUDNN_INCLUDE_UNVERIFIED=1 unless set, which gates nothing today), then
#                  scripts/gpu_python.sh: test_gemm_gpu, test_cudnn_gpu, test_runtime_gpu, test_la_gpu
#                  (GdnGpu and GdnBwdGpu, timing excluded); examples/graphs/matmul_bias_gelu.json and gdn_prefill_varlen.json
#                  planned and run on this device (opgraph plan / run)
#   plan           plan_chain 10000 100000 (planning time, linear in the nodes)
#
# Before a device call (here): `bash bench/device_deps.sh`; a clean worktree of the commit with
# .device-deps copied in; carry it and run `cd <it> && OPGRAPH_COMMIT=<sha> bash bench/run.sh ...`
# (the carried tree has no usable .git: name the commit). Build folders outside the carried one
# (OPGRAPH_BUILD_DIR=/tmp/bb OPGRAPH_PY_BUILD_DIR=/tmp/bp) survive into the next call on a warm
# machine. OPGRAPH_NO_BUILD=1 runs the binaries already in $OPGRAPH_BUILD_DIR / $OPGRAPH_PY_BUILD_DIR
# without configuring or building (a CPU check against a developer build). Exit status: non-zero if any
# area failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
AREAS=("$@")
[ ${#AREAS[@]} -eq 0 ] && AREAS=(gemm sdpa host)
known=" gemm gemm-variants gemm-ncu sdpa host runtime trust cudnn gdn gdn-peers gdn-bwd-peers tests plan "
for a in "${AREAS[@]}"; do
  [[ "$known" == *" $a "* ]] || { echo "bench/run.sh: unknown area '$a' (areas:$known)" >&2; exit 2; }
done
has() { [[ " ${AREAS[*]} " == *" $1 "* ]]; }
OUT=${OUT:-}
RESULTS=${OUT:-$ROOT/bench/results}
LOGS=${OUT:-$ROOT/build-bench/out}/logs
mkdir -p "$RESULTS" "$LOGS"
JOBS=${OPGRAPH_JOBS:-16}
PY=python3
[ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
TAG=$(echo "${GPU:-cpu}" | awk '{print tolower($NF)}')
FILE=$RESULTS/$(date -u +%F)-$(IFS=_; echo "${AREAS[*]}")-$TAG.txt
: >"$FILE"
fails=0
say() { echo "$*" | tee -a "$FILE"; }

# ---- the one preamble -------------------------------------------------------------------------
commit() {
  if [ -n "${OPGRAPH_COMMIT:-}" ]; then echo "$OPGRAPH_COMMIT (OPGRAPH_COMMIT)"; return; fi
  # Only this tree's own repository: a carried copy can sit inside another checkout.
  local top
  top=$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null) || { echo "unknown (no repository; set OPGRAPH_COMMIT)"; return; }
  if [ "$top" != "$ROOT" ]; then echo "unknown ($ROOT is not a repository root; set OPGRAPH_COMMIT)"; return; fi
  echo "$(git -C "$ROOT" rev-parse HEAD)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' +uncommitted changes')"
}
SYS_CUDNN=$(ldconfig -p 2>/dev/null | awk '/libcudnn\.so\.9 /{print $NF; exit}')
TORCH_CUDNN=$($PY -c "import os, nvidia.cudnn as c; print(os.path.join(list(c.__path__)[0], 'lib', 'libcudnn.so.9'))" 2>/dev/null)
cudnn_version() {  # cudnnGetVersion of one copy, loaded alone
  [ -n "$1" ] && [ -e "$1" ] || { echo "absent"; return; }
  $PY -c "import ctypes,sys; v=ctypes.CDLL(sys.argv[1]).cudnnGetVersion(); print('%d.%d.%d' % (v//10000, v//100%100, v%100))" "$1" 2>/dev/null || echo "?"
}
{
  echo "# bench/run.sh ${AREAS[*]} — $(date -u +%FT%TZ)"
  echo "command:  bash bench/run.sh ${AREAS[*]}$(env | grep -E '^OPGRAPH_[A-Z_]*=' | sort | sed 's/^/ [/; s/$/]/' | tr -d '\n')"
  echo "commit:   $(commit)"
  echo "device:   $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1 || echo none)"
  echo "host:     $(uname -srm); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); $(nproc) cores"
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  echo "CUDA:     $($NVCC --version 2>/dev/null | grep -o 'release [0-9.]*' || echo 'no nvcc') ($NVCC); libcuda $(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}')"
  echo "cuDNN:    system ${SYS_CUDNN:-none} ($(cudnn_version "$SYS_CUDNN")); torch's ${TORCH_CUDNN:-none} ($(cudnn_version "$TORCH_CUDNN"))"
  echo "          loaded: the C++ benches and suites the system copy (cudnn area: both, in turn); bench/compare.py"
  echo "          torch's (OPGRAPH_LIBCUDNN), so opgraph's cuDNN plans and torch run the same library"
  echo "torch:    $($PY -c 'import torch, sys; print(torch.__version__, "(CUDA", torch.version.cuda, ") Python", sys.version.split()[0])' 2>/dev/null || echo none)"
  echo "compiler: $(c++ --version | head -1); Release"
  echo
} | tee -a "$FILE"

# ---- building ---------------------------------------------------------------------------------
TARGETS=()
has gemm-variants && TARGETS+=(gemm_bench)
has gemm-ncu && TARGETS+=(gemm_bench)
has host && TARGETS+=(host_overhead host_overhead_gpu gdn_host_overhead_gpu trust_gpu plan_host_cost)
has runtime && TARGETS+=(test_runtime test_runtime_gpu runtime_cold_warm opgraph_tool)
has trust && TARGETS+=(trust_gpu test_gemm_gpu test_cudnn_gpu test_exec)
has cudnn && TARGETS+=(test_cudnn test_cudnn_gpu)
has gdn && TARGETS+=(test_linear_attention test_la_gpu)
has tests && TARGETS+=(test_gemm_gpu test_cudnn_gpu test_runtime_gpu test_la_gpu gemm_bench opgraph_tool)
has plan && TARGETS+=(plan_chain)
BUILD=${OPGRAPH_BUILD_DIR:-$ROOT/build-bench}
if [ "${OPGRAPH_NO_BUILD:-0}" = 1 ]; then
  say "not built (OPGRAPH_NO_BUILD=1): the binaries in $BUILD and the Python module in ${OPGRAPH_PY_BUILD_DIR:-$ROOT/build-py}"
elif [ ${#TARGETS[@]} -gt 0 ]; then
  CMAKE_ARGS=()
  [ -d .device-deps ] && source "$ROOT/bench/device_env.sh" >/dev/null
  t0=$(date +%s)
  if cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON -DOPGRAPH_BUILD_BENCH=ON \
       "${CMAKE_ARGS[@]}" >"$LOGS/cmake.log" 2>&1 &&
     ninja -C "$BUILD" -j"$JOBS" $(printf '%s\n' "${TARGETS[@]}" | sort -u) >"$LOGS/build.log" 2>&1; then
    say "built $(printf '%s\n' "${TARGETS[@]}" | sort -u | tr '\n' ' ')in $(( $(date +%s) - t0 )) s"
  else
    say "BUILD FAILED"; grep -E "error|FAILED" "$LOGS/cmake.log" "$LOGS/build.log" | head -20 | tee -a "$FILE"; exit 1
  fi
fi
PYBUILD=${OPGRAPH_PY_BUILD_DIR:-$ROOT/build-py}
if [ "${OPGRAPH_NO_BUILD:-0}" != 1 ] && { has gemm || has sdpa || has host || has gdn-peers || has gdn-bwd-peers; }; then
  NB_DIR=$($PY -c "import nanobind; print(nanobind.cmake_dir())")
  GEN=(-G Ninja)
  [ -d .device-deps/prefix ] && GEN+=("-DCMAKE_PREFIX_PATH=$ROOT/.device-deps/prefix")
  t0=$(date +%s)
  if cmake -S python -B "$PYBUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -Dnanobind_DIR="$NB_DIR" \
       >"$LOGS/py_cmake.log" 2>&1 && cmake --build "$PYBUILD" -j"$JOBS" --target _C >"$LOGS/py_build.log" 2>&1; then
    say "built the Python module in $(( $(date +%s) - t0 )) s"
  else
    say "PYTHON MODULE BUILD FAILED"; tail -20 "$LOGS/py_cmake.log" "$LOGS/py_build.log" | tee -a "$FILE"; exit 1
  fi
fi
say
export OPGRAPH_COMPILED_CACHE=${OPGRAPH_COMPILED_CACHE:-$(mktemp -d /tmp/opgraph-bench-cache-XXXX)}

# run NAME LIMIT_S CMD...: CMD under a time limit, its output in $LOGS/NAME.log; returns its rc.
run() {
  local name=$1 limit=$2
  shift 2
  local t0 rc
  t0=$(date +%s)
  timeout "$limit" "$@" >"$LOGS/$name.log" 2>&1
  rc=$?
  [ "$rc" = 0 ] || fails=$((fails + 1))
  echo "$name rc=$rc ($(( $(date +%s) - t0 )) s)" | tee -a "$FILE"
  return "$rc"
}
gtest_line() { grep -hE '^\[  (PASSED|FAILED)  \]' "$LOGS/$1.log" | head -3 | tr '\n' ' ' | tee -a "$FILE"; echo | tee -a "$FILE"; }
compare() {  # compare WHAT LIMIT [args]: bench/compare.py on torch's libcudnn; its output into the file
  local what=$1 limit=$2
  shift 2
  local env=(PYTHONPATH="$PYBUILD:$ROOT/bench${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1)
  [ -n "$TORCH_CUDNN" ] && env+=(OPGRAPH_LIBCUDNN="$TORCH_CUDNN")
  run "compare_$what" "$limit" env "${env[@]}" "$PY" bench/compare.py "$what" "$@"
  local rc=$?
  cat "$LOGS/compare_$what.log" >>"$FILE"
  return "$rc"
}
section() { say; say "## $*"; }

area_gemm() {
  section "gemm: ours vs cuBLAS vs cuDNN, fused vs eager / cuBLASLt epilogue / torch.compile (bench/compare.py gemm)"
  compare gemm "${OPGRAPH_GEMM_TIMEOUT:-540}"
}
area_gemm-variants() {
  section "gemm-variants: bench/gemm_bench ${OPGRAPH_GEMM_BENCH_ARGS:-}"
  # shellcheck disable=SC2086
  run gemm_bench 400 "$BUILD/bench/gemm_bench" ${OPGRAPH_GEMM_BENCH_ARGS:-}
  grep -hE "^(TIMING|VARIANT|CUDNN|RESULT|CLUSTERS)" "$LOGS/gemm_bench.log" >>"$FILE"
}
area_gemm-ncu() {
  # OPGRAPH_NCU_KEYS="MxNxK/chain/label ...": those variants of ours alone (gemm_bench --study);
  # OPGRAPH_NCU_SHAPE=MxNxK/chain: that shape's pick and cuDNN's plans (gemm_bench --quick), so
  # OPGRAPH_NCU_KERNEL=nvjet (say) reads the library's kernel beside ours. First matching launch each.
  section "gemm-ncu: Nsight Compute (--set full), kernels matching ${OPGRAPH_NCU_KERNEL:-gemm_v2}"
  local ncu i=0 items key
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  if [ -n "${OPGRAPH_NCU_SHAPE:-}" ]; then items=("shape=$OPGRAPH_NCU_SHAPE")
  else read -r -a items <<<"${OPGRAPH_NCU_KEYS:-4096x4096x4096/none/gemm_v2_128x256s4}"; fi
  for key in "${items[@]}"; do
    i=$((i + 1))
    local env=(OPGRAPH_NVRTC_LINEINFO=1) args=(--study)
    if [[ "$key" == shape=* ]]; then env+=(OPGRAPH_GEMM_SHAPES="${key#shape=}"); args=(--quick)
    else env+=(OPGRAPH_GEMM_STUDY_ONLY="$key"); fi
    run "ncu_$i" 300 env "${env[@]}" "$ncu" --clock-control none -k "regex:${OPGRAPH_NCU_KERNEL:-gemm_v2}" -c 1 \
      --set full --import-source yes -o "$LOGS/prof_$i" -f "$BUILD/bench/gemm_bench" "${args[@]}"
    "$ncu" -i "$LOGS/prof_$i.ncu-rep" --page details >"$LOGS/ncu_$i.txt" 2>&1
    say "$key:"
    grep -E "^  [a-z_]|Duration|Elapsed Cycles|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Warp Cycles Per Issued|Spilling" \
      "$LOGS/ncu_$i.txt" | head -14 | tee -a "$FILE"
  done
}
area_sdpa() {
  section "sdpa: ours (opgraph's cudnn plan) vs torch's cuDNN attention (bench/compare.py sdpa)"
  compare sdpa 300
}
area_host() {
  section "host: host cost (host_overhead, plan_host_cost, host_overhead_gpu, trust_gpu --host-only, compare.py host)"
  say "every figure is host time, measured alone (stream drained, no kernel time in it); ratios are of one run"
  # cmd NAME LIMIT CMD...: the exact command, then its output, into the file.
  cmd() {
    local name=$1 limit=$2
    shift 2
    say
    say "\$ $*"
    run "$name" "$limit" "$@"
    local rc=$?
    grep -v '^fake-cuda: ' "$LOGS/$name.log" >>"$FILE"  # the fake driver's trace stays in the log
    return "$rc"
  }
  local rounds=${OPGRAPH_HOST_ROUNDS:-200}
  cmd host_overhead 60 "$BUILD/bench/host_overhead"
  cmd plan_cpu 120 env OPGRAPH_SOURCE_DIR="$ROOT" "$BUILD/bench/plan_host_cost" "$rounds"
  local pyenv=(PYTHONPATH="$PYBUILD:$ROOT/bench${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1)
  if [ -z "$GPU" ]; then
    say "no GPU here: the device tables' code paths on the host reference engine (a check, not figures)"
    cmd plan_exec_host 300 env OPGRAPH_SOURCE_DIR="$ROOT" "$BUILD/bench/plan_host_cost" --exec --host --small --rounds 5
    # The device paths through the tests' fake driver (an sm_90 whose launches do nothing), where built.
    local fake=$BUILD/tests/libopgraph_fake_libcuda.so
    [ -e "$fake" ] && cmd plan_exec_fake 300 env OPGRAPH_SOURCE_DIR="$ROOT" OPGRAPH_LIBCUDA="$fake" \
      "$BUILD/bench/plan_host_cost" --exec --small --rounds 5
    cmd compare_host_dry 300 env "${pyenv[@]}" "$PY" bench/compare.py host --dry-run --reps 5 --burst 5 --plan-rounds 5
    return
  fi
  cmd host_overhead_gpu 60 "$BUILD/bench/host_overhead_gpu"
  cmd gdn_host_overhead_gpu 120 "$BUILD/bench/gdn_host_overhead_gpu"
  cmd trust_host 120 "$BUILD/bench/trust_gpu" --host-only
  # cudnn-frontend's Python package (the real `cudnn`), installed from the carried wheel folder.
  local fe_site=/tmp/opgraph-cudnn-fe
  if [ -n "${OPGRAPH_CUDNN_FE_WHEELS:-}" ]; then
    if bash "$OPGRAPH_CUDNN_FE_WHEELS/install.sh" "$fe_site" >"$LOGS/cudnn_fe_install.log" 2>&1; then
      pyenv[0]="${pyenv[0]}:$fe_site"
      say "cudnn-frontend installed from $OPGRAPH_CUDNN_FE_WHEELS into $fe_site"
    else
      say "cudnn-frontend install from $OPGRAPH_CUDNN_FE_WHEELS FAILED: $(tail -1 "$LOGS/cudnn_fe_install.log")"
    fi
  else
    say "OPGRAPH_CUDNN_FE_WHEELS not set: cudnn-frontend's columns are empty (unless \`cudnn\` imports already)"
  fi
  [ -n "$TORCH_CUDNN" ] && pyenv+=(OPGRAPH_LIBCUDNN="$TORCH_CUDNN")
  cmd compare_host 300 env "${pyenv[@]}" "$PY" bench/compare.py host --raw-launch-log "$LOGS/trust_host.log"
  # Last: it compiles every kernel its rows build (cold cache) and prints each row as it ends, so a
  # call that runs out of time still keeps the rows done.
  cmd plan_exec "${OPGRAPH_PLAN_EXEC_TIMEOUT:-400}" env OPGRAPH_SOURCE_DIR="$ROOT" "$BUILD/bench/plan_host_cost" \
    --exec --rounds "$rounds"
}
area_runtime() {
  section "runtime: GPU suites, cold vs warm process start (10 kernels)"
  run test_runtime 120 "$BUILD/tests/test_runtime"; gtest_line test_runtime
  run test_runtime_gpu 200 "$BUILD/tests/test_runtime_gpu"; gtest_line test_runtime_gpu
  local res=$LOGS/cold_warm.txt d warm aot rc
  : >"$res"
  timed() {
    local label=$1 dir=$2 t0 line
    shift 2
    t0=$(date +%s%N)
    line=$(env "$@" "$BUILD/bench/runtime_cold_warm" --cache "$dir" --label "$label" --kernels 10 | grep '^RESULT') ||
      { echo "FAILED $label" | tee -a "$FILE"; return 1; }
    echo "$line wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" >>"$res"
  }
  for i in 1 2 3; do
    d=$(mktemp -d /tmp/opgraph-cold-XXXX); timed cold "$d"
    if [ "$i" = 3 ]; then warm=$d; else rm -rf "$d"; fi
  done
  for i in 1 2 3 4 5; do timed warm "$warm"; done
  aot=$(mktemp -d /tmp/opgraph-aot-XXXX)
  rc=0
  OPGRAPH_COMPILED_CACHE=$aot "$BUILD/tools/opgraph" cache warm --all --arch sm_90a >"$LOGS/aot_warm.log" 2>&1 || rc=$?
  timed aot_require_hit "$aot" OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1 || rc=$?
  "$PY" - "$res" "$rc" <<'PY' | tee -a "$FILE"
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kv = dict(p.split("=", 1) for p in line.split()[1:])
    rows.setdefault(kv["label"], []).append(kv)
med = lambda label, key: statistics.median([float(r[key]) for r in rows.get(label, [])] or [float("nan")])
print("10 smoke kernels per process (medians; cold n=%d, warm n=%d)" % (len(rows.get("cold", [])), len(rows.get("warm", []))))
print("%-34s %10s %10s" % ("", "cold", "warm"))
for key, name in [("wall_ms", "process wall (ms)"), ("first_result_ms", "main() to 10 results checked (ms)"),
                  ("init_ms", "cuInit+context+env (ms)"), ("kernels_ms", "acquire 10 kernels (ms)"),
                  ("load_median_ms", "per-kernel acquire, median (ms)"), ("load_max_ms", "per-kernel acquire, max (ms)")]:
    print("%-34s %10.2f %10.3f" % (name, med("cold", key), med("warm", key)))
print("warm/cold: kernel acquisition %.1fx, process wall %.1fx" % (med("cold", "kernels_ms") / med("warm", "kernels_ms"),
                                                                 med("cold", "wall_ms") / med("warm", "wall_ms")))
bad = sum(int(r["bad"]) for rs in rows.values() for r in rs)
print("results checked in every process: %s; device-less warm then REQUIRE_HIT: %s" % (
    "all right" if bad == 0 else "%d WRONG" % bad, "hit" if rows.get("aot_require_hit") and sys.argv[2] == "0" else "MISS"))
PY
}
area_trust() {
  section "trust: plans vs the reference, misbindings refused (trust_gpu), test_exec, GPU suites"
  run trust_gpu 240 "$BUILD/bench/trust_gpu"; cat "$LOGS/trust_gpu.log" >>"$FILE"
  run test_exec 120 "$BUILD/tests/test_exec"; gtest_line test_exec
  run gemm_gpu 240 "$BUILD/tests/test_gemm_gpu" \
    --gtest_filter="GemmGpu.EveryLayoutAndType*:GemmGpu.FlashInferShaped*:GemmGpu.V2EveryLayoutTileSplitAndSwap:GemmGpu.V2StreamK*:GemmGpuThreads.*:GemmGpuHost.*"
  gtest_line gemm_gpu
  run cudnn_gpu 200 "$BUILD/tests/test_cudnn_gpu" --gtest_filter="-*Bench*:Cases/SdpaGpu.*"; gtest_line cudnn_gpu
}
area_cudnn() {
  section "cudnn: every lowered op family and SDPA case on cudnn plans vs the reference"
  run test_cudnn 90 "$BUILD/tests/test_cudnn"; gtest_line test_cudnn
  run cudnn_gpu_system 300 "$BUILD/tests/test_cudnn_gpu" --gtest_filter='-*Bench*'; gtest_line cudnn_gpu_system
  say "$(grep -c ' ran on ' "$LOGS/cudnn_gpu_system.log") cases ran on cudnn plans (system libcudnn); $(grep -c 'elements off' "$LOGS/cudnn_gpu_system.log") output mismatches"
  grep -h " ran on " "$LOGS/cudnn_gpu_system.log" >>"$FILE"
  if [ -n "$TORCH_CUDNN" ]; then
    OPGRAPH_LIBCUDNN=$TORCH_CUDNN LD_LIBRARY_PATH="$(dirname "$TORCH_CUDNN"):${LD_LIBRARY_PATH:-}" \
      run cudnn_gpu_torchlib 300 "$BUILD/tests/test_cudnn_gpu" --gtest_filter='-*Bench*'
    gtest_line cudnn_gpu_torchlib
    say "$(grep -c ' ran on ' "$LOGS/cudnn_gpu_torchlib.log") cases ran on cudnn plans (torch's libcudnn)"
  fi
}
area_gdn() {
  section "gdn: the linear_attention engine's gdn forward vs the float64 reference, then its timing"
  run test_linear_attention 300 "$BUILD/tests/test_linear_attention"; gtest_line test_linear_attention
  run la_gpu 400 "$BUILD/tests/test_la_gpu" --gtest_filter="${OPGRAPH_GDN_FILTER:-GdnGpu*:-GdnGpu*.Timing*}"
  gtest_line la_gpu
  grep -hE "^\[ gdn \]" "$LOGS/la_gpu.log" >>"$FILE"
  grep -hE "^\[  FAILED  \]|Failure|Expected|Which is|actual" "$LOGS/la_gpu.log" | head -30 >>"$FILE"
  [ "${OPGRAPH_GDN_TIMING:-1}" = 1 ] || return 0
  run la_timing 300 "$BUILD/tests/test_la_gpu" --gtest_filter='GdnGpu*.Timing*'; gtest_line la_timing
  grep -hE "^\[ gdn timing \]" "$LOGS/la_timing.log" | tee -a "$FILE"
  # Where the prefill time goes: each kernel's device time under Nsight Compute (one timed
  # execute a mode and cell: OPGRAPH_GDN_REPS=1 runs 3 warm-up executes and 1 timed).
  local ncu; ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  [ -n "$ncu" ] || { say "(no ncu: per-kernel times skipped)"; return 0; }
  OPGRAPH_GDN_REPS=1 timeout 200 "$ncu" --clock-control none --metrics gpu__time_duration.sum -k regex:gdn_prefill --csv \
    "$BUILD/tests/test_la_gpu" --gtest_filter='GdnGpu.TimingFiveCells' >"$LOGS/la_ncu.csv" 2>"$LOGS/la_ncu.err"
  $PY bench/gdn_kernel_times.py "$LOGS/la_ncu.csv" | tee -a "$FILE"
}
# bench/compare.py <sub> in one process against the peers of $OPGRAPH_PEER_SITE, straight into the result
# file (a call cut short still returns the cells done); $3: the peer folders to list.
peers_compare() {
  local sub=$1 log=$2 peers=$3 site=${OPGRAPH_PEER_SITE:-/tmp/site} t0 rc limit
  # Default limit: what is left of a 600 s device call that also ran install.sh (~30 s) and the build
  # (bash's SECONDS: since run.sh began); on expiry compare_gdn*.py tables the cells done.
  limit=${OPGRAPH_GDN_PEERS_TIMEOUT:-$(( SECONDS < 450 ? 540 - SECONDS : 90 ))}
  # shellcheck disable=SC2086
  if [ -d "$site" ]; then say "peers: $site holds: $(cd "$site" && ls -d $peers 2>/dev/null | xargs)"
  else say "peers: no $site (peer_wheels.py's install.sh not run): the peers' columns stay empty"; fi
  t0=$(date +%s)
  say "limit ${limit} s"
  # shellcheck disable=SC2086
  timeout "$limit" env PYTHONPATH="$PYBUILD:$ROOT/bench:$site${PYTHONPATH:+:$PYTHONPATH}" \
    PYTHONUNBUFFERED=1 "$PY" bench/compare.py "$sub" --rounds "${OPGRAPH_GDN_ROUNDS:-20}" ${OPGRAPH_GDN_PEERS_ARGS:-} \
    2>&1 | tee "$LOGS/$log.log" | tee -a "$FILE"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || fails=$((fails + 1))
  say "$log rc=$rc ($(( $(date +%s) - t0 )) s)"
}
area_gdn-peers() {
  section "gdn-peers: gdn forward, ours vs fla vs FlashInfer in one process (bench/compare.py gdn)"
  peers_compare gdn compare_gdn "fla flashinfer cutlass"
}
area_gdn-bwd-peers() {
  section "gdn-bwd-peers: gdn backward and forward + backward, ours vs fla in one process (bench/compare.py gdn-bwd)"
  peers_compare gdn-bwd compare_gdn_bwd "fla"
}
area_tests() {
  section "tests: every GPU suite (parallel processes on the one GPU: gemm in 6 shards, cudnn in 2)"
  # cudnn: OPGRAPH_CUDNN_INCLUDE_UNVERIFIED (default 1 here) gates nothing in the cuDNN engine today
  # (docs/environment.md); it stays set so a gate added later runs its cases here.
  local names=() n i
  for i in 0 1 2 3 4 5; do
    GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$i run gemm_gpu_$i 400 "$BUILD/tests/test_gemm_gpu" &
    names+=(gemm_gpu_$i)
  done
  for i in 0 1; do
    OPGRAPH_CUDNN_INCLUDE_UNVERIFIED=${OPGRAPH_CUDNN_INCLUDE_UNVERIFIED:-1} GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$i \
      run cudnn_gpu_$i 300 "$BUILD/tests/test_cudnn_gpu" --gtest_filter='-*Bench*' &
    names+=(cudnn_gpu_$i)
  done
  run runtime_gpu 200 "$BUILD/tests/test_runtime_gpu" & names+=(runtime_gpu)
  run la_gpu 400 "$BUILD/tests/test_la_gpu" --gtest_filter='GdnGpu*:-*Timing*' & names+=(la_gpu)
  run la_bwd_gpu 400 "$BUILD/tests/test_la_gpu" --gtest_filter='GdnBwdGpu*:-*Timing*' & names+=(la_bwd_gpu)
  wait
  # `run` counted its failures in the background shells: count them here from the result lines.
  for n in "${names[@]}"; do
    printf '%s: ' "$n" | tee -a "$FILE"
    gtest_line "$n"
    grep -q "^$n rc=0 " "$FILE" || fails=$((fails + 1))
  done
  grep -h -A12 "Failure" "$LOGS"/gemm_gpu_*.log "$LOGS"/cudnn_gpu_*.log "$LOGS"/runtime_gpu.log "$LOGS"/la_gpu.log \
    "$LOGS"/la_bwd_gpu.log 2>/dev/null | head -80 | tee -a "$FILE"
  # The examples on this device: what cuDNN answers, `opgraph plan` (where the list puts each
  # engine) and `opgraph run` (the pick executed, checked against the reference).
  local ex=examples/graphs/matmul_bias_gelu.json
  "$BUILD/bench/gemm_bench" --device-json "$LOGS/device.json" --explain-backend "$ex" >"$LOGS/example.log" 2>&1
  cat "$LOGS/example.log" >>"$FILE"
  run example_plan 60 "$BUILD/tools/opgraph" plan --device "$LOGS/device.json" "$ex"; head -8 "$LOGS/example_plan.log" >>"$FILE"
  run example_run 60 "$BUILD/tools/opgraph" run --device "$LOGS/device.json" --iters 20 "$ex"
  tail -6 "$LOGS/example_run.log" >>"$FILE"
  ex=examples/graphs/gdn_prefill_varlen.json
  run example_gdn_plan 60 "$BUILD/tools/opgraph" plan --device "$LOGS/device.json" "$ex"
  head -8 "$LOGS/example_gdn_plan.log" >>"$FILE"
  run example_gdn_run 60 "$BUILD/tools/opgraph" run --device "$LOGS/device.json" --iters 20 "$ex"
  tail -6 "$LOGS/example_gdn_run.log" >>"$FILE"
  mkdir -p "$LOGS/py"
  OUT=$LOGS/py OPGRAPH_JOBS=$JOBS OPGRAPH_PY_BUILD_DIR=$PYBUILD run gpu_python 400 bash scripts/gpu_python.sh
  cat "$LOGS/py/gpu_python.txt" >>"$FILE" 2>/dev/null
}
area_plan() {
  section "plan: planning time of a chain of pointwise nodes (CPU reference engine)"
  run plan_chain 120 "$BUILD/bench/plan_chain" 10000 100000 && cat "$LOGS/plan_chain.log" >>"$FILE"
}

for a in "${AREAS[@]}"; do
  "area_$a" || true
done
say
say "areas failed or partly failed: $fails"
if [ -n "$OUT" ]; then
  (cd "$LOGS/.." && tar czf "$OUT/logs.tgz" --exclude='*.ncu-rep' logs 2>/dev/null && rm -rf "$LOGS")
fi
echo "result: $FILE"
exit $((fails > 0))
