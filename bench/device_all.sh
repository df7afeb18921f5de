#!/usr/bin/env bash
# bench/device_all.sh — every GPU script of the tree in ONE device call (device
# time is scarce; each machine start costs minutes). Run `bash bench/device_deps.sh`
# here first, then on the device (carry .device-deps):
#   bash bench/device_all.sh [script ...]      (default: every script below that exists)
# Each script writes under $OUT/<name>/; this one prints every table last and packs
# the logs into $OUT/logs.tgz (the device tool returns at most 8 files).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
scripts=("$@")
[ ${#scripts[@]} -eq 0 ] && scripts=(bench/gemm_h200.sh bench/cudnn_h200.sh bench/host_overhead_h200.sh scripts/gpu_python.sh)
summary=$OUT/summary.txt
: >"$summary"
for s in "${scripts[@]}"; do
  [ -f "$s" ] || { echo "skip $s (not in this tree)" | tee -a "$summary"; continue; }
  name=$(basename "$s" .sh)
  mkdir -p "$OUT/$name"
  start=$(date +%s)
  OUT=$OUT/$name OPGRAPH_JOBS=16 timeout 420 bash "$s" >"$OUT/$name/console.log" 2>&1
  rc=$?
  {
    echo "===== $s rc=$rc ($(( $(date +%s) - start )) s)"
    for t in "$OUT/$name"/*.txt; do [ -f "$t" ] && { echo "--- $(basename "$t")"; tail -n 40 "$t"; }; done
    [ "$rc" = 0 ] || tail -n 25 "$OUT/$name/console.log"
  } >>"$summary"
done
( cd "$OUT" && tar czf logs.tgz --exclude=logs.tgz --exclude=summary.txt */ 2>/dev/null && find . -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} + )
cat "$summary"
