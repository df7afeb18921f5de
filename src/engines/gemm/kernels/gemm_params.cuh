// gemm/kernels/gemm_params.cuh — the launch contract of the gemm kernels:
// the one argument each kernel takes, defined once. The kernels (NVRTC) and
// the host library (engines/gemm/gemm_kernel.h fills them, gemm_tma.cpp
// encodes the tensor maps, gemm_engine.cpp patches the pointers and passes
// the struct) include this same text, so the two sides cannot disagree on a
// field, its order or its size. Plain aggregates of 8-byte fields and
// 64-byte aligned tensor maps, no includes and no CUDA keywords: valid C++ for
// both compilers, with the same layout under both (LP64).
#pragma once

namespace opgraph_gemm {

constexpr int kMaxEpilogueOperands = 4;

// One strided operand: element (b0, b1, r, c) is at ptr + b0*s0 + b1*s1 + r*sr + c*sc
// (ELEMENTS; a broadcast axis has stride 0). A: r = m, c = k; B: r = k, c = n;
// C and epilogue operands: r = m, c = n.
struct GemmOperand {
  unsigned long long ptr;  // device address
  long long s0, s1, sr, sc;
};

// The problem: operands, the epilogue's by-value scalars, extents. gemm_v1's
// one argument, and GemmV2Params::problem. The generated epilogue chain
// (OPGRAPH_GEMM_EPILOGUE_BODY) reads it as `p` (p.epi[i], p.scalar[i]).
struct GemmParams {
  GemmOperand a, b, c;
  GemmOperand epi[kMaxEpilogueOperands];  // tensor operands of the chain (ptr 0: none)
  double scalar[kMaxEpilogueOperands];    // pass-by-value operands of the chain
  long long m, n, k;                      // problem extents (elements)
  long long batch0, batch1;               // batch = batch0 * batch1
};

// An opaque CUtensorMap (128 bytes, 64-byte aligned), encoded on the host by
// cuTensorMapEncodeTiled; the kernel passes its parameter-space address to TMA.
struct alignas(64) TmaMap {
  unsigned long long opaque[16];
};

// GemmV2Params::flags bits.
constexpr long long kFlagA1 = 1;        // A's map has batch axis b1 (else it is addressed at 0)
constexpr long long kFlagA0 = 2;        // A's map has batch axis b0
constexpr long long kFlagB1 = 4;        // B's map has batch axis b1
constexpr long long kFlagB0 = 8;        // B's map has batch axis b0
constexpr long long kFlagCTma = 16;     // c_map is encoded: an EPI_TMA kernel stores through it
constexpr long long kFlagStreamK = 32;  // the split tiles run stream-K, not uniform (gemm_sched.cuh)

// gemm_v2's one argument, passed by value as a __grid_constant__ kernel
// parameter (the tensor maps must stay in parameter space). The maps are
// 4-D, innermost first (contiguous axis, the other matrix axis, batch1,
// batch0), encoded by engines/gemm/gemm_tma.cpp.
struct GemmV2Params {
  TmaMap a_map, b_map;
  TmaMap c_map;                    // EPI_TMA kernels with kFlagCTma; otherwise unread
  GemmParams problem;
  unsigned long long workspace;    // fp32 split-K partials: [slot][64-row block][TILE_N/2 * 128]
  unsigned long long counters;     // u32 per (split tile, consumer warpgroup); 0 at launch, left 0
  long long splits;                // uniform split-K: K splits of a split tile (>= 1, <= K blocks)
  long long split_from;            // tiles (pairs) [0, split_from) run whole; the rest split
  long long flags;                 // kFlag* above
};

static_assert(sizeof(GemmOperand) == 40, "GemmOperand is five 8-byte fields");
static_assert(sizeof(GemmParams) == (3 + kMaxEpilogueOperands) * 40 + kMaxEpilogueOperands * 8 + 5 * 8,
              "GemmParams has no padding");
static_assert(sizeof(TmaMap) == 128 && alignof(TmaMap) == 64, "a tensor map is 128 bytes, 64-byte aligned");
static_assert(sizeof(GemmV2Params) == 832, "GemmV2Params: three maps, the problem, five 8-byte fields, padded to 64");

}  // namespace opgraph_gemm
