#!/usr/bin/env bash
# scripts/gemm_ptx_same.sh [REV] — whether every gemm specialisation the engine
# declares (gemm_declared.cpp's declared_specialisations: the CI compile set,
# gemm_v1 and gemm_v2) compiles to the same PTX (labels and local-depot
# numbering aside) in the working tree as at git revision REV (default HEAD).
# Each specialisation is compiled as NVRTC gets it: its prelude of #defines
# (runtime::specialised_source, taken from a small program linked against the
# built libraries in $BUILD, default build/: build opgraph_gemm first), then the
# kernel source, with nvcc -ptx for sm_90a, once from REV's kernel sources and
# headers (src/engines/*/kernels, src/runtime/kernels/include) and once from the
# working tree's. Every entry, every non-inlined .func and the module-level
# declarations (as a set) are compared, so a split of a kernel source into
# headers is checked as well. A refactor of the kernels that keeps every PTX is
# safe to land without a device run. Needs nvcc and a C++20 compiler. Exit 1 on
# a difference, naming the specialisations.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
build=${BUILD:-build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The declared specialisations' preludes, one block per kernel ("@@ <kernel> <source>").
libs=()
for l in gemm engines plan exec runtime "" ir; do libs+=("$build/src/libopgraph${l:+_$l}.a"); done
for l in "${libs[@]}"; do
  [[ -f $l ]] || { echo "gemm_ptx_same: $l missing (build opgraph_gemm in $build first)" >&2; exit 2; }
done
cat >"$tmp/dump.cpp" <<'CPP'
#include <cstdio>
#include <string>
#include "engines/gemm/gemm_declared.h"
#include "runtime/nvrtc_compiler.h"
int main() {
  for (const auto& r : opgraph::gemm::declared_specialisations()) {
    auto s = opgraph::runtime::specialised_source(r);
    if (s.is_bad()) { std::fprintf(stderr, "%s: %s\n", r.kernel.c_str(), s.status().message().c_str()); return 1; }
    const std::string& t = *s;
    std::printf("@@ %s %s\n%s", r.kernel.c_str(), r.source.c_str(), t.substr(0, t.find("#line")).c_str());
  }
}
CPP
c++ -std=c++20 -Iinclude -Isrc -isystem "${CUDA_HOME:-/usr/local/cuda}/include" "$tmp/dump.cpp" -o "$tmp/dump" \
  -Wl,--start-group "${libs[@]}" -Wl,--end-group -ldl
"$tmp/dump" >"$tmp/preludes"

# REV's kernel sources and shared kernel headers, laid out as the embedded names.
mkdir -p "$tmp/base"
git archive "$rev" src/engines src/runtime/kernels/include | tar -x -C "$tmp/base"
base_inc=(-I"$tmp/base/src/engines" -I"$tmp/base/src/runtime/kernels/include")
tree_inc=(-I"$PWD/src/engines" -I"$PWD/src/runtime/kernels/include")

python3 - "$tmp/preludes" "$tmp" <<'PY'
import sys, os
text = open(sys.argv[1]).read()
blocks = [b for b in text.split('@@ ')[1:]]
with open(os.path.join(sys.argv[2], 'list'), 'w') as lst:
    for i, b in enumerate(blocks):
        head, _, body = b.partition('\n')
        kernel, source = head.split()
        name = f"{i:03d}_{kernel}"
        with open(os.path.join(sys.argv[2], name + '.cu'), 'w') as f:
            f.write(body + f'#include "{source}"\n')
        lst.write(name + '\n')
PY

n=$(wc -l <"$tmp/list")
compile() {  # name side includes...
  local name=$1 side=$2; shift 2
  nvcc -std=c++17 -arch=sm_90a -ptx -o "$tmp/$name.$side.ptx" "$@" "$tmp/$name.cu"
}
while read -r name; do
  compile "$name" a "${base_inc[@]}" &
  compile "$name" b "${tree_inc[@]}"
  wait $!
done <"$tmp/list"

python3 - "$tmp" "$rev" <<'PY'
import re, sys, os
tmp, rev = sys.argv[1], sys.argv[2]
def entries(text):
    out = {}
    for m in re.finditer(r'\.visible \.entry (\w+)\((.*?)\n\}\n', text, re.S):
        body = re.sub(r'\s*//.*', '', m.group(0))
        body = re.sub(r'\.loc\s.*', '', body)
        body = re.sub(r'\$L__BB\d+_', '$L__BB_', body)
        out[m.group(1)] = re.sub(r'__local_depot\d+', '__local_depot', body)
    return out
def module(text):
    funcs = {}
    for m in re.finditer(r'^(?:\.visible |\.weak )?\.func\s.*?\n\}\n', text, re.S | re.M):
        body = re.sub(r'\s*//.*', '', m.group(0))
        body = re.sub(r'\.loc\s.*', '', body)
        name = re.search(r'(\w+)\(', body)
        funcs[name.group(1) if name else body] = re.sub(r'\$L__BB\d+_', '$L__BB_', body)
    rest = re.sub(r'\.visible \.entry .*?\n\}\n|^(?:\.visible |\.weak )?\.func\s.*?\n\}\n', '', text, flags=re.S | re.M)
    return funcs, set(l.strip() for l in rest.split('\n') if re.match(r'\.(global|const|shared|extern)\b', l))
names = open(os.path.join(tmp, 'list')).read().split()
bad, counts = [], {}
for name in names:
    a = open(os.path.join(tmp, name + '.a.ptx')).read()
    b = open(os.path.join(tmp, name + '.b.ptx')).read()
    ea, eb = entries(a), entries(b)
    (fa, da), (fb, db) = module(a), module(b)
    diff = sorted(k for k in set(ea) | set(eb) if ea.get(k) != eb.get(k))
    diff += sorted(f".func {k}" for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
    diff += sorted(f"declaration '{d}'" for d in da ^ db)
    if not eb: diff.append('no entry in the PTX')
    kernel = name[4:]
    v = kernel.split('_')[0]
    counts[v] = counts.get(v, 0) + 1
    if diff: bad.append(f"{kernel}: " + ", ".join(diff))
for line in bad: print("DIFFERENT " + line)
summary = ", ".join(f"{c} {v}" for v, c in sorted(counts.items()))
print(f"gemm: {len(names)} declared specialisations ({summary}), working tree against {rev}" +
      (": the same PTX for every entry, .func and module declaration" if not bad else f": {len(bad)} DIFFERENT"))
sys.exit(1 if bad else 0)
PY
