#!/usr/bin/env bash
# bench/gemm_ab_h200.sh BIN_A BIN_B [ROUNDS] — on the H200: a same-call A/B of two
# builds of gemm_bench (bench/gpu_check_bins.sh, e.g. .dev/bin0 and .dev/bin),
# `gemm_bench --study` run A, B, A, B, ... (ROUNDS pairs, default 2) so drift
# between rounds shows beside the difference. OPGRAPH_GEMM_SHAPES and
# OPGRAPH_GEMM_STUDY_CONFIGS pass through (see bench/gemm_bench.cpp). Logs go to
# $OUT/ab_<A|B><round>.txt; prints one line per (shape, config): A / B per round.
set -uo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2 ROUNDS=${3:-2}
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
echo "A: $A ($(tr '\n' ' ' <"$A/COMMIT")) B: $B ($(tr '\n' ' ' <"$B/COMMIT"))"
files=()
for r in $(seq 1 "$ROUNDS"); do
  for side in A B; do
    bin=$A
    [ "$side" = B ] && bin=$B
    # Each build compiles its own kernels: a cache per side.
    OPGRAPH_COMPILED_CACHE=/tmp/opgraph-ab-$side timeout 200 "$bin/gemm_bench" --study >"$OUT/ab_$side$r.txt" 2>&1
    echo "round $r $side rc=$?"
    files+=("$OUT/ab_$side$r.txt")
  done
done
echo "== TFLOP/s: $(for r in $(seq 1 "$ROUNDS"); do printf 'A%s B%s ' "$r" "$r"; done)"
python3 - "${files[@]}" <<'PY'
import re, sys
runs = []
for f in sys.argv[1:]:
    d = {}
    for line in open(f):
        m = re.match(r"VARIANT shape=(\S+) chain=(\S+) config=(\S+) tflops=(\S+)", line)
        if m:
            d[(m[1], m[2], m[3])] = m[4]
    runs.append(d)
keys = list(dict.fromkeys(k for d in runs for k in d))
for k in keys:
    print("%-18s %-10s %-34s %s" % (k[0], k[1], k[2], " / ".join(d.get(k, "-") for d in runs)))
PY
