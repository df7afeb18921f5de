// bench/gdn_bwd_fused_smem.cpp — prints what bench/gdn_bwd_ab.cu's fused mode needs to launch one side's fused forms,
// from that side's own headers and defines: "fwd_fused,rev_fused", the dynamic shared memory of gdn_bwd_fwd_fused
// and gdn_bwd_rev_fused at d = 128 (under GDN_BWD_FWD_STAGE the forward recompute takes its staging panels too; a
// tree from before that define launches it with the forward's fused size). Built by bench/gdn_bwd_ab.sh with that
// side's -I and its -D defines.
#include <cstdio>

#include "linear_attention/kernels/gdn_params.cuh"
#include "linear_attention/kernels/gdn_bwd_params.cuh"

int main() {
  using namespace opgraph_gdn;
#ifdef GDN_BWD_FWD_STAGE
  const long long fwd = gdn_bwd_fwd_fused_smem_bytes(128);
#else
  const long long fwd = gdn_fused_ws_smem_bytes(128);
#endif
  std::printf("%lld,%lld\n", fwd, gdn_bwd_rev_fused_smem_bytes(128));
}
