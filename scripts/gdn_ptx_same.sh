#!/usr/bin/env bash
# scripts/gdn_ptx_same.sh [REV] — whether every gdn kernel entry compiles to the same PTX
# (labels and local-depot numbering aside) in the working tree as at git revision REV
# (default HEAD), for both head dims and both q/k/v types. A refactor of the kernels
# that keeps every entry's PTX is safe to land without a device run; one that does not
# needs the GPU checks (bench/run.sh gdn). Needs nvcc (the CUDA toolkit). Exit 1 on a
# difference, naming the entries.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
k=src/engines/linear_attention/kernels
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base/linear_attention/kernels"
for f in $(git ls-tree --name-only "$rev" "$k/"); do git show "$rev:$f" >"$tmp/base/linear_attention/kernels/$(basename "$f")"; done
# The gemm family's Hopper headers (the fused prefill includes its wgmma wrappers).
mkdir -p "$tmp/base/gemm/kernels"
for f in $(git ls-tree --name-only "$rev" src/engines/gemm/kernels/); do
  case $f in *.cuh) git show "$rev:$f" >"$tmp/base/gemm/kernels/$(basename "$f")" ;; esac
done
inc=(-Iinclude -Isrc/runtime/kernels/include)
status=0
for d in 128 64; do for io in 0 1; do
  : >"$tmp/a.ptx"; : >"$tmp/b.ptx"
  for f in "$tmp"/base/linear_attention/kernels/*.cu; do
    nvcc -std=c++17 -arch=sm_90a -ptx -o "$tmp/x.ptx" -DGDN_D=$d -DGDN_IO=$io -I"$tmp/base" "${inc[@]}" "$f"
    cat "$tmp/x.ptx" >>"$tmp/a.ptx"
  done
  for f in "$k"/*.cu; do
    nvcc -std=c++17 -arch=sm_90a -ptx -o "$tmp/y.ptx" -DGDN_D=$d -DGDN_IO=$io -Isrc/engines "${inc[@]}" "$f"
    cat "$tmp/y.ptx" >>"$tmp/b.ptx"
  done
  python3 - "$tmp/a.ptx" "$tmp/b.ptx" "d=$d io=$io" <<'PY' || status=1
import re, sys
def entries(path):
    out = {}
    for m in re.finditer(r'\.visible \.entry (\w+)\((.*?)\n\}\n', open(path).read(), re.S):
        body = re.sub(r'\s*//.*', '', m.group(0))
        body = re.sub(r'\.loc\s.*', '', body)
        body = re.sub(r'\$L__BB\d+_', '$L__BB_', body)
        out[m.group(1)] = re.sub(r'__local_depot\d+', '__local_depot', body)
    return out
a, b = entries(sys.argv[1]), entries(sys.argv[2])
diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
print(f"{sys.argv[3]}: {len(b)} entries, " + ("the same PTX" if not diff else "DIFFERENT: " + ", ".join(diff)))
sys.exit(1 if diff else 0)
PY
done; done
exit $status
