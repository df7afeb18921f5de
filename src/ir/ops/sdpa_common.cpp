// ir/ops/sdpa_common.cpp — the attribute schema, geometry and shared semantic
// rules of the captured SDPA family (see sdpa_common.h for the contracts).
#include "ir/ops/sdpa_common.h"

#include <cmath>

#include "ir/scale_layout.h"

namespace opgraph::ops::sdpa {
namespace {

std::string str(std::int64_t x) { return std::to_string(x); }
std::string dims_str(const Dims& d) { return InferContext::dims_str(d); }

bool is_fp8_type(DataType t) { return t == DataType::FP8_E4M3 || t == DataType::FP8_E5M2; }

std::optional<std::int64_t> opt_int(const Node& n, std::string_view key) {
  if (!n.attr(key)) return std::nullopt;
  return n.get_int(key);
}

// A tensor that is broadcastable to `target` with the same rank: every axis
// equals the target's or is 1.
bool broadcastable_to(const Dims& d, const Dims& target) {
  if (d.size() != target.size()) return false;
  for (std::size_t i = 0; i < d.size(); ++i)
    if (d[i] != target[i] && d[i] != 1) return false;
  return true;
}

Status check_int_scalar(const InferContext& c, ops::PortRef port, std::string_view rule) {
  DataType t = c.dtype(port);
  if (t != DataType::INT32 && t != DataType::INT64)
    return fail_rule(c, port, rule, "must be INT32 or INT64, got " + std::string(to_string(t)));
  if (c.in(port)->element_count() != 1)
    return fail_rule(c, port, rule, "must hold one element, got dims " + dims_str(c.dims(port)));
  return Status::ok();
}

// The ragged (THD) offsets of one tensor: need the padding mask, b + 1 entries.
Status check_ragged(const InferContext& c, ops::PortRef port, const TensorPtr& t, const Geometry& g) {
  if (!t || !t->get_ragged_offset()) return Status::ok();
  if (!ops::attr::use_padding_mask(c.node()))
    return fail_rule(c, port, "ragged_needs_padding_mask",
                     "a ragged (THD) offset needs use_padding_mask with SEQ_LEN_Q / SEQ_LEN_KV");
  const TensorPtr& r = t->get_ragged_offset();
  if (r->element_count() != g.b + 1)
    return fail_rule(c, port, "ragged_offset_shape",
                     "ragged offset tensor '" + r->get_name() + "' must hold b + 1 = " + str(g.b + 1) +
                         " offsets, got dims " + dims_str(r->get_dim()));
  return Status::ok();
}

Status check_masks(const InferContext& c, const Geometry& g) {
  const Node& n = c.node();
  bool causal = ops::attr::use_causal_mask(n), causal_br = ops::attr::use_causal_mask_bottom_right(n);
  if (causal && causal_br)
    return fail_attr_rule(c, "use_causal_mask_bottom_right", "causal_exclusive",
                          "use_causal_mask and use_causal_mask_bottom_right cannot both be set");
  if (n.attr_is_set("diagonal_alignment")) {
    using DA = ops::DiagonalAlignment;
    const std::optional<DA> a = ops::attr::diagonal_alignment(n);
    if (a && ((causal && *a == DA::BOTTOM_RIGHT) || (causal_br && *a == DA::TOP_LEFT)))
      return fail_attr_rule(c, "diagonal_alignment", "causal_alignment_conflict",
                            "'" + std::string(ops::to_string(*a)) + "' contradicts the causal mask's own alignment");
  }
  auto right = opt_int(n, "diagonal_band_right_bound");
  if (right && (causal || causal_br) && *right != 0)
    return fail_attr_rule(c, "diagonal_band_right_bound", "causal_right_bound_conflict",
                          "a causal mask is right bound 0, got " + str(*right));
  if (right && *right < 0)
    return fail_attr_rule(c, "diagonal_band_right_bound", "band_bounds", "must be >= 0, got " + str(*right));
  auto left = opt_int(n, "diagonal_band_left_bound"), window = opt_int(n, "sliding_window_length");
  if (left && window && *left != *window)
    return fail_attr_rule(c, "sliding_window_length", "sliding_window_conflict",
                          "sliding_window_length " + str(*window) + " is the left bound, but diagonal_band_left_bound "
                              "is " + str(*left));
  for (const char* key : {"diagonal_band_left_bound", "sliding_window_length"})
    if (auto l = opt_int(n, key); l && *l < 1)
      return fail_attr_rule(c, key, "band_bounds", "the left bound keeps keys with i - j < bound, so it must be >= 1, "
                                                   "got " + str(*l));
  Band band = band_of(n);
  if (band.bottom_right && (band.left || band.right) && g.s_q > g.s_kv)
    return fail_rule(c, ops::in::Q, "bottom_right_sq_le_skv",
                     "bottom-right alignment needs s_q <= s_kv, got s_q = " + str(g.s_q) + ", s_kv = " + str(g.s_kv));
  return Status::ok();
}

Status check_dropout(InferContext& c, Variant v, const Geometry& g) {
  const Node& n = c.node();
  const Dims full = {g.b, g.h_q, g.s_q, g.s_kv};
  bool has_p = n.attr("dropout_probability") != nullptr;
  double p = ops::attr::dropout_probability(n).value_or(0.0);
  if (has_p && !(p >= 0.0 && p < 1.0))
    return fail_attr_rule(c, "dropout_probability", "dropout_range", "must be in [0, 1), got " + std::to_string(p));
  for (const char* port : {"Seed", "Offset"}) {
    if (has_p && p > 0.0 && !c.has(port))
      return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, port,
                         "rule dropout_needs_seed_offset: dropout_probability > 0 needs Seed and Offset");
    if (c.has(port)) {
      if (!has_p) return fail_rule(c, port, "seed_without_dropout", "is bound but dropout_probability is not set");
      OPGRAPH_CHECK(check_int_scalar(c, port, "rng_scalar"));
    }
  }
  bool mask = c.has(ops::in::Dropout_mask), scale = c.has(ops::in::Dropout_scale);
  if (mask != scale)
    return fail_rule(c, mask ? "Dropout_mask" : "Dropout_scale", "dropout_mask_pair",
                     "Dropout_mask and Dropout_scale are bound together or not at all");
  if (mask && has_p)
    return fail_rule(c, ops::in::Dropout_mask, "dropout_exclusive",
                     "a user dropout mask excludes dropout_probability (pick one dropout form)");
  if (mask) {
    if (!broadcastable_to(c.dims(ops::in::Dropout_mask), full))
      return fail_rule(c, ops::in::Dropout_mask, "dropout_mask_shape",
                       "must be broadcastable to [b, h_q, s_q, s_kv] = " + dims_str(full) + ", got " +
                           dims_str(c.dims(ops::in::Dropout_mask)));
    OPGRAPH_CHECK(check_scalar(c, ops::in::Dropout_scale));
  }
  if (c.has(ops::in::Dropout_scale_inv)) {
    if (!mask) return fail_rule(c, ops::in::Dropout_scale_inv, "dropout_mask_pair", "needs Dropout_mask and Dropout_scale");
    OPGRAPH_CHECK(check_scalar(c, ops::in::Dropout_scale_inv));
  }
  // The fp8 / MXFP8 backward records have no RNG_DUMP (nor the attribute).
  const bool rng_dump = v != Variant::FP8_BWD && v != Variant::MXFP8_BWD && ops::attr::rng_dump(n);
  if (rng_dump && !(has_p && p > 0.0))
    return fail_attr_rule(c, "rng_dump", "rng_dump_needs_dropout", "RNG_DUMP needs dropout_probability > 0");
  (void)v;
  return c.set_output(ops::out::RNG_DUMP, full, DataType::FLOAT);
}

}  // namespace

bool is_backward(Variant v) { return v == Variant::BWD || v == Variant::FP8_BWD || v == Variant::MXFP8_BWD; }
bool is_fp8(Variant v) { return v == Variant::FP8_FWD || v == Variant::FP8_BWD; }
bool is_mxfp8(Variant v) { return v == Variant::MXFP8_FWD || v == Variant::MXFP8_BWD; }

std::int64_t round_up(std::int64_t x, std::int64_t m) { return (x + m - 1) / m * m; }

Band band_of(const Node& n) {
  Band b;
  bool causal = ops::attr::use_causal_mask(n), causal_br = ops::attr::use_causal_mask_bottom_right(n);
  b.bottom_right = causal_br || ops::attr::diagonal_alignment(n) == ops::DiagonalAlignment::BOTTOM_RIGHT;
  b.right = opt_int(n, "diagonal_band_right_bound");
  if (causal || causal_br) b.right = 0;
  b.left = opt_int(n, "diagonal_band_left_bound");
  if (!b.left) b.left = opt_int(n, "sliding_window_length");
  return b;
}

double attn_scale_attr(const Node& n) { return ops::attr::attn_scale(n).value_or(1.0); }

double alibi_slope(std::int64_t h, std::int64_t heads) {
  // n: the largest power of two <= heads. Heads 0..n-1 take 2^(-8 (h + 1) / n); the rest take
  // every other slope of the 2n-head sequence, 2^(-4 (2 (h - n) + 1) / n).
  std::int64_t n = 1;
  while (n * 2 <= heads) n *= 2;
  const double e = h < n ? static_cast<double>(h + 1) : 0.5 * static_cast<double>(2 * (h - n) + 1);
  return std::exp2(-8.0 * e / static_cast<double>(n));
}

Status fail_rule(const InferContext& c, ops::PortRef port, std::string_view rule, const std::string& what) {
  return c.fail(port, "rule " + std::string(rule) + ": " + what);
}
Status fail_attr_rule(const InferContext& c, std::string_view attr, std::string_view rule, const std::string& what) {
  return c.fail_attr(attr, "rule " + std::string(rule) + ": " + what);
}

Status check_layout(const InferContext& c, ops::PortRef port, bool output) {
  TensorPtr t = output ? c.out(port) : c.in(port);
  if (!t) return output ? Status::ok() : c.require(port);
  if (output && !t->stride_set_by_user()) return Status::ok();  // inferred strides are packed
  if (t->rank() != 4)
    return fail_rule(c, port, "layout_rank4", "must be 4-D [b, h, s, d], got " + dims_str(t->get_dim()));
  if (!t->get_stride().empty() && t->get_stride().back() != 1)
    return fail_rule(c, port, "layout_last_stride",
                     "the last (d) stride must be 1, got strides " + dims_str(t->get_stride()));
  return Status::ok();
}

Status check_scalar(const InferContext& c, ops::PortRef port) {
  OPGRAPH_CHECK(c.require(port));
  if (c.dtype(port) != DataType::FLOAT)
    return fail_rule(c, port, "scale_scalar", "must be FLOAT, got " + std::string(to_string(c.dtype(port))));
  if (c.in(port)->element_count() != 1)
    return fail_rule(c, port, "scale_scalar", "must hold one element ([1, 1, 1, 1]), got dims " + dims_str(c.dims(port)));
  return Status::ok();
}

std::vector<std::int64_t> mx_descale_dims(const std::vector<std::int64_t>& data, int block_axis) {
  Dims d = data;
  int other = block_axis == 3 ? 2 : 3;
  d[block_axis] = round_up((data[block_axis] + kMxBlock - 1) / kMxBlock, 4);
  d[other] = round_up(data[other], 128);
  return d;
}

Status check_mx_descale(const InferContext& c, ops::PortRef port, ops::PortRef data_port, int block_axis) {
  OPGRAPH_CHECK(c.require(port));
  TensorPtr t = c.in(port);
  if (t->get_data_type() != DataType::FP8_E8M0)
    return fail_rule(c, port, "mxfp8_descale_dtype",
                     "an MXFP8 descale tensor must be FP8_E8M0, got " + std::string(to_string(t->get_data_type())));
  if (t->get_reordering_type() != TensorReordering::F8_128x4)
    return fail_rule(c, port, "mxfp8_descale_reordering",
                     "an MXFP8 descale tensor must use F8_128x4 reordering, got " +
                         std::string(to_string(t->get_reordering_type())));
  Dims want = mx_descale_dims(c.dims(data_port), block_axis);
  if (t->get_dim() != want)
    return fail_rule(c, port, "mxfp8_descale_shape",
                     "blocks of 32 along axis " + str(block_axis) + " of " + std::string(data_port.name) + " " +
                         dims_str(c.dims(data_port)) + " need dims " + dims_str(want) +
                         " (block axis padded to 4, the other to 128), got " + dims_str(t->get_dim()));
  return check_swizzle_128x4(c, port, static_cast<std::size_t>(block_axis));  // the block axis contiguous
}

Status read_geometry(InferContext& c, Variant v, Geometry& g) {
  for (const char* p : {"Q", "K", "V"}) OPGRAPH_CHECK(check_layout(c, p));
  for (const char* p : {"Q", "K", "V"}) {
    DataType t = c.dtype(p);
    if (is_fp8(v) || is_mxfp8(v)) {
      if (!is_fp8_type(t))
        return fail_rule(c, p, "fp8_io_dtype", "must be FP8_E4M3 or FP8_E5M2, got " + std::string(to_string(t)));
    } else if (std::string_view(p) == "Q") {
      OPGRAPH_CHECK(c.require_dtype_in(ops::in::Q, {DataType::HALF, DataType::BFLOAT16, DataType::FLOAT, DataType::DOUBLE}));
    } else if (t != c.dtype(ops::in::Q)) {
      return fail_rule(c, p, "same_io_dtype",
                       "must have Q's data type " + std::string(to_string(c.dtype(ops::in::Q))) + ", got " +
                           std::string(to_string(t)));
    }
  }
  const Dims &q = c.dims(ops::in::Q), &k = c.dims(ops::in::K), &vv = c.dims(ops::in::V);
  g.b = q[0]; g.h_q = q[1]; g.s_q = q[2]; g.d_qk = q[3];
  g.h_k = k[1]; g.h_v = vv[1]; g.d_v = vv[3];
  if (k[3] != g.d_qk)
    return fail_rule(c, ops::in::K, "d_qk_match", "K's head dim " + str(k[3]) + " must equal Q's " + str(g.d_qk));
  const Node& n = c.node();
  g.paged = c.has(ops::in::Page_table_K) || c.has(ops::in::Page_table_V);
  if (g.paged) {
    if (!c.has(ops::in::Page_table_K) || !c.has(ops::in::Page_table_V))
      return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, c.has(ops::in::Page_table_K) ? "Page_table_V" : "Page_table_K",
                         "rule paged_tables_pair: paged K/V need both Page_table_K and Page_table_V");
    auto max_s = opt_int(n, "paged_attention_max_seq_len_kv");
    if (!max_s)
      return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, ops::in::Page_table_K,
                         "rule paged_max_seq_len_kv: paged K/V need paged_attention_max_seq_len_kv");
    if (*max_s < 1)
      return fail_attr_rule(c, "paged_attention_max_seq_len_kv", "paged_max_seq_len_kv",
                            "must be >= 1, got " + str(*max_s));
    g.s_kv = *max_s;
    g.block_size = k[2];
    if (vv[2] != k[2])
      return fail_rule(c, ops::in::V, "paged_block_size",
                       "K and V caches [num_blocks, h, block_size, d] must share block_size, got K " + dims_str(k) +
                           ", V " + dims_str(vv));
    std::int64_t pages = (g.s_kv + g.block_size - 1) / g.block_size;
    for (const char* t : {"Page_table_K", "Page_table_V"}) {
      OPGRAPH_CHECK(c.require_integer_index(t));
      const Dims& d = c.dims(t);
      if (d.size() != 4 || d[0] != g.b || d[1] != 1 || d[3] != 1 || d[2] < pages)
        return fail_rule(c, t, "paged_table_shape",
                         "must be [b, 1, >= ceil(max_seq_len_kv / block_size), 1] = [" + str(g.b) + ", 1, >=" +
                             str(pages) + ", 1], got " + dims_str(d));
    }
  } else {
    if (n.attr("paged_attention_max_seq_len_kv"))
      return fail_attr_rule(c, "paged_attention_max_seq_len_kv", "paged_attr_without_tables",
                            "is set but no page tables are bound");
    g.s_kv = k[2];
    for (const char* p : {"K", "V"})
      if (c.dims(p)[0] != g.b)
        return fail_rule(c, p, "batch_match", "batch " + str(c.dims(p)[0]) + " must equal Q's " + str(g.b));
    if (vv[2] != k[2])
      return fail_rule(c, ops::in::V, "kv_seq_match", "V's s_kv " + str(vv[2]) + " must equal K's " + str(k[2]));
  }
  for (auto [p, h] : {std::pair{"K", g.h_k}, std::pair{"V", g.h_v}})
    if (h < 1 || g.h_q % h != 0)
      return fail_rule(c, p, "gqa_head_ratio",
                       "h_q = " + str(g.h_q) + " must be a multiple of its head count " + str(h) + " (GQA/MQA)");
  if (is_backward(v)) {
    const Dims o = {g.b, g.h_q, g.s_q, g.d_v};
    for (const char* p : {"O", "dO"}) {
      OPGRAPH_CHECK(check_layout(c, p));
      if (c.dims(p) != o)
        return fail_rule(c, p, "o_dims", "must be [b, h_q, s_q, d_v] = " + dims_str(o) + ", got " + dims_str(c.dims(p)));
    }
    const Dims st = {g.b, g.h_q, g.s_q, 1};
    OPGRAPH_CHECK(c.require(ops::in::Stats));
    if (c.dims(ops::in::Stats) != st || (c.dtype(ops::in::Stats) != DataType::FLOAT && c.dtype(ops::in::Stats) != DataType::DOUBLE))
      return fail_rule(c, ops::in::Stats, "stats_dims",
                       "must be FLOAT (or DOUBLE) [b, h_q, s_q, 1] = " + dims_str(st) + ", got " +
                           std::string(to_string(c.dtype(ops::in::Stats))) + " " + dims_str(c.dims(ops::in::Stats)));
  }
  return Status::ok();
}

Status check_common(InferContext& c, Variant v, const Geometry& g) {
  const Node& n = c.node();
  const Dims full = {g.b, g.h_q, g.s_q, g.s_kv};
  if (c.has(ops::in::Attn_scale)) {
    if (n.attr_is_set("attn_scale"))
      return fail_rule(c, ops::in::Attn_scale, "attn_scale_once", "set either the Attn_scale tensor or the attn_scale "
                                                             "attribute, not both");
    OPGRAPH_CHECK(c.require_floating(ops::in::Attn_scale));
    if (c.in(ops::in::Attn_scale)->element_count() != 1)
      return fail_rule(c, ops::in::Attn_scale, "attn_scale_scalar", "must hold one element, got " + dims_str(c.dims(ops::in::Attn_scale)));
  }
  if (c.has(ops::in::Bias)) {
    OPGRAPH_CHECK(c.require_floating(ops::in::Bias));
    if (!broadcastable_to(c.dims(ops::in::Bias), full))
      return fail_rule(c, ops::in::Bias, "bias_broadcast",
                       "must be 4-D and broadcastable to [b, h_q, s_q, s_kv] = " + dims_str(full) + ", got " +
                           dims_str(c.dims(ops::in::Bias)));
  }
  if (v == Variant::BWD && ops::SdpaBackward::dbias(n) && !c.has(ops::in::Bias))  // only sdpa_backward has dBias
    return fail_attr_rule(c, "dbias", "dbias_needs_bias", "dBias needs a Bias input");
  bool padding = ops::attr::use_padding_mask(n);
  for (const char* p : {"SEQ_LEN_Q", "SEQ_LEN_KV"}) {
    if (padding && !c.has(p))
      return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, p,
                         "rule padding_needs_seq_len: use_padding_mask needs SEQ_LEN_Q and SEQ_LEN_KV");
    if (!c.has(p)) continue;
    if (!padding)
      return fail_rule(c, p, "seq_len_without_padding_mask", "is bound but use_padding_mask is not set");
    OPGRAPH_CHECK(c.require_integer_index(p));
    if (c.in(p)->element_count() != g.b)
      return fail_rule(c, p, "seq_len_shape", "must hold one length per batch entry (b = " + str(g.b) + "), got dims " +
                                                  dims_str(c.dims(p)));
  }
  if (g.paged && !padding)
    return fail_rule(c, ops::in::Page_table_K, "paged_needs_padding_mask",
                     "paged K/V need use_padding_mask with SEQ_LEN_Q / SEQ_LEN_KV");
  const bool bwd = is_backward(v);
  for (const char* p : {"Q", "K", "V", "O", "dO"}) {
    if (g.paged && (std::string_view(p) == "K" || std::string_view(p) == "V") && c.in(p) &&
        c.in(p)->get_ragged_offset())
      return fail_rule(c, p, "ragged_paged_cache", "a paged cache cannot carry a ragged offset");
    OPGRAPH_CHECK(check_ragged(c, p, c.in(p), g));
  }
  for (const char* p : {"O", "Stats", "dQ", "dK", "dV"})
    if (TensorPtr t = c.out(p)) OPGRAPH_CHECK(check_ragged(c, p, t, g));
  OPGRAPH_CHECK(check_masks(c, g));
  OPGRAPH_CHECK(check_dropout(c, v, g));
  if (c.has(ops::in::SINK_TOKEN)) {
    OPGRAPH_CHECK(c.require_floating(ops::in::SINK_TOKEN));
    if (c.dims(ops::in::SINK_TOKEN) != Dims{1, g.h_q, 1, 1})
      return fail_rule(c, ops::in::SINK_TOKEN, "sink_token_shape",
                       "must be [1, h_q, 1, 1] = [1, " + str(g.h_q) + ", 1, 1], got " + dims_str(c.dims(ops::in::SINK_TOKEN)));
  }
  if (bwd && ops::attr::dsink_token(n) && !c.has(ops::in::SINK_TOKEN))  // the backward records declare it
    return fail_attr_rule(c, "dsink_token", "dsink_needs_sink", "DSINK_TOKEN needs a SINK_TOKEN input");
  OPGRAPH_CHECK(c.set_output(ops::out::DSINK_TOKEN, {1, g.h_q, 1, 1}, DataType::FLOAT));
  using Impl = ops::Implementation;
  const Impl impl = bwd ? Impl::AUTO : ops::attr::implementation(n);  // the forward records declare it
  if (c.has(ops::in::Block_mask)) {
    if (impl == Impl::COMPOSITE)
      return fail_rule(c, ops::in::Block_mask, "block_mask_unified_only", "a block mask needs implementation UNIFIED or AUTO");
    OPGRAPH_CHECK(c.require_dtype_in(ops::in::Block_mask, {DataType::UINT8, DataType::INT8, DataType::BOOLEAN}));
    const Dims want = {g.b, g.h_q, (g.s_q + 127) / 128, (g.s_kv + 127) / 128};
    if (!broadcastable_to(c.dims(ops::in::Block_mask), want))
      return fail_rule(c, ops::in::Block_mask, "block_mask_shape",
                       "one flag per 128x128 tile: must be broadcastable to " + dims_str(want) + ", got " +
                           dims_str(c.dims(ops::in::Block_mask)));
  }
  if (impl == Impl::UNIFIED && ops::attr::dropout_probability(n).value_or(0.0) > 0.0 && ops::attr::generate_stats(n))
    return fail_attr_rule(c, "implementation", "unified_dropout_stats",
                          "UNIFIED does not combine dropout with generate_stats");
  if (bwd)
    for (const char* key : {"max_total_seq_len_q", "max_total_seq_len_kv"})
      if (auto m = opt_int(n, key); m && *m < 1)
        return fail_attr_rule(c, key, "max_total_seq_len", "must be >= 1, got " + str(*m));
  return Status::ok();
}

Status set_forward_outputs(InferContext& c, const Geometry& g, DataType o_dtype) {
  OPGRAPH_CHECK(c.set_output(ops::out::O, {g.b, g.h_q, g.s_q, g.d_v}, o_dtype));
  OPGRAPH_CHECK(check_layout(c, ops::out::O, true));
  for (const char* p : {"Stats", "Max", "Sum_exp"})
    OPGRAPH_CHECK(c.set_output(p, {g.b, g.h_q, g.s_q, 1}, DataType::FLOAT));
  return Status::ok();
}

Status set_backward_outputs(InferContext& c, DataType grad_dtype) {
  for (auto [out, in] : {std::pair{"dQ", "Q"}, std::pair{"dK", "K"}, std::pair{"dV", "V"}}) {
    OPGRAPH_CHECK(c.set_output(out, c.dims(in), grad_dtype));
    OPGRAPH_CHECK(check_layout(c, out, true));
  }
  if (c.has(ops::in::Bias)) OPGRAPH_CHECK(c.set_output(ops::out::dBias, c.dims(ops::in::Bias)));
  return Status::ok();
}

TensorPtr pick(std::string_view op, const std::vector<TensorPtr>& outs, std::string_view port) {
  const OpSpec* spec = find_op_spec(op);
  int i = spec ? spec->output_index(port) : -1;
  return i < 0 || static_cast<std::size_t>(i) >= outs.size() ? nullptr : outs[static_cast<std::size_t>(i)];
}

std::vector<AttrSpec> forward_attrs() {
  return {
      {"generate_stats", AttrType::BOOL, AttrValue{false}},
      {"score_max", AttrType::BOOL, AttrValue{false}},
      {"score_sum_exp", AttrType::BOOL, AttrValue{false}},
      {"attn_scale", AttrType::FLOAT, std::nullopt},
      {"use_alibi_mask", AttrType::BOOL, AttrValue{false}},
      {"use_padding_mask", AttrType::BOOL, AttrValue{false}},
      {"use_causal_mask", AttrType::BOOL, AttrValue{false}},
      {"use_causal_mask_bottom_right", AttrType::BOOL, AttrValue{false}},
      {"diagonal_alignment", AttrType::ENUM, std::nullopt, false, {"TOP_LEFT", "BOTTOM_RIGHT"}},
      {"diagonal_band_left_bound", AttrType::INT, std::nullopt},
      {"diagonal_band_right_bound", AttrType::INT, std::nullopt},
      {"sliding_window_length", AttrType::INT, std::nullopt},
      {"dropout_probability", AttrType::FLOAT, std::nullopt},
      {"rng_dump", AttrType::BOOL, AttrValue{false}},
      {"paged_attention_max_seq_len_kv", AttrType::INT, std::nullopt},
      {"implementation", AttrType::ENUM, AttrValue{std::string("AUTO")}, false, {"AUTO", "COMPOSITE", "UNIFIED"}},
      {"unfuse_fma", AttrType::BOOL, AttrValue{false}},
  };
}

std::vector<AttrSpec> backward_attrs() {
  std::vector<AttrSpec> a;
  for (auto& s : forward_attrs()) {
    std::string_view nm = s.name;
    if (nm == "generate_stats" || nm == "score_max" || nm == "score_sum_exp" || nm == "paged_attention_max_seq_len_kv" ||
        nm == "implementation" || nm == "unfuse_fma")
      continue;
    a.push_back(s);
  }
  a.push_back({"dbias", AttrType::BOOL, AttrValue{false}});
  a.push_back({"dsink_token", AttrType::BOOL, AttrValue{false}});
  a.push_back({"max_total_seq_len_q", AttrType::INT, std::nullopt});
  a.push_back({"max_total_seq_len_kv", AttrType::INT, std::nullopt});
  a.push_back({"use_deterministic_algorithm", AttrType::BOOL, AttrValue{false}});
  return a;
}

// Conditional outputs: each is attached only to outputs of records that declare its attribute.
bool wants_stats(const Node& n) { return ops::attr::generate_stats(n); }
bool wants_max(const Node& n) { return ops::attr::score_max(n); }
bool wants_sum_exp(const Node& n) { return ops::attr::score_sum_exp(n); }
bool wants_rng_dump(const Node& n) { return ops::attr::rng_dump(n); }
bool wants_dbias(const Node& n) { return n.input(ops::in::Bias) != nullptr && ops::attr::dbias(n); }
bool wants_dsink(const Node& n) { return n.input(ops::in::SINK_TOKEN) != nullptr && ops::attr::dsink_token(n); }

std::vector<PortArg> forward_optional(const SdpaInputs& in, bool with_block_mask) {
  std::vector<PortArg> r = {{"Attn_scale", in.attn_scale},     {"Bias", in.bias},
                            {"SEQ_LEN_Q", in.seq_len_q},       {"SEQ_LEN_KV", in.seq_len_kv},
                            {"Seed", in.seed},                 {"Offset", in.offset},
                            {"Dropout_mask", in.dropout_mask}, {"Dropout_scale", in.dropout_scale},
                            {"Page_table_K", in.page_table_k}, {"Page_table_V", in.page_table_v}};
  if (with_block_mask) r.emplace_back("Block_mask", in.block_mask);
  r.emplace_back("SINK_TOKEN", in.sink_token);
  return r;
}
std::vector<PortArg> backward_optional(const SdpaBackwardInputs& in) {
  return {{"Attn_scale", in.attn_scale},     {"Bias", in.bias},           {"SEQ_LEN_Q", in.seq_len_q},
          {"SEQ_LEN_KV", in.seq_len_kv},     {"Seed", in.seed},           {"Offset", in.offset},
          {"Dropout_mask", in.dropout_mask}, {"Dropout_scale", in.dropout_scale},
          {"Dropout_scale_inv", in.dropout_scale_inv}, {"SINK_TOKEN", in.sink_token}};
}
void append(std::vector<PortArg>& a, std::vector<PortArg> b) {
  for (auto& x : b) a.push_back(std::move(x));
}
SdpaOutputs forward_outputs(std::string_view op, const std::vector<TensorPtr>& outs) {
  SdpaOutputs r;
  r.O = pick(op, outs, "O");
  r.Stats = pick(op, outs, "Stats");
  r.Max = pick(op, outs, "Max");
  r.Sum_exp = pick(op, outs, "Sum_exp");
  r.RNG_DUMP = pick(op, outs, "RNG_DUMP");
  r.Amax_S = pick(op, outs, "Amax_S");
  r.Amax_O = pick(op, outs, "Amax_O");
  return r;
}
SdpaBackwardOutputs backward_outputs(std::string_view op, const std::vector<TensorPtr>& outs) {
  SdpaBackwardOutputs r;
  r.dQ = pick(op, outs, "dQ");
  r.dK = pick(op, outs, "dK");
  r.dV = pick(op, outs, "dV");
  r.dBias = pick(op, outs, "dBias");
  r.RNG_DUMP = pick(op, outs, "RNG_DUMP");
  r.DSINK_TOKEN = pick(op, outs, "DSINK_TOKEN");
  r.Amax_dQ = pick(op, outs, "Amax_dQ");
  r.Amax_dK = pick(op, outs, "Amax_dK");
  r.Amax_dV = pick(op, outs, "Amax_dV");
  r.Amax_dP = pick(op, outs, "Amax_dP");
  return r;
}

}  // namespace opgraph::ops::sdpa
