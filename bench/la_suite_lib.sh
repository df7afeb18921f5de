# bench/la_suite_lib.sh — sourced by the linear-attention device suites (bench/gdn_ws_suite.sh: the forward,
# bench/gdn_bwd_suite.sh: the backward): the build of test_la_gpu (and any other targets) with the carried
# .device-deps, numerics cases in four gtest shards at once (the float64 reference is CPU-bound), and the
# shards' summary. The caller sets ROOT (the repository root), out (the log folder) and B (the build folder).

# la_build TARGET...: configure (GPU tests on; the bench targets too when a target is one) and build.
la_build() {
  CMAKE_ARGS=()
  source "$ROOT/bench/device_env.sh"
  local extra=()
  [[ " $* " == *" gdn_host_overhead_gpu "* ]] && extra=(-DOPGRAPH_BUILD_BENCH=ON)
  local t0
  t0=$(date +%s)
  cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGRAPH_GPU_TESTS=ON "${extra[@]}" \
    "${CMAKE_ARGS[@]}" >"$out/build.log" 2>&1 && ninja -C "$B" -j16 "$@" >>"$out/build.log" 2>&1
  local rc=$?
  echo "build rc $rc in $(( $(date +%s) - t0 )) s"
  [ $rc = 0 ] || tail -30 "$out/build.log"
  return $rc
}

# la_shards WARM_FILTER FILTER PREFIX: one warm-up case compiles the kernels before the shards race for
# the kernel cache; then every case of FILTER in four shards at once, logs PREFIX0..3.log in $out.
la_shards() {
  "$B/tests/test_la_gpu" --gtest_filter="$1" >"$out/warm.log" 2>&1
  local i
  for i in 0 1 2 3; do
    GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout -s KILL "${OPGRAPH_SUITE_LIMIT:-280}" stdbuf -oL \
      "$B/tests/test_la_gpu" --gtest_filter="$2" >"$out/$3$i.log" 2>&1 &
  done
  wait
}

# la_shard_summary PREFIX PATTERN LINES: per shard its gtest verdict, then its lines matching PATTERN.
la_shard_summary() {
  local i
  echo "==== numerics (shards)"
  for i in 0 1 2 3; do
    echo "shard $i: $(grep -E '^\[  (PASSED|FAILED)|tests? ran' "$out/$1$i.log" | paste -sd ' ') $(grep -c '^\[       OK' "$out/$1$i.log") ok"
    grep -E "$2" "$out/$1$i.log" | head -"$3"
  done
}
