// engines/gemm/gemm_kernel.h — from (GemmProblem, knobs) to a kernel: the knob
// domains, the config they decode to, the heuristic's pick, the specialisation
// prelude (#defines, including the generated epilogue), the launch arguments.
//
// Knobs (the KnobType vocabulary; backend types where the meaning matches):
//   PIPELINE_ARCH  kernel version: 1 = gemm_v1 (mma.sync + cp.async ring)
//   TILE_M, TILE_N CTA tile (elements): 128 or 64
//   STAGES         shared-memory ring depth: 3, 2 or 4
//   CLUSTER_M/_N   thread-block cluster: 1 (v1 launches no clusters)
//   SWAP_AB        0/1: compute C^T = B^T A^T (the kernel's M is the graph's N)
//   RASTER_ORDER   0: consecutive CTAs walk M; 1: walk N
// All are performance-only: every config computes the same function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engines/gemm/gemm_problem.h"
#include "opgraph/engine.h"
#include "runtime/nvrtc_compiler.h"

namespace opgraph::gemm {

struct GemmConfig {
  int version = 1;
  int tile_m = 128, tile_n = 128, stages = 3;
  int cluster_m = 1, cluster_n = 1;
  bool swap_ab = false;
  int raster = 0;
  bool operator==(const GemmConfig&) const = default;
};

// The declared knob domains (first value = default).
std::vector<KnobDomain> knob_domains();
// Knobs <-> config. INVALID_VALUE names a missing or out-of-domain knob.
Result<GemmConfig> config_from_knobs(const Knobs& knobs);
Knobs knobs_of(const GemmConfig& c);

// The heuristic's pick from facts only (extents, batch, SM count; 132 when the
// target has no device). FALLBACK asks for the smallest, most portable tile.
GemmConfig pick_config(const GemmProblem& p, int sm_count, bool fallback);
// Every config pick_config can return (the CI compile set).
std::vector<GemmConfig> proposable_configs();

// The problem as the kernel sees it under `c` (A/B and M/N exchanged for SWAP_AB).
GemmProblem kernel_view(const GemmProblem& p, const GemmConfig& c);

// The OPGRAPH_GEMM_EPILOGUE_BODY text: the chain, in graph order.
std::string epilogue_body(const GemmProblem& p);
// The specialisation of kernels/gemm_v<version>.cu for the layout class of `p`.
// Extents, batch and strides are not part of it.
runtime::KernelRequest kernel_request(const GemmProblem& p, const GemmConfig& c);
// Dynamic shared memory of the kernel (bytes), mirroring gemm_v1.cu.
unsigned smem_bytes(const GemmProblem& p, const GemmConfig& c);

// Host mirror of opgraph_gemm::GemmParams (gemm_common.cuh): same field order,
// all 8-byte fields.
struct HostOperand {
  std::uint64_t ptr = 0;
  std::int64_t s0 = 0, s1 = 0, sr = 0, sc = 0;
};
struct HostParams {
  HostOperand a, b, c;
  HostOperand epi[kMaxEpilogueOperands];
  double scalar[kMaxEpilogueOperands] = {};
  std::int64_t m = 0, n = 0, k = 0, batch0 = 1, batch1 = 1;
};
static_assert(sizeof(HostParams) == (3 + kMaxEpilogueOperands) * 40 + kMaxEpilogueOperands * 8 + 5 * 8);

// The kernel's argument for the kernel view `kp`; ptr(uid) gives device addresses.
template <class PtrOf>
HostParams make_params(const GemmProblem& kp, PtrOf ptr) {
  HostParams h;
  auto op = [&](const View& v) { return HostOperand{ptr(v.uid), v.s0, v.s1, v.sr, v.sc}; };
  h.a = op(kp.a);
  h.b = op(kp.b);
  h.c = op(kp.c);
  for (std::size_t i = 0; i < kp.operands.size(); ++i) {
    if (kp.operands[i].by_value) h.scalar[i] = kp.operands[i].value;
    else h.epi[i] = op(kp.operands[i].view);
  }
  h.m = kp.m;
  h.n = kp.n;
  h.k = kp.k;
  h.batch0 = kp.batch0;
  h.batch1 = kp.batch1;
  return h;
}

// Grid (x: tiles, y: batch) for the kernel view.
void grid_of(const GemmProblem& kp, const GemmConfig& c, unsigned grid[3], unsigned block[3]);

}  // namespace opgraph::gemm
