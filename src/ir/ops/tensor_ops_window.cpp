// ir/ops/tensor_ops_window.cpp — ops that read X through a window or an index:
// resample, diagonal_band_mask, paged_cache_load.
//
// resample (X → Y, Index). X is [N, C, H, W] or [N, C, D, H, W]; the spatial axes are
//   the last 2 or 3. resampling_mode (required):
//   * MAXPOOL, AVGPOOL_INCLUDE_PADDING, AVGPOOL_EXCLUDE_PADDING: window and stride are
//     required (one positive entry per spatial axis); pre_padding / post_padding default
//     to 0 and must be < window; Y.spatial = floor((in + pre + post - window) / stride) + 1
//     (>= 1). Padded positions hold padding_mode's value: ZERO_PAD 0, NEG_INF_PAD -inf,
//     EDGE_VAL_PAD the nearest in-bounds element; the default is NEG_INF_PAD for MAXPOOL and
//     ZERO_PAD otherwise. AVGPOOL_INCLUDE_PADDING divides by the window size,
//     AVGPOOL_EXCLUDE_PADDING by the count of in-bounds positions (its padding value is
//     unused); NEG_INF_PAD with an average pool is refused.
//   * NEAREST, BILINEAR: interpolation to Y's user-set dims (N, C equal to X's); scale per
//     axis = in / out, source coordinate (o + 0.5) * in / out - 0.5 (half-pixel centres,
//     align_corners = false), clamped to the edge; NEAREST takes floor(o * in / out).
//     window, stride, paddings and padding_mode do not apply and are refused.
//   generate_index (MAXPOOL only) adds Index (Y's dims): the row-major position of the
//   maximum inside its window (first on ties); INT32 unless typed; an INT8/UINT8 Index
//   must hold prod(window) - 1.
// diagonal_band_mask (X, B, SEQ_LEN_Q, SEQ_LEN_KV, LeftBound, ShiftRightBound → Y).
//   X is [..., S_q, S_kv] (rank >= 2; rank 4 [B, H, S_q, S_kv] with seq lens). For row i
//   and column j let d = j - i, shifted for bottom-right alignment when SEQ_LEN_Q and
//   SEQ_LEN_KV are bound (both or neither; INT32/INT64, one per batch):
//   d = j - i - (seq_len_kv[b] - seq_len_q[b]). With comparison_mode CMP (CMP_GT default,
//   or CMP_GE), Y = B where CMP(d, ShiftRightBound) or CMP(-d, LeftBound), else X.
//   So causal is ShiftRightBound = 0 with CMP_GT; a sliding window keeping w keys up to
//   the diagonal is LeftBound = w - 1 with CMP_GT. At least one bound is required; bounds
//   are one INT32/INT64 element; B is one floating element. Y has X's dims and type.
// paged_cache_load (container, seqLen, pageTable → yOut). container is
//   [num_blocks, H, block_size, D]; pageTable [B, 1, P, 1] and seqLen (B elements) are
//   INT32/INT64. yOut[b, h, s, d] = container[pageTable[b, 0, s / block_size, 0], h,
//   s % block_size, d] for s < seqLen[b], 0 beyond. yOut is [B, H, S, D] with S = P *
//   block_size unless the user set S (1 <= S <= P * block_size); container's type.
#include "ir/ops/groups.h"
#include "ir/ops/output_layout.h"
#include "ir/ops/tensor_ops_common.h"

namespace opgraph::ops {
namespace {

bool generates_index(const Node& n) { return ops::attr::generate_index(n); }

using RS = ops::ResamplingMode;

bool is_pool(RS m) { return m == RS::MAXPOOL || m == RS::AVGPOOL_EXCLUDE_PADDING || m == RS::AVGPOOL_INCLUDE_PADDING; }

Status infer_pool(InferContext& c, RS m, std::int64_t spatial) {
  const Node& n = c.node();
  const std::string mode(ops::to_string(m));
  const Dims& x = c.dims(ops::in::X);
  for (const char* a : {"window", "stride"})
    if (!n.attr_is_set(a)) return missing_attr(c, a, mode + " needs one " + a + " extent per spatial axis");
  OPGRAPH_CHECK(check_int_list(c, "window", spatial, 1));
  OPGRAPH_CHECK(check_int_list(c, "stride", spatial, 1));
  OPGRAPH_CHECK(check_int_list(c, "pre_padding", spatial, 0));
  OPGRAPH_CHECK(check_int_list(c, "post_padding", spatial, 0));
  if (m != RS::MAXPOOL && ops::Resample::padding_mode(n) == ops::PaddingMode::NEG_INF_PAD)
    return c.fail_attr("padding_mode", "NEG_INF_PAD would make " + mode + " average -inf; use ZERO_PAD or EDGE_VAL_PAD");
  Dims win = ops::attr::window(n).value_or(std::vector<std::int64_t>{}), str = ops::Resample::stride(n).value_or(Dims{});
  Dims pre = ops::Resample::pre_padding(n).value_or(Dims(spatial, 0));
  Dims post = ops::Resample::post_padding(n).value_or(Dims(spatial, 0));
  Dims y = x;
  for (std::int64_t i = 0; i < spatial; ++i) {
    if (pre[i] >= win[i] || post[i] >= win[i])
      return c.fail_attr(pre[i] >= win[i] ? "pre_padding" : "post_padding",
                         "spatial axis " + std::to_string(i) + ": padding must be < window " + std::to_string(win[i]) +
                             " so that every window overlaps X");
    std::int64_t in = x[x.size() - spatial + i], span = in + pre[i] + post[i] - win[i];
    if (span < 0)
      return c.fail(ops::in::X, "spatial axis " + std::to_string(i) + " (extent " + std::to_string(in) +
                             ", padded) is smaller than the window " + std::to_string(win[i]));
    y[x.size() - spatial + i] = span / str[i] + 1;
  }
  OPGRAPH_CHECK(c.set_output(ops::out::Y, y));
  if (generates_index(n)) {
    std::int64_t cells = 1;
    for (auto w : win) cells *= w;
    TensorPtr idx = c.out(ops::out::Index);
    DataType t = idx->data_type_set_by_user() ? idx->get_data_type() : DataType::INT32;
    std::int64_t cap = t == DataType::INT8 ? 127 : t == DataType::UINT8 ? 255 : t == DataType::INT32 ? (1ll << 31) - 1
                       : t == DataType::INT64 ? INT64_MAX : -1;
    if (cap < 0) return c.fail(ops::out::Index, "must be INT8, UINT8, INT32 or INT64, got " + std::string(to_string(t)));
    if (cells - 1 > cap)
      return c.fail(ops::out::Index, std::string(to_string(t)) + " cannot hold window position " + std::to_string(cells - 1));
    OPGRAPH_CHECK(c.set_output(ops::out::Index, y, DataType::INT32));
  }
  return Status::ok();
}

Status infer_resample_shape(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank_between(ops::in::X, 4, 5));
  const Node& n = c.node();
  const std::optional<RS> m = ops::Resample::resampling_mode(n);
  if (!m) return missing_attr(c, "resampling_mode", "resample needs a resampling mode");
  const std::string mode(ops::to_string(*m));
  std::int64_t spatial = c.in(ops::in::X)->rank() - 2;
  if (generates_index(n) && *m != RS::MAXPOOL)
    return c.fail_attr("generate_index", "only MAXPOOL has an argmax to record, not " + mode);
  if (is_pool(*m)) return infer_pool(c, *m, spatial);
  for (const char* a : {"window", "stride", "pre_padding", "post_padding", "padding_mode"})
    if (n.attr_is_set(a)) return c.fail_attr(a, "does not apply to " + mode + " (interpolation to Y's dims)");
  Dims y;
  OPGRAPH_CHECK(c.require_user_output_dims(ops::out::Y, &y));
  const Dims& x = c.dims(ops::in::X);
  if (y.size() != x.size() || y[0] != x[0] || y[1] != x[1])
    return c.fail(ops::out::Y, mode + " keeps N and C and the rank of X " + InferContext::dims_str(x) + ", got " +
                           InferContext::dims_str(y));
  return Status::ok();
}

// Y and Index follow X's layout class (ops/output_layout.h). cudnn-frontend's
// ResampleNode (node/resample.h) defaults both to channels-last whatever X is; opgraph
// agrees for a channels-last X and keeps a packed NCHW X's outputs packed NCHW.
Status infer_resample(InferContext& c) {
  OPGRAPH_CHECK(infer_resample_shape(c));
  follow_layout(c, "Y", c.in(ops::in::X).get());
  follow_layout(c, "Index", c.in(ops::in::X).get());
  return Status::ok();
}

Status infer_band_mask(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank_between(ops::in::X, 2, 12));
  OPGRAPH_CHECK(c.require_floating(ops::in::B));
  OPGRAPH_CHECK(c.require_numel(ops::in::B, 1, "the fill value"));
  if (!c.has(ops::in::LeftBound) && !c.has(ops::in::ShiftRightBound))
    return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, ops::in::ShiftRightBound,
                       "neither LeftBound nor ShiftRightBound is bound: the band would keep everything");
  for (const char* p : {"LeftBound", "ShiftRightBound"})
    if (c.has(p)) OPGRAPH_CHECK(require_index_scalar(c, p));
  if (c.has(ops::in::SEQ_LEN_Q) != c.has(ops::in::SEQ_LEN_KV))
    return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, c.has(ops::in::SEQ_LEN_Q) ? "SEQ_LEN_KV" : "SEQ_LEN_Q",
                       "bottom-right alignment needs both SEQ_LEN_Q and SEQ_LEN_KV");
  if (c.has(ops::in::SEQ_LEN_Q)) {
    OPGRAPH_CHECK(c.require_rank(ops::in::X, 4));
    for (const char* p : {"SEQ_LEN_Q", "SEQ_LEN_KV"}) {
      OPGRAPH_CHECK(c.require_integer_index(p));
      OPGRAPH_CHECK(c.require_numel(p, c.dims(ops::in::X)[0], "one sequence length per batch entry of X"));
    }
  }
  // Y follows X's layout class; cudnn-frontend's band-mask node (node/diagonal_band_mask.h)
  // gives Y X's strides.
  return set_output_like(c, "Y", c.dims(ops::in::X), "X", c.dtype(ops::in::X));
}

Status infer_paged_cache_load(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank(ops::in::container, 4));
  OPGRAPH_CHECK(c.require_rank(ops::in::pageTable, 4));
  OPGRAPH_CHECK(c.require_integer_index(ops::in::pageTable));
  OPGRAPH_CHECK(c.require_integer_index(ops::in::seqLen));
  const Dims& cont = c.dims(ops::in::container);
  const Dims& pt = c.dims(ops::in::pageTable);
  if (pt[1] != 1 || pt[3] != 1)
    return c.fail(ops::in::pageTable, "must be [B, 1, pages, 1], got " + InferContext::dims_str(pt));
  OPGRAPH_CHECK(c.require_numel(ops::in::seqLen, pt[0], "one sequence length per batch entry of pageTable"));
  std::int64_t max_s = pt[2] * cont[2];
  Dims y = {pt[0], cont[1], max_s, cont[3]};
  TensorPtr o = c.out(ops::out::yOut);
  if (o->dim_set_by_user()) {
    const Dims& u = o->get_dim();
    if (u.size() != 4 || u[0] != y[0] || u[1] != y[1] || u[3] != y[3] || u[2] < 1 || u[2] > max_s)
      return c.fail(ops::out::yOut, "must be [B, H, S, D] = [" + std::to_string(y[0]) + ", " + std::to_string(y[1]) +
                                ", S, " + std::to_string(y[3]) + "] with 1 <= S <= pages * block_size = " +
                                std::to_string(max_s) + ", got " + InferContext::dims_str(u));
    y[2] = u[2];
  }
  return c.set_output(ops::out::yOut, y, c.dtype(ops::in::container));
}

const OpSpec kSpecs[] = {
    {.name = "resample",
     .inputs = {{"X"}},
     .outputs = {{"Y"}, {"Index", generates_index}},
     .attrs = {{"resampling_mode", AttrType::ENUM, std::nullopt, true,
                {"AVGPOOL_EXCLUDE_PADDING", "AVGPOOL_INCLUDE_PADDING", "BILINEAR", "NEAREST", "MAXPOOL"}},
               {"padding_mode", AttrType::ENUM, std::nullopt, false, {"EDGE_VAL_PAD", "NEG_INF_PAD", "ZERO_PAD"}},
               {"window", AttrType::INT_LIST},
               {"stride", AttrType::INT_LIST},
               {"pre_padding", AttrType::INT_LIST},
               {"post_padding", AttrType::INT_LIST},
               {"generate_index", AttrType::BOOL, AttrValue{false}}},
     .infer = infer_resample,
     .summary = "pooling (max/avg with padding modes) or nearest/bilinear interpolation"},
    {.name = "diagonal_band_mask",
     .inputs = {{"X"}, {"B"}, {"SEQ_LEN_Q", true}, {"SEQ_LEN_KV", true}, {"LeftBound", true}, {"ShiftRightBound", true}},
     .outputs = {{"Y"}},
     .attrs = {{"comparison_mode", AttrType::ENUM, AttrValue{std::string("CMP_GT")}, false, {"CMP_GT", "CMP_GE"}}},
     .infer = infer_band_mask,
     .summary = "fill X outside a diagonal band (causal, sliding window) with B"},
    {.name = "paged_cache_load",
     .inputs = {{"container"}, {"seqLen"}, {"pageTable"}},
     .outputs = {{"yOut"}},
     .infer = infer_paged_cache_load,
     .summary = "gather a paged K/V cache into a dense [B, H, S, D] tensor"},
};

}  // namespace

std::span<const OpSpec> tensor_op_window_specs() { return kSpecs; }

}  // namespace opgraph::ops
