#!/usr/bin/env bash
# scripts/gdn_sass_same.sh [REV] — whether every gdn kernel entry compiles to the same machine code in the working
# tree as at git revision REV (default HEAD), through NVRTC with the engine's options (bench/nvrtc_cubin.cpp): each
# entry's .text section of the cubin compared byte for byte, for every build the engine requests — each kernel
# source at d = 128 and 64 and both q/k/v types, gdn_fused.cu's warp-specialised (GDN_FUSED_WS=1) and checkpoint
# (GDN_CKPT=1) builds, gdn_two_pass.cu's checkpoint ones and the backward's one-pass pair (PIPELINE_ARCH 5). Unlike
# scripts/gdn_ptx_same.sh (PTX, nvcc), the launch argument's declared size does not count, only code: a field
# appended to GdnParams keeps every entry equal whose one argument it is (an argument after it moves:
# gdn_state_copy's `words` is read from an offset 8 bytes a field later, its two constant loads differ). An entry
# new in the working tree is listed, not a difference. A change whose entries all compare equal is safe to land
# without a device run. Needs nvcc and NVRTC (the CUDA toolkit). Exit 1 on a difference, naming the build and the
# entry. OPGRAPH_SASS_ONLY=<source>: only that kernel source's builds (e.g. gdn_decode.cu).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base"
git archive "$rev" src/engines src/runtime/kernels/include | tar -x -C "$tmp/base"
nvcc -std=c++17 bench/nvrtc_cubin.cpp -o "$tmp/nvrtc_cubin" -lnvrtc
k=src/engines/linear_attention/kernels
builds=()
for f in "$k"/*.cu; do
  for d in 128 64; do for io in 0 1; do builds+=("$(basename "$f")|-DGDN_D=$d -DGDN_IO=$io"); done; done
done
for io in 0 1; do
  builds+=("gdn_fused.cu|-DGDN_D=128 -DGDN_IO=$io -DGDN_FUSED_WS=1")
  builds+=("gdn_fused.cu|-DGDN_D=128 -DGDN_IO=$io -DGDN_CKPT=1")
  builds+=("gdn_fused.cu|-DGDN_D=128 -DGDN_IO=$io -DGDN_FUSED_WS=1 -DGDN_CKPT=1")
  for d in 128 64; do builds+=("gdn_two_pass.cu|-DGDN_D=$d -DGDN_IO=$io -DGDN_CKPT=1"); done
done
# the backward's PIPELINE_ARCH 5 (bf16 only): pass 1 in the warp-specialised fused build, pass 2 in the grads build
builds+=("gdn_fused.cu|-DGDN_D=128 -DGDN_IO=0 -DGDN_FUSED_WS=1 -DGDN_BWD_ONEPASS=1")
builds+=("gdn_bwd_grads.cu|-DGDN_D=128 -DGDN_IO=0 -DGDN_BWD_ONEPASS=1 -DGDN_BWD_ONEPASS_RED=1 \
-DGDN_BWD_ONEPASS_BATCH=1 -DGDN_BWD_ONEPASS_TMARED=1")
status=0
i=0
for b in "${builds[@]}"; do
  src=${b%%|*}
  defs=${b#*|}
  if [ -n "${OPGRAPH_SASS_ONLY:-}" ] && [ "$src" != "$OPGRAPH_SASS_ONLY" ]; then continue; fi
  i=$((i + 1))
  # shellcheck disable=SC2086
  (cd "$tmp/base" && "$tmp/nvrtc_cubin" "$tmp/a$i.cubin" sm_90a "$k/$src" $defs) >/dev/null
  # shellcheck disable=SC2086
  "$tmp/nvrtc_cubin" "$tmp/b$i.cubin" sm_90a "$k/$src" $defs >/dev/null
  python3 - "$tmp/a$i.cubin" "$tmp/b$i.cubin" "$src $defs" <<'PY' || status=1
import struct, sys
def texts(path):
    data = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3A)
    secs = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + j * shentsize) for j in range(shnum)]
    names = secs[shstrndx]
    def name(off):
        start = names[4] + off
        return data[start:data.index(b'\0', start)].decode()
    return {name(s[0]): data[s[4]:s[4] + s[5]] for s in secs if name(s[0]).startswith('.text.')}
a, b = texts(sys.argv[1]), texts(sys.argv[2])
bad = [n for n in a if n in b and a[n] != b[n]] + [n + ' (gone)' for n in a if n not in b]
for n in sorted(set(b) - set(a)):
    print(f'{sys.argv[3]}: new entry {n[6:]}')
for n in bad:
    print(f'{sys.argv[3]}: DIFFERS {n[6:]}')
sys.exit(1 if bad else 0)
PY
done
echo "$i builds compared: $([ $status = 0 ] && echo 'every entry the same' || echo 'differences above')"
exit $status
