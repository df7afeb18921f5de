// bench/gdn_bwd_smem.cpp — prints what bench/gdn_bwd_ab.cu needs to launch one side's gdn backward kernels,
// from that side's own gdn_bwd_params.cuh (a variant may lay its tiles out otherwise):
// "prep,fwd_scan,rev_scan,grads,grouped" — the four kernels' dynamic shared memory at d = 128, and whether its
// gdn_bwd_grads takes a q / k head's group of output heads (GROUPED: 1 where the header has kBwdFlagQkDirect).
// Built by bench/gdn_bwd_ab.sh and bench/gdn_bwd_profile.sh with that side's -I and -DGROUPED.
#include <cstdio>

#include "linear_attention/kernels/gdn_bwd_params.cuh"

int main() {
  using namespace opgraph_gdn;
  std::printf("%lld,%lld,%lld,%lld,%d\n", gdn_bwd_prep_smem_bytes(128), gdn_bwd_fwd_scan_smem_bytes(128),
              gdn_bwd_rev_scan_smem_bytes(128), gdn_bwd_grads_smem_bytes(128), GROUPED);
}
