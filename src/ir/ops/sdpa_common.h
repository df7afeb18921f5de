// ir/ops/sdpa_common.h — what the six captured SDPA records share: the attribute
// schema, the geometry read from Q/K/V (layout contract, GQA, paged K/V), the
// semantic rules every variant applies (scale, bias, padding, ragged THD, masks,
// dropout, sink token), and the one decoding of the mask attributes that the
// reference engine also reads (so IR and oracle cannot disagree on what
// "causal" or "sliding window" means).
//
// Every rule has a name; its error says "rule <name>: ..." after the op, node,
// port and tensor (see InferContext::fail).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/infer_context.h"
#include "opgraph/builders/sdpa.h"
#include "opgraph/op_spec.h"

namespace opgraph::ops::sdpa {

// Mask semantics (row i = query position, column j = key position, both 0-based
// within one batch entry's valid sequence). With BOTTOM_RIGHT alignment the row
// is shifted by (s_kv - s_q) of that batch entry (its SEQ_LEN values when the
// padding mask is on, else the declared extents). A key is kept iff
//   j - i' <= right   (when a right bound is set; causal = right bound 0), and
//   i' - j <  left    (when a left bound is set; sliding_window_length = left),
// where i' = i, or i + (s_kv - s_q) for BOTTOM_RIGHT.
struct Band {
  std::optional<std::int64_t> right;  // diagonal_band_right_bound (causal: 0)
  std::optional<std::int64_t> left;   // diagonal_band_left_bound / sliding_window_length (>= 1)
  bool bottom_right = false;          // diagonal_alignment == BOTTOM_RIGHT
};
// Decodes the mask attributes of an sdpa-family node (assumes validate() passed).
Band band_of(const Node& n);

// Effective attention scale: the Attn_scale tensor wins, else the attn_scale
// attribute, else 1.0 (cudnn-frontend's default). Readers of a tensor scale must
// look at the bound tensor; this returns only the attribute/default part.
double attn_scale_attr(const Node& n);

// ALiBi slope of head h out of H heads, as cudnn-frontend's get_alibi_slope (and the ALiBi
// paper): with n the largest power of two <= H, 2^(-8 (h + 1) / n) for h < n, then
// 2^(-4 (2 (h - n) + 1) / n) (the odd terms of the 2n-head sequence). The bias added to
// score (i, j) is slope * (j - i), so it is 0 on the diagonal and negative to the left.
double alibi_slope(std::int64_t h, std::int64_t heads);

// MXFP8 block-scale geometry: blocks of 32 elements along one axis, stored with
// F8_128x4 reordering, so the scale tensor's block axis is padded to a multiple
// of 4 and its other (row) axis to a multiple of 128.
inline constexpr std::int64_t kMxBlock = 32;
std::int64_t round_up(std::int64_t x, std::int64_t m);

// The extents read from Q/K/V. Paged K/V declare their caches as
// [num_blocks, h, block_size, d]; s_kv is then paged_attention_max_seq_len_kv.
struct Geometry {
  std::int64_t b = 0, h_q = 0, h_k = 0, h_v = 0, s_q = 0, s_kv = 0, d_qk = 0, d_v = 0;
  bool paged = false;
  std::int64_t block_size = 0;  // paged only
};

// Which record is being checked; selects the dtype rules and optional ports.
enum class Variant { FWD, BWD, FP8_FWD, FP8_BWD, MXFP8_FWD, MXFP8_BWD };
bool is_backward(Variant v);
bool is_fp8(Variant v);    // per-tensor fp8 (not MXFP8)
bool is_mxfp8(Variant v);

// "rule <name>: <what>" on a port.
Status fail_rule(const InferContext& c, ops::PortRef port, std::string_view rule, const std::string& what);
Status fail_attr_rule(const InferContext& c, std::string_view attr, std::string_view rule, const std::string& what);

// Rank 4 and unit last stride (the layout contract); for an input, or (after
// set_output) an output whose strides the user set.
Status check_layout(const InferContext& c, ops::PortRef port, bool output = false);

// Reads and checks Q/K/V: ranks, layout, d_qk match, batch, s_kv, GQA ratios,
// paged caches and their page tables. Returns the geometry through `g`.
Status read_geometry(InferContext& c, Variant v, Geometry& g);

// The rules every variant applies after the geometry: attention scale, bias,
// padding mask and seq lens, ragged offsets, masks, dropout, sink token, block
// mask, implementation. `outputs_ragged` lists output ports that may carry
// ragged offsets (O, Stats / dQ, dK, dV).
Status check_common(InferContext& c, Variant v, const Geometry& g);

// A per-tensor fp8 scale/descale scalar: FLOAT with one element.
Status check_scalar(const InferContext& c, ops::PortRef port);
// An MXFP8 descale tensor for data `data_port` of dims [b, h, rows, cols] with
// blocks of 32 along `block_axis` (2 or 3): FP8_E8M0, F8_128x4 reordering, dims
// [b, h, R, C] with the block axis = round_up(ceil(n / 32), 4) and the other
// axis = round_up(n, 128), and the block axis contiguous (stride 1; the 128x4
// layout of ir/scale_layout.h, rule f8_128x4_layout).
Status check_mx_descale(const InferContext& c, ops::PortRef port, ops::PortRef data_port, int block_axis);
// The dims check_mx_descale expects.
std::vector<std::int64_t> mx_descale_dims(const std::vector<std::int64_t>& data, int block_axis);

// Sets the forward outputs: O [b, h_q, s_q, d_v] (dtype `o_dtype`, NOT_SET =
// the graph's fill), Stats / Max / Sum_exp [b, h_q, s_q, 1] FLOAT, and checks a
// user-set O layout.
Status set_forward_outputs(InferContext& c, const Geometry& g, DataType o_dtype);
// Sets dQ / dK / dV to the dims of Q / K / V (dtype `grad_dtype`, NOT_SET = the
// graph's fill), dBias to the dims of Bias, and checks user-set layouts.
Status set_backward_outputs(InferContext& c, DataType grad_dtype);
// The output of `outs` (as add_node returned them, in spec order) named `port`.
TensorPtr pick(std::string_view op, const std::vector<TensorPtr>& outs, std::string_view port);

// Builder pieces shared by sdpa.cpp and sdpa_fp8.cpp: the optional inputs every
// forward / backward variant binds, in binding order (Block_mask only sdpa has),
// and the outputs of `outs` by port (a port the op lacks reads as nullptr).
std::vector<PortArg> forward_optional(const SdpaInputs& in, bool with_block_mask = false);
std::vector<PortArg> backward_optional(const SdpaBackwardInputs& in);
void append(std::vector<PortArg>& a, std::vector<PortArg> b);
SdpaOutputs forward_outputs(std::string_view op, const std::vector<TensorPtr>& outs);
SdpaBackwardOutputs backward_outputs(std::string_view op, const std::vector<TensorPtr>& outs);

// The four fp8 records (sdpa_fp8.cpp), appended to the group table by sdpa.cpp.
std::vector<OpSpec> fp8_specs();

// Attribute schemas.
std::vector<AttrSpec> forward_attrs();
std::vector<AttrSpec> backward_attrs();

// Conditional-output predicates.
bool wants_stats(const Node& n);
bool wants_max(const Node& n);
bool wants_sum_exp(const Node& n);
bool wants_rng_dump(const Node& n);
bool wants_dbias(const Node& n);
bool wants_dsink(const Node& n);

}  // namespace opgraph::ops::sdpa
