#!/usr/bin/env bash
# scripts/nvtools.sh — cuobjdump and nvdisasm for a machine whose CUDA toolkit lacks them (this one's CUDA 13.0 has
# nvcc, ptxas and NVRTC but no binary utilities): NVIDIA's PyPI wheels nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm,
# unpacked into ${OPGRAPH_NVTOOLS:-$HOME/.cache/opgraph-nvtools} once. Prints the folder holding both tools, e.g.
#   PATH=$(bash scripts/nvtools.sh):$PATH cuobjdump -sass -fun gdn_bwd_grads k.cubin
# (scripts/sass_mix.py finds them there itself). Their SASS reads cubins for sm_90a made by CUDA 13.0's NVRTC.
set -euo pipefail
dir=${OPGRAPH_NVTOOLS:-$HOME/.cache/opgraph-nvtools}
bin=$dir/nvidia/cu13/bin
if [ ! -x "$bin/cuobjdump" ] || [ ! -x "$bin/nvdisasm" ]; then
  mkdir -p "$dir/wheels"
  python3 -m pip download --quiet --no-deps -d "$dir/wheels" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >&2
  for w in "$dir"/wheels/*.whl; do python3 -m zipfile -e "$w" "$dir"; done
  chmod +x "$bin/cuobjdump" "$bin/nvdisasm"
fi
echo "$bin"
