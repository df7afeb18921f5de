#!/usr/bin/env bash
# bench/plan_host_cost_ab.sh — two builds of bench/plan_host_cost (say, before and
# after a change) run in turn on one machine: R runs of each, alternating, N
# interleaved rounds per run; prints, per graph and column, the median over the
# runs of each build's medians, "before -> after", in microseconds.
# Build each from its own checkout with -DOPGRAPH_BUILD_BENCH=ON (the same
# bench/plan_host_cost.cpp in both, so the columns are the same program).
# Usage: bench/plan_host_cost_ab.sh BEFORE_BIN AFTER_BIN [R=5] [N=300] [GRAPH.json ...]
set -euo pipefail
before=$1 after=$2
runs=${3:-5} n=${4:-300}
shift $(( $# < 4 ? $# : 4 ))
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 0; r < runs; ++r)); do
  "$before" "$n" "$@" > "$out/before.$r"
  "$after" "$n" "$@" > "$out/after.$r"
done
python3 - "$out" "$runs" "$n" <<'PY'
import statistics, sys, pathlib
out, runs, n = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def table(which):
    rows = {}
    for r in range(runs):
        lines = (out / f"{which}.{r}").read_text().splitlines()
        header = lines[1].split()
        for line in lines[2:]:
            f = line.split()
            for col, v in zip(header[1:], f[1:]):
                rows.setdefault((f[0], col), []).append(float(v))
    return header[1:], rows
cols, b = table("before")
_, a = table("after")
print(f"median of {runs} alternating runs of each build, each the median of {n} interleaved rounds; us, before -> after")
print("| graph | " + " | ".join(cols) + " |")
print("|---" * (len(cols) + 1) + "|")
for g in dict.fromkeys(k[0] for k in b):
    cells = [f"{statistics.median(b[(g, c)]):.1f} → {statistics.median(a[(g, c)]):.1f}" for c in cols]
    print(f"| {g.removesuffix('.json')} | " + " | ".join(cells) + " |")
PY
