// opgraph/builders/pointwise.h — the pointwise table and its builders (records in src/ir/ops/pointwise*.cpp).
//
// ONE op, "pointwise", covers cudnn-frontend's 50 PointwiseMode_t values. What
// differs between modes is data, held in one row per mode (pointwise_modes()):
// the mode's name, its input count and its traits. Validation, the builders,
// the reference engine and its tests all read that table.
//
// Ports: IN_0, IN_1, IN_2 → OUT_0. Backward modes take (IN_0 = dy, IN_1 = x) as
// cudnn does; BINARY_SELECT takes (IN_0, IN_1, IN_2 = BOOLEAN mask) and yields
// mask ? IN_0 : IN_1. OUT_0's dims are the numpy broadcast of the bound inputs.
//
// The 54 builder names (pointwise_builder_table()) are the 50 modes' snake_case
// names plus four aliases: bias (ADD), scale (MUL), leaky_relu (RELU_FWD with
// relu_lower_clip_slope) and leaky_relu_backward (RELU_BWD likewise).
// A builder sets the `mode` attribute itself (overriding any `mode` in attrs);
// every other problem is reported by validate().
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "opgraph/builders/node_sink.h"

namespace opgraph {

// cudnn-frontend's PointwiseMode_t, in its order (NOT_SET excluded).
enum class PointwiseMode : std::uint8_t {
  ADD, MUL, SQRT, MAX, MIN, RELU_FWD, TANH_FWD, SIGMOID_FWD, ELU_FWD, GELU_FWD, SOFTPLUS_FWD, SWISH_FWD,
  RELU_BWD, TANH_BWD, SIGMOID_BWD, ELU_BWD, GELU_BWD, SOFTPLUS_BWD, SWISH_BWD, ERF, IDENTITY,
  GELU_APPROX_TANH_BWD, GELU_APPROX_TANH_FWD, GEN_INDEX, BINARY_SELECT, EXP, LOG, NEG, MOD, POW, ABS, CEIL,
  COS, FLOOR, RSQRT, SIN, LOGICAL_NOT, TAN, SUB, ADD_SQUARE, DIV, CMP_EQ, CMP_NEQ, CMP_GT, CMP_GE, CMP_LT,
  CMP_LE, LOGICAL_AND, LOGICAL_OR, RECIPROCAL,
};

// What a mode is, beyond its arity. Each flag is one validation rule.
struct PointwiseTraits {
  bool is_backward = false;    // (dy, x) → dx of `forward`; both inputs floating
  bool is_comparison = false;  // OUT_0 is BOOLEAN
  bool is_logical = false;     // every input and OUT_0 are BOOLEAN
  bool is_select = false;      // IN_2 is a BOOLEAN mask
  bool accepts_bool = false;   // BOOLEAN data inputs allowed (IDENTITY, BINARY_SELECT, CMP_EQ/NEQ, MUL)
  bool uses_axis = false;      // `axis` required (GEN_INDEX)
  bool uses_relu_clip = false; // relu_lower_clip, relu_upper_clip, relu_lower_clip_slope apply
  bool uses_swish_beta = false;
  bool uses_elu_alpha = false;
  bool uses_softplus_beta = false;
};

struct PointwiseModeInfo {
  PointwiseMode mode;
  std::string_view name;      // "RELU_FWD": the `mode` attribute's value
  int arity;                  // inputs taken: 1, 2 or 3
  PointwiseMode forward;      // a backward mode's forward mode; the mode itself otherwise
  PointwiseTraits traits;
};

// The 50 rows, in PointwiseMode order (row i describes PointwiseMode(i)).
std::span<const PointwiseModeInfo> pointwise_modes();
const PointwiseModeInfo& pointwise_mode_info(PointwiseMode m);
const PointwiseModeInfo* find_pointwise_mode(std::string_view name);  // nullptr if unknown

class PointwiseBuilders;

// One builder name: the member function of that name, the mode it builds and
// how to call it uniformly (tests and docs walk this table).
struct PointwiseBuilderEntry {
  std::string_view builder;   // "relu", "bias", ...
  PointwiseMode mode;
  // Calls the named builder with in[0..arity-1]. gen_index is called with axis 0,
  // leaky_relu / leaky_relu_backward with negative_slope 0.01.
  TensorPtr (*call)(PointwiseBuilders& g, const std::vector<TensorPtr>& in, const Attributes& attrs);
};

// The 54 builder names, alphabetical.
std::span<const PointwiseBuilderEntry> pointwise_builder_table();

class PointwiseBuilders : public virtual NodeSink {
 public:
  // Generic: `attrs` must set `mode`; unbound inputs are nullptr.
  TensorPtr pointwise(TensorPtr in0, TensorPtr in1 = nullptr, TensorPtr in2 = nullptr, const Attributes& attrs = {});

  // --- binary (a, b) ---
  TensorPtr add(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr sub(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr mul(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr div(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr add_square(TensorPtr a, TensorPtr b, const Attributes& attrs = {});  // a + b * b
  TensorPtr max(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr min(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr mod(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr pow(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr cmp_eq(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr cmp_neq(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr cmp_gt(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr cmp_ge(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr cmp_lt(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr cmp_le(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr logical_and(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr logical_or(TensorPtr a, TensorPtr b, const Attributes& attrs = {});
  TensorPtr bias(TensorPtr input, TensorPtr bias, const Attributes& attrs = {});    // ADD
  TensorPtr scale(TensorPtr input, TensorPtr scale, const Attributes& attrs = {});  // MUL

  // --- unary ---
  TensorPtr sqrt(TensorPtr x, const Attributes& attrs = {});
  TensorPtr relu(TensorPtr x, const Attributes& attrs = {});
  TensorPtr tanh(TensorPtr x, const Attributes& attrs = {});
  TensorPtr sigmoid(TensorPtr x, const Attributes& attrs = {});
  TensorPtr elu(TensorPtr x, const Attributes& attrs = {});
  TensorPtr gelu(TensorPtr x, const Attributes& attrs = {});
  TensorPtr gelu_approx_tanh(TensorPtr x, const Attributes& attrs = {});
  TensorPtr softplus(TensorPtr x, const Attributes& attrs = {});
  TensorPtr swish(TensorPtr x, const Attributes& attrs = {});
  TensorPtr erf(TensorPtr x, const Attributes& attrs = {});
  TensorPtr identity(TensorPtr x, const Attributes& attrs = {});
  TensorPtr exp(TensorPtr x, const Attributes& attrs = {});
  TensorPtr log(TensorPtr x, const Attributes& attrs = {});
  TensorPtr neg(TensorPtr x, const Attributes& attrs = {});
  TensorPtr abs(TensorPtr x, const Attributes& attrs = {});
  TensorPtr ceil(TensorPtr x, const Attributes& attrs = {});
  TensorPtr floor(TensorPtr x, const Attributes& attrs = {});
  TensorPtr cos(TensorPtr x, const Attributes& attrs = {});
  TensorPtr sin(TensorPtr x, const Attributes& attrs = {});
  TensorPtr tan(TensorPtr x, const Attributes& attrs = {});
  TensorPtr rsqrt(TensorPtr x, const Attributes& attrs = {});
  TensorPtr reciprocal(TensorPtr x, const Attributes& attrs = {});
  TensorPtr logical_not(TensorPtr x, const Attributes& attrs = {});
  // OUT_0[idx] = idx[axis] (INT32 unless the output's type is set).
  TensorPtr gen_index(TensorPtr x, std::int64_t axis, const Attributes& attrs = {});
  TensorPtr leaky_relu(TensorPtr x, double negative_slope, const Attributes& attrs = {});

  // --- backward (dy, x) → dx ---
  TensorPtr relu_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs = {});
  TensorPtr tanh_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs = {});
  TensorPtr sigmoid_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs = {});
  TensorPtr elu_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs = {});
  TensorPtr gelu_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs = {});
  TensorPtr gelu_approx_tanh_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs = {});
  TensorPtr softplus_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs = {});
  TensorPtr swish_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs = {});
  TensorPtr leaky_relu_backward(TensorPtr loss, TensorPtr input, double negative_slope,
                                const Attributes& attrs = {});

  // --- ternary ---
  TensorPtr binary_select(TensorPtr input0, TensorPtr input1, TensorPtr mask, const Attributes& attrs = {});

 protected:
  // Adds a pointwise node of mode `m` (sets `mode` on a copy of attrs).
  TensorPtr pointwise_node(PointwiseMode m, TensorPtr in0, TensorPtr in1, TensorPtr in2, const Attributes& attrs);
};

}  // namespace opgraph
