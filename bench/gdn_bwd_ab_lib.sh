#!/usr/bin/env bash
# bench/gdn_bwd_ab_lib.sh — what bench/gdn_bwd_ab.sh and bench/gdn_bwd_trials.sh share (sourced, from the repository
# root; $dir holds nvrtc_cubin, built from bench/nvrtc_cubin.cpp):
#   ab_side ROOT TAG DEFINES FILES  one side's cubins from the tree at ROOT — NVRTC with the engine's options at
#                                   d = 128, bf16 q / k / v: FILES among states (gdn_bwd_states.cu), grads
#                                   (gdn_bwd_grads.cu), fused (gdn_fused.cu with -DGDN_FUSED_WS=1) — as
#                                   $dir/TAG_<file>.cubin with their ptxas logs, in the background; then its launch
#                                   sizes in the foreground: $dir/TAG_smem (bench/gdn_bwd_smem.cpp, with whether its
#                                   grads kernel takes head groups) and, with fused, $dir/TAG_fsmem
#                                   (bench/gdn_bwd_fused_smem.cpp), each from ROOT's headers and DEFINES
#   ab_bg COMMAND...                runs COMMAND in the background, its pid kept for ab_wait
#   ab_wait                         waits for every job ab_side and ab_bg started; on a failure prints the failed
#                                   builds' logs and returns 1
#   ab_ptxas TAG FILES              "# TAG: " lines: each cubin's entries with their spills and registers
# shellcheck disable=SC2154  # $dir is the sourcing script's
ab_side() {
  local root=$1 tag=$2 defs=$3 files=$4 f src ws grouped=0
  for f in $files; do
    src=gdn_bwd_$f.cu
    ws=""
    [ "$f" = fused ] && src=gdn_fused.cu && ws=-DGDN_FUSED_WS=1
    # shellcheck disable=SC2086
    (cd "$root" && "$dir/nvrtc_cubin" "$dir/${tag}_$f.cubin" sm_90a "src/engines/linear_attention/kernels/$src" \
      -DGDN_D=128 -DGDN_IO=0 $ws $defs --ptxas-options=-v) >"$dir/${tag}_$f.ptxas" 2>&1 &
    ab_pids+=("$!")
  done
  grep -q kBwdFlagQkDirect "$root/src/engines/linear_attention/kernels/gdn_bwd_params.cuh" && grouped=1
  # shellcheck disable=SC2086
  g++ -std=c++17 -DGROUPED=$grouped $defs -I"$root/src/engines" bench/gdn_bwd_smem.cpp -o "$dir/${tag}_smem"
  if [[ " $files " == *" fused "* ]]; then
    # shellcheck disable=SC2086
    g++ -std=c++17 $defs -I"$root/src/engines" bench/gdn_bwd_fused_smem.cpp -o "$dir/${tag}_fsmem"
  fi
}
ab_pids=()
ab_bg() {
  "$@" &
  ab_pids+=("$!")
}
ab_wait() {
  local failed=0 j f
  for j in "${ab_pids[@]}"; do wait "$j" || failed=1; done
  ab_pids=()
  [ "$failed" = 0 ] && return 0
  for f in "$dir"/*.ptxas; do grep -q -i error "$f" && { echo "== $f"; cat "$f"; }; done
  return 1
}
ab_ptxas() {
  local tag=$1 f
  shift
  for f in "$@"; do
    grep -E "Compiling entry function|spill stores|Used [0-9]+ registers" "$dir/${tag}_$f.ptxas" |
      sed -E "s/.*entry function '([a-z_]+)'.*/\1/; s/^ptxas info *: //" | paste -sd ' ' | sed "s/^/# $tag: /" || true
  done
}
