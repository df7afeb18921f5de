#!/usr/bin/env bash
# bench/gdn_split_profile.sh — where a chain split's time goes, and a change to it against a base (one device
# call, carry .device-deps and, for the base, its kernels folder): builds test_la_gpu and the CLI from the work
# tree (and from a copy of it with the base's kernels), compiles every linear_attention kernel of each (`opgraph
# cache warm`, 16 threads), then the first TimingFiveCells cell (2/8, 1 x 32768: the split rule's deepest split)
# under Nsight Compute — every launch of the split's kernels (the fused span summary, the fix-up walk, the fused
# span scan; the two-pass split's too) timed alone (gpu__time_duration; caches and clocks left as they are) —
# then the timing test's engine times without the profiler, the builds alternated (separate processes:
# A B A B), then numerics cases of the work tree's build in four shards. Logs to $OUT; the tables last.
#   bash bench/gdn_split_profile.sh [BASE_KERNELS_DIR]
# BASE_KERNELS_DIR: the base's src/engines/linear_attention/kernels files (e.g. from `git show REV:path`),
# carried; without it the work tree alone runs. Environment:
#   OPGRAPH_GDN_TIMING_CELLS  cells of GdnGpu.TimingFiveCells (default 1)
#   OPGRAPH_SPLIT_TIMING      the timing test (default GdnGpu.TimingFiveCells; e.g. GdnBwdGpu.TimingFusedSplit)
#   OPGRAPH_SPLIT_NCU         0: no profiler run
#   OPGRAPH_SPLIT_NUMERICS    a gtest filter of numerics cases (default none), e.g. 'GdnGpu*:-GdnGpu*.Timing*'
#   OPGRAPH_SPLIT_AFTER       a gtest filter run last on the work tree's build alone (e.g. a timing test)
#   OPGRAPH_SPLIT_DEFINES     trial macros to set, e.g. "GDN_SPAN_TAIL=0 GDN_WALK_SKIP=0": without
#                             BASE_KERNELS_DIR the base is the work tree's kernels as they are and the work tree's
#                             side has each named macro's `#define NAME <default>` line in kernels/ set to the value
#                             (on the device machine's copy only; a macro with no such line is an error)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
out=${OUT:-/tmp/gdn_split_profile}
mkdir -p "$out"
base=${1:-}
cells=${OPGRAPH_GDN_TIMING_CELLS:-1}
timing=${OPGRAPH_SPLIT_TIMING:-GdnGpu.TimingFiveCells}
export OPGRAPH_GDN_TIMING_CELLS=$cells
source bench/la_suite_lib.sh
B=${OPGRAPH_BUILD_DIR:-/tmp/bb}
kdir=src/engines/linear_attention/kernels
if [ -n "${OPGRAPH_SPLIT_DEFINES:-}" ]; then
  if [ -z "$base" ]; then
    base=/tmp/split-base-kernels
    rm -rf "$base" && mkdir -p "$base" && cp "$kdir"/* "$base"/
  fi
  for def in $OPGRAPH_SPLIT_DEFINES; do
    name=${def%%=*} val=${def#*=}
    files=$(grep -l -E "^#define $name [^ ]+$" "$kdir"/*) || { echo "no '#define $name' default in $kdir"; exit 1; }
    sed -i -E "s/^#define $name [^ ]+$/#define $name $val/" $files
    echo "work tree side: $name=$val ($(echo $files | xargs -n1 basename | tr '\n' ' '))"
  done
fi
la_build test_la_gpu opgraph_tool || exit 1
sides=(new)
bins=("$B/tests/test_la_gpu")
if [ -n "$base" ]; then
  rm -rf /tmp/base-tree && mkdir -p /tmp/base-tree && cp -r "$ROOT/." /tmp/base-tree/
  cp "$base"/* /tmp/base-tree/src/engines/linear_attention/kernels/
  (ROOT=/tmp/base-tree B=/tmp/bb-base out=$out/base && mkdir -p "$out" && la_build test_la_gpu opgraph_tool) || exit 1
  sides=(base new)
  bins=(/tmp/bb-base/tests/test_la_gpu "$B/tests/test_la_gpu")
fi
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
# Kernels compile (NVRTC, each side's disk cache) outside the profiler first, both sides at once.
t0=$(date +%s)
for i in "${!sides[@]}"; do
  s=${sides[$i]}
  cli=$(dirname "$(dirname "${bins[$i]}")")/tools/opgraph
  XDG_CACHE_HOME=/tmp/xdg-split-$s timeout -s KILL 300 "$cli" cache warm --all --family linear_attention \
    --arch sm_90a --jobs 16 >"$out/warm-$s.log" 2>&1 &
done
wait
echo "warm done in $(( $(date +%s) - t0 )) s: $(tail -1 "$out/warm-new.log")"
for i in "${!sides[@]}"; do
  s=${sides[$i]}
  export XDG_CACHE_HOME=/tmp/xdg-split-$s
  [ -n "$ncu" ] && [ "${OPGRAPH_SPLIT_NCU:-1}" = 1 ] || continue
  OPGRAPH_GDN_REPS=5 timeout -s KILL 200 "$ncu" --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum,launch__grid_size -k 'regex:gdn_span_' --csv "${bins[$i]}" \
    --gtest_filter='GdnGpu.TimingFiveCells' >"$out/ncu-$s.csv" 2>"$out/ncu-$s.err"
  echo "$s: ncu rc $?"
done
for r in 1 2; do
  for i in "${!sides[@]}"; do
    s=${sides[$i]}
    XDG_CACHE_HOME=/tmp/xdg-split-$s timeout -s KILL 200 "${bins[$i]}" --gtest_filter="$timing" \
      >"$out/timing-$s-$r.log" 2>&1
    echo "$s round $r: timing rc $?"
  done
done
export XDG_CACHE_HOME=/tmp/xdg-split-new
if [ -n "${OPGRAPH_SPLIT_NUMERICS:-}" ]; then
  t1=$(date +%s)
  la_shards 'NoSuchTest.None' "$OPGRAPH_SPLIT_NUMERICS" la_shard
  echo "numerics done in $(( $(date +%s) - t1 )) s"
fi
if [ -n "${OPGRAPH_SPLIT_AFTER:-}" ]; then
  timeout -s KILL 240 "$B/tests/test_la_gpu" --gtest_filter="$OPGRAPH_SPLIT_AFTER" >"$out/after.log" 2>&1
  echo "after ($OPGRAPH_SPLIT_AFTER) rc $?"
fi
for s in "${sides[@]}"; do
  echo "==== $s: split kernels (ncu gpu__time_duration, median of each group's launches)"
  [ -f "$out/ncu-$s.csv" ] || continue
  python3 - "$out/ncu-$s.csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    print("no ncu rows"); sys.exit(0)
h = rows[0]
ki, mi, vi, ii = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
launches = {}
for r in rows[1:]:
    launches.setdefault(int(r[ii]), {"name": r[ki]})[r[mi]] = float(r[vi].replace(",", ""))
# A launch's group: its kernel, its grid and the grid of the summary before it (which names the mode:
# the span count; the fix-up's own grid does not depend on it), in the order first seen.
groups, last_sum = {}, 0
for i in sorted(launches):
    l = launches[i]
    name, grid = l["name"].split("(")[0], int(l.get("launch__grid_size", 0))
    if "summary" in name:
        last_sum = grid
    groups.setdefault((name, grid, last_sum), []).append(l["gpu__time_duration.sum"] / 1e3)
print("kernel                         grid CTAs  summary CTAs  launches  median us")
for (name, grid, s), ts in groups.items():
    print(f"{name:30s} {grid:9d} {s:13d} {len(ts):9d} {statistics.median(ts):10.1f}")
PY
done
echo "==== engine times ($timing; GdnGpu.TimingFiveCells: first $cells cell(s); separate processes, alternated)"
for r in 1 2; do
  for s in "${sides[@]}"; do
    grep -E 'gdn timing \]  *[0-9]|gdn_bwd[a-z ]*\]  *[0-9]' "$out/timing-$s-$r.log" | sed "s/^/$s $r: /"
  done
done
[ -n "${OPGRAPH_SPLIT_NUMERICS:-}" ] && la_shard_summary la_shard '^\[  FAILED|Failure' 5
[ -f "$out/after.log" ] && { echo "==== $OPGRAPH_SPLIT_AFTER"; grep -E '^\[ gdn|Failure|^\[  (PASSED|FAILED)' \
  "$out/after.log" | tail -40; }
true
