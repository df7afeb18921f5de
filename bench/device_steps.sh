# bench/device_steps.sh — sourced by bench/gdn_h200.sh (until it is an area of bench/run.sh)
# to run a list of steps. Needs OUT and SUM set.
#   say TEXT...            echo TEXT and append it to $SUM
#   step NAME LIMIT_S CMD  run CMD under `timeout LIMIT_S`, its output in $OUT/NAME.log,
#                          one summary line (rc, seconds, gtest's PASSED/FAILED lines);
#                          a non-zero rc counts in $fails
fails=0
say() { echo "$*" | tee -a "$SUM"; }
step() {
  local name=$1 limit=$2
  shift 2
  local t0 rc
  t0=$(date +%s)
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  [ "$rc" = 0 ] || fails=$((fails + 1))
  say "$name rc=$rc ($(( $(date +%s) - t0 )) s) $(grep -hE '^\[  (PASSED|FAILED)  \]' "$OUT/$name.log" | head -2 | tr '\n' ' ')"
}
