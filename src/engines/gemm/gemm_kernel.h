// engines/gemm/gemm_kernel.h — from (GemmProblem, knobs) to a kernel: the knob
// domains, the config they decode to, the heuristic's pick, the specialisation
// prelude (#defines, including the generated epilogue), the launch arguments.
//
// Knobs (the KnobType vocabulary; backend types where the meaning matches):
//   PIPELINE_ARCH  kernel version: 1 = gemm_v1 (mma.sync + cp.async ring, sm_80+),
//                  2 = gemm_v2 (TMA + wgmma, warp-specialised, persistent; sm_90a)
//   TILE_M, TILE_N CTA tile (elements): v1 128/64 x 128/64; v2 128 x 256/128/64/32/16
//   STAGES         shared-memory ring depth: v1 2..4; v2 2..8 (within 227 KiB)
//   CLUSTER_M/_N   thread-block cluster: CLUSTER_M = 2 (v2) launches CTA pairs
//                  along M that share B's tile through TMA multicast; _N: 1
//   SWAP_AB        0/1: compute C^T = B^T A^T (the kernel's M is the graph's N)
//   RASTER_ORDER   0: consecutive tiles walk M (v2: in bands of 8); 1: walk N
//   SPLIT_K_SLC    v2: K splits per tile, 1..8 (fp32 partials in a plan-owned
//                  scratch, the last split sums in split order); v1: 1
//   STREAM_K       v2: 1 = stream-K past the last whole wave: those tiles'
//                  K blocks shared out evenly, one contiguous range per
//                  resident CTA (v2_schedule); needs SPLIT_K_SLC = 1
//   WARP_SPEC_CFG  v2 consumer schedule: 0 = cooperative (both consumer
//                  warpgroups on each tile, 64 rows each); 1 = ping-pong (each
//                  takes whole tiles in turn, one's epilogue under the other's
//                  mainloop; TILE_N <= 128)
// All are performance-only: every config computes the same function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engines/gemm/gemm_problem.h"
#include "engines/gemm/kernels/gemm_params.cuh"
#include "engines/gemm/kernels/gemm_sched.cuh"
#include "opgraph/engine.h"
#include "runtime/nvrtc_compiler.h"

namespace opgraph::gemm {

struct GemmConfig {
  int version = 1;
  int tile_m = 128, tile_n = 128, stages = 3;
  int cluster_m = 1, cluster_n = 1;
  bool swap_ab = false;
  int raster = 0;
  int split_k = 1;
  int stream_k = 0;
  int pingpong = 0;  // WARP_SPEC_CFG
  bool operator==(const GemmConfig&) const = default;
};

// The declared knob domains (first value = default).
std::vector<KnobDomain> knob_domains();
// Knobs <-> config. INVALID_VALUE names a missing or out-of-domain knob, or a
// combination no kernel version takes (v1: tile 64/128, stages <= 4, split 1;
// v2: TILE_M 128, shared memory within 227 KiB).
Result<GemmConfig> config_from_knobs(const Knobs& knobs);
Knobs knobs_of(const GemmConfig& c);

// Whether config `c` (v2) can run problem `p` (graph view): the 16-byte class
// (TMA needs 16-byte aligned bases and strides), an M/N-major kernel operand
// only with a 64-element-wide tile along that axis, extents within int32.
// v1 configs take every analysed problem. Decided from facts only.
bool config_takes(const GemmProblem& p, const GemmConfig& c);

// The heuristic's pick from facts only (extents, batch, SM count; 132 when the
// target has no device; hopper: the target is sm_90, where v2 runs).
// FALLBACK asks for the smallest, most portable tile (v1).
GemmConfig pick_config(const GemmProblem& p, int sm_count, bool fallback, bool hopper = false);
// The BACKEND marker's shape classes (graph view, facts only) and whether ours
// ranks before cuDNN in each, from the measured table in gemm_kernel.cpp.
enum class ShapeClass : std::uint8_t { DECODE, SMALL, LARGE_SHORT_K, LARGE_LONG_K };
ShapeClass shape_class(const GemmProblem& p);
const char* to_string(ShapeClass c);
bool ours_first(ShapeClass c);

// Every config pick_config can return (the CI compile set), split_k = 1 (split
// is a run-time argument, not part of the specialisation).
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
// v2 kernels whose 16-bit output (the chain applied in registers) leaves
// through TMA stores (EPI_TMA): cooperative 128-row tiles, an N-contiguous
// 16-bit output, and room beside the ring for a 16-bit copy of at least one
// 64-column box of the tile. v2_epi_boxes: the boxes the copy holds (all the
// tile's, e.g. 128 x 256 with 3 stages, or fewer, stored in passes: 128 x 256
// with 4 stages holds two); 0 where EPI_TMA does not apply. For the kernel view `kp`.
int v2_epi_boxes(const GemmProblem& kp, const GemmConfig& c);
bool v2_epi_tma(const GemmProblem& kp, const GemmConfig& c);

// The launch contract: the kernels' one argument, defined in
// kernels/gemm_params.cuh, the header the kernels include too (gemm_v1 takes
// GemmParams, gemm_v2 GemmV2Params, by value).
using opgraph_gemm::GemmOperand;
using opgraph_gemm::GemmParams;
using opgraph_gemm::GemmV2Params;
using opgraph_gemm::TmaMap;
static_assert(kMaxEpilogueOperands == opgraph_gemm::kMaxEpilogueOperands,
              "the analysis keeps as many epilogue operands as the kernels' argument holds");

// The split count of SPLIT_K_SLC: the knob clamped to the K blocks (>= 1).
std::int64_t v2_splits(const GemmProblem& kp, const GemmConfig& c);

// v2's persistent schedule for the kernel view (the walk: gemm_sched.cuh):
// `tiles` work tiles (tile pairs under CLUSTER_M = 2), of which
// [0, split_from) run whole and the rest are split along K; `resident`
// clusters (CTAs when CLUSTER_M = 1) run at once: max_clusters when > 0 (the
// device's answer for the kernel), else sm_count / CLUSTER_M. SPLIT_K_SLC > 1
// splits every tile `splits` ways. STREAM_K = 1 (`stream`) shares out the K
// blocks of the tiles past the last whole wave (of one wave more where those
// give a cluster under 8 K blocks) evenly over the resident clusters, a
// contiguous range each; `splits` is then the most pieces a tile has. `units`
// counts every piece (whole tiles included).
struct V2Schedule {
  std::int64_t tiles = 0, splits = 1, split_from = 0, units = 0;
  int resident = 1;
  bool stream = false;
};
V2Schedule v2_schedule(const GemmProblem& kp, const GemmConfig& c, int sm_count = 132, int max_clusters = 0);
// The kernel's view of schedule `s` (what gemm_v2 derives from its arguments
// and grid), for walking the pieces on the host.
opgraph_gemm_sched::Sched v2_sched_args(const V2Schedule& s, std::int64_t kblocks);
// GemmV2Params::splits and the flag bits of schedule `s` (what the launch
// passes): stream-K's pieces are the walk's, so its kernel split count is 1.
std::int64_t v2_kernel_splits(const V2Schedule& s);
std::int64_t v2_schedule_flags(const V2Schedule& s);
// The kernel argument for the kernel view `kp` under v2 schedule `s` (v1:
// a default schedule; gemm_v1 reads .problem): every field but those an
// execute fills per call, which are zero: the device pointers (problem.a.ptr
// .. epi[i].ptr), the tensor maps and their flag bits (TmaCache::maps), the
// split-K scratch (workspace, counters). The epilogue's by-value operands
// are in problem.scalar, the schedule's in splits, split_from and flags.
GemmV2Params launch_params(const GemmProblem& kp, const V2Schedule& s);
// Split-K scratch for schedule `s` (bytes): partials, then counters; 0 when
// nothing is split.
std::int64_t v2_partial_bytes(const GemmConfig& c, const V2Schedule& s);
std::int64_t v2_counter_bytes(const GemmConfig& c, const V2Schedule& s);

// v2's persistent grid for schedule `s`: one cluster per resident slot, fewer
// when there are fewer units; 384 threads (grid_of's v2 rule).
void v2_grid(const GemmConfig& c, const V2Schedule& s, unsigned grid[3], unsigned block[3]);
// Launch geometry for the kernel view. v1: grid (tiles, batch), 128 threads.
// v2: persistent, 384 threads, CLUSTER_M x min(units, resident) CTAs of
// v2_schedule(kp, c, sm_count, max_clusters).
void grid_of(const GemmProblem& kp, const GemmConfig& c, unsigned grid[3], unsigned block[3], int sm_count = 132,
             int max_clusters = 0);

}  // namespace opgraph::gemm
