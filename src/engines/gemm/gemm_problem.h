// engines/gemm/gemm_problem.h — what the gemm family reads from a graph: one
// matmul and the chain of pointwise nodes after it, reduced to a GemmProblem
// (dtypes, layout class, extents, strides, the epilogue steps in order).
//
// analyze_gemm is the family's check: it accepts a graph or declines with
// GRAPH_NOT_SUPPORTED naming the node, tensor and rule. Rules, in order:
//  G1 exactly one matmul, no M/N/K overrides; every other node a pointwise node;
//  G2 the pointwise nodes form one chain from the matmul's C: each consumes the
//     previous value exactly once, every intermediate is virtual and used by the
//     next node only, the last output is the graph's output (non-virtual);
//  G3 modes: ADD, MUL (the other operand a tensor or a by-value scalar), RELU_FWD
//     (default clips only), GELU_FWD, GELU_APPROX_TANH_FWD, SWISH_FWD, SIGMOID_FWD,
//     TANH_FWD, IDENTITY; at most 4 tensor/scalar operands;
//  G4 A and B both BFLOAT16 or both HALF; the output BFLOAT16, HALF or FLOAT;
//     epilogue operands BFLOAT16, HALF or FLOAT;
//  G5 layouts: A's K or M axis has stride 1; B's K or N axis has stride 1; the
//     output's N axis has stride 1; epilogue operands broadcast to the output;
//  G6 batch: at most 2 batch axes of extent > 1 in the output, batch <= 65535;
//  G7 alignment: every tensor's declared alignment is a power of two and at
//     least its element size. The 16-byte class (VEC 8: cp.async / TMA) needs
//     A's and B's alignment >= 16, their contiguous extents and other strides
//     multiples of 8; anything else is the element-wise class (VEC 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opgraph/data_type.h"
#include "opgraph/status.h"

namespace opgraph {
class OpGraph;
class VariantPack;
}

namespace opgraph::gemm {

enum class EpiKind : std::uint8_t { ADD, MUL, RELU, GELU, GELU_TANH, SWISH, SIGMOID, TANH, IDENTITY };

// A strided view, ELEMENTS: (b0, b1, r, c) -> b0*s0 + b1*s1 + r*sr + c*sc.
struct View {
  std::int64_t uid = -1;
  DataType dtype = DataType::NOT_SET;
  std::int64_t s0 = 0, s1 = 0, sr = 0, sc = 0;
};

struct EpiStep {
  EpiKind kind = EpiKind::IDENTITY;
  std::string node;      // the graph node's name (for the generated comment and errors)
  int operand = -1;      // index into GemmProblem::operands for ADD/MUL; -1 otherwise
  double beta = 1.0;     // SWISH's beta
};

struct EpiOperand {
  bool by_value = false;  // a pass-by-value scalar: `value`, no buffer
  double value = 0.0;
  View view;              // r = m, c = n; broadcast axes have stride 0
};

struct GemmProblem {
  DataType in = DataType::BFLOAT16;   // A and B
  DataType out = DataType::BFLOAT16;  // C (the chain's last output)
  bool a_kmajor = true;               // A's K axis contiguous (row-major A)
  bool b_kmajor = false;              // B's K axis contiguous (column-major B)
  int vec = 8;                        // 8: 16-byte class; 1: element-wise class
  std::int64_t m = 0, n = 0, k = 0, batch0 = 1, batch1 = 1;
  View a, b, c;                       // A: r=m c=k; B: r=k c=n; C: r=m c=n
  std::vector<EpiOperand> operands;
  std::vector<EpiStep> steps;         // in graph order
};

inline constexpr int kMaxEpilogueOperands = 4;

// Reads `graph` (validated, frozen). GRAPH_NOT_SUPPORTED names the rule (G1..G7).
Result<GemmProblem> analyze_gemm(const OpGraph& graph);
// The same with each operand's extents and strides read from `pack` (normalised
// against the graph's layout) where a per-call shape override wrote its slot
// (OperandBuffer::overridden), else from the declaration; null: analyze_gemm(graph).
// With a pack, also G9: A's, B's and C's extents agree (M, N, K, batch
// broadcast), else INVALID_VARIANT_PACK naming the axis and the three tensors.
Result<GemmProblem> analyze_gemm(const OpGraph& graph, const VariantPack* pack);

// Pure computations shared with the tests.
std::string_view to_string(EpiKind k) noexcept;

}  // namespace opgraph::gemm
