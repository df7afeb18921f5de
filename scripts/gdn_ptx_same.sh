#!/usr/bin/env bash
# scripts/gdn_ptx_same.sh [REV] — whether every gdn kernel entry compiles to the same PTX
# (labels and local-depot numbering aside) in the working tree as at git revision REV
# (default HEAD), for both head dims and both q/k/v types: every specialisation the
# engine declares (the forward's, the fused prefill's at d = 128, gdn_bwd's six). The
# module-level declarations (shared / global / const variables) and any non-inlined
# .func body are compared too (as a set: a kernel source split in two repeats the
# extern shared window), so a split of a source into several is checked as well. A refactor of the kernels
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
def module(path):
    text = open(path).read()
    funcs = {}
    for m in re.finditer(r'^(?:\.visible |\.weak )?\.func\s.*?\n\}\n', text, re.S | re.M):
        body = re.sub(r'\s*//.*', '', m.group(0))
        body = re.sub(r'\.loc\s.*', '', body)
        name = re.search(r'(\w+)\(', body)
        funcs[name.group(1) if name else body] = re.sub(r'\$L__BB\d+_', '$L__BB_', body)
    decls = set(l.strip() for l in re.sub(r'\.visible \.entry .*?\n\}\n|^(?:\.visible |\.weak )?\.func\s.*?\n\}\n', '', text, flags=re.S | re.M).split('\n')
                if re.match(r'\.(global|const|shared|extern)\b', l))
    return funcs, decls
a, b = entries(sys.argv[1]), entries(sys.argv[2])
diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
(fa, da), (fb, db) = module(sys.argv[1]), module(sys.argv[2])
diff += sorted(f".func {k}" for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
diff += sorted(f"declaration '{d}'" for d in da ^ db)
print(f"{sys.argv[3]}: {len(b)} entries, {len(fb)} .func, {len(db)} module declarations, " + ("the same PTX" if not diff else "DIFFERENT: " + ", ".join(diff)))
sys.exit(1 if diff else 0)
PY
done; done
exit $status
