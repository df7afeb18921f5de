# bench/gemm_ncu_env.sh — sourced by the gemm Nsight Compute scripts
# (gemm_ncu_h200.sh, gemm_ncu_compare_h200.sh, gemm_probe_h200.sh) after they
# set BIN: the output folder ($OUT, default ./out), a fresh compiled-kernel
# cache unless one is set, kernels with line tables, the ncu binary ($NCU)
# and the binaries' commit ($COMMIT_LINE).
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export OPGRAPH_COMPILED_CACHE=${OPGRAPH_COMPILED_CACHE:-$(mktemp -d /tmp/opgraph-ncu-XXXX)}
# Line tables in every kernel, so ncu's source page and SourceCounters name
# the kernel's lines (a separate cache key: these cubins never serve a plain run).
export OPGRAPH_NVRTC_LINEINFO=1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
COMMIT_LINE="commit $(tr '\n' ' ' <"$BIN/COMMIT")"
