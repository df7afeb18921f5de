#!/usr/bin/env bash
# bench/gemm_probe_h200.sh — one device call: which kernels the cudnn family's
# plans launch (Nsight Compute: name, grid, cluster, registers, shared memory,
# duration, tensor-pipe and L2 throughput) beside gemm_v2's pick, on a few
# shapes, then every variant of ours against cuDNN on those shapes (gemm_bench,
# OPGRAPH_GEMM_SHAPES). From the binaries bench/gpu_check_bins.sh built.
#   bash bench/gemm_probe_h200.sh .dev/bin [MxNxK/chain ...]
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.dev/bin}
shift || true
SHAPES=("$@")
[ ${#SHAPES[@]} -gt 0 ] || SHAPES=(4096x4096x4096/none 4096x4096x4096/bias+gelu 4096x14336x4096/none 1024x14336x4096/none)
source bench/gemm_ncu_env.sh
echo "$COMMIT_LINE; $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
i=0
for s in "${SHAPES[@]}"; do
  i=$((i + 1))
  # The shape's first launches (PROBE_LAUNCHES, default 24; PROBE_KERNELS: an
  # ncu -k filter, e.g. regex:^(?!gemm_v) for cuDNN's only): ours are gemm_v2,
  # the rest is cuDNN's. One line per distinct name.
  OPGRAPH_GEMM_SHAPES=$s timeout 240 "$NCU" --clock-control none -c ${PROBE_LAUNCHES:-24} ${PROBE_KERNELS:+-k "$PROBE_KERNELS"} --section SpeedOfLight --section LaunchStats \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,launch__cluster_dim_x,launch__cluster_dim_y \
    -o "$OUT/probe_$i" -f "$BIN/gemm_bench" >"$OUT/probe_run_$i.txt" 2>&1
  echo "== $s (ncu rc=$?)"
  "$NCU" -i "$OUT/probe_$i.ncu-rep" --page raw --csv \
    --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed \
    >"$OUT/probe_$i.csv" 2>&1
  python3 - "$OUT/probe_$i.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if len(rows) < 3:
    print(open(sys.argv[1]).read()[:2000]); sys.exit()
h = rows[0]
def col(name):
    return h.index(name) if name in h else None
seen = set()
for r in rows[2:]:
    name = r[col("Kernel Name")]
    if name in seen: continue
    seen.add(name)
    g = lambda m: r[col(m)] if col(m) is not None else "?"
    print(f"  {name[:110]}")
    print(f"     grid {g('launch__grid_size')} block {g('launch__block_size')} cluster {g('launch__cluster_dim_x')}x{g('launch__cluster_dim_y')}"
          f" regs {g('launch__registers_per_thread')} dsmem {g('launch__shared_mem_per_block_dynamic')}"
          f" time {g('gpu__time_duration.sum')} tensor% {g('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active')}"
          f" L2% {g('lts__throughput.avg.pct_of_peak_sustained_elapsed')}")
PY
  rm -f "$OUT/probe_$i.ncu-rep"
done
[ -n "${PROBE_NO_VARIANTS:-}" ] && exit 0
echo "== variants, same run (TFLOP/s)"
OPGRAPH_GEMM_SHAPES=$(IFS=,; echo "${SHAPES[*]}") timeout 240 "$BIN/gemm_bench" >"$OUT/variants.txt" 2>&1
echo "gemm_bench rc=$?"
grep -E "^(VARIANT|RESULT|CUDNN)" "$OUT/variants.txt" | sed 's/^VARIANT //'
