// engines/cudnn/lowering_sdpa.cpp — the SDPA ops lowered to cuDNN backend
// descriptors (as data, like the rest of the lowering):
//  * sdpa through the native OPERATION_SDPA_FWD when the loaded cuDNN and the
//    graph allow it (>= 9.13.1; seq lens / paged K/V >= 9.15; Block_mask >= 9.14;
//    no bias, ALiBi, band masks, dropout, sink, Max/Sum_exp), otherwise as the
//    composite cudnn-frontend expands it (bmm1 -> scale -> bias -> ALiBi ->
//    padding mask -> diagonal band masks -> softmax with Stats / Max / Sum_exp
//    -> bmm2), which cuDNN's fused attention engines recognise;
//  * sdpa_backward as its composite (lowering_sdpa_bwd.cpp; ALiBi, dBias; a
//    SINK_TOKEN enters only through Stats, plus the DSINK_TOKEN reduction);
//  * everything else declines naming the op, node, port or attribute and a rule.
// Also the Lowerer helpers for tensors the lowering introduces (fresh uids).
#include <algorithm>
#include <cmath>
#include <limits>

#include "engines/cudnn/lowering_sdpa_internal.h"
#include "ir/ops/sdpa_common.h"

namespace opgraph::engines::cudnn::detail {

Result<int> Lowerer::new_tensor(const NewTensor& t) {
  if (next_uid_ < 0) {  // shared with virtual_like: above every uid of the graph and the plan
    std::int64_t top = 0;
    for (const auto& gt : g_.tensors()) {
      if (gt->has_uid()) top = std::max(top, gt->get_uid());
      if (const auto& r = gt->get_ragged_offset(); r && r->has_uid()) top = std::max(top, r->get_uid());
    }
    for (const auto& tr : plan_.tensors) top = std::max(top, tr.uid);
    next_uid_ = top + 1;
  }
  TensorRecord tr;
  tr.uid = next_uid_++;
  tr.is_virtual = t.is_virtual && !t.scalar;
  tr.by_value = t.scalar.has_value();
  tr.dims = t.dims;
  tr.strides = t.strides.size() == t.dims.size() ? t.strides : Tensor::packed_strides(t.dims);
  if (tr.by_value && !scalar_bytes(*t.scalar, t.dt, tr.scalar_bytes))
    return Status{ErrorCode::INTERNAL_ERROR, "cudnn lowering: no scalar encoding for " + t.name};
  int i = add(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor '" + t.name + "' (uid " + std::to_string(tr.uid) + ", lowering)");
  set_int(i, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, to_cudnn_data_type(t.dt));
  set_ints(i, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, tr.dims);
  set_ints(i, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, tr.strides);
  set_int(i, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, tr.uid);
  set_int(i, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16);
  set_int(i, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, tr.is_virtual);
  if (tr.by_value) set_int(i, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1);
  if (t.ragged_record >= 0) set_refs(i, CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, {t.ragged_record});
  if (!tr.is_virtual && !tr.by_value) {
    std::int64_t span = 1;
    for (std::size_t k = 0; k < tr.dims.size(); ++k) span += (tr.dims[k] - 1) * tr.strides[k];
    ScratchTensor s{tr.uid, span * static_cast<std::int64_t>(bits_of(t.dt) / 8), plan_.scratch_bytes};
    plan_.scratch_bytes += (s.bytes + 255) / 256 * 256;
    plan_.scratch.push_back(s);
  }
  tr.record = i;
  plan_.tensors.push_back(std::move(tr));
  return i;
}

void Lowerer::retarget(int record, std::vector<std::int64_t> dims, std::vector<std::int64_t> strides) {
  for (auto& a : rec(record).attrs) {
    if (a.name == CUDNN_ATTR_TENSOR_DIMENSIONS) a.ints = dims;
    if (a.name == CUDNN_ATTR_TENSOR_STRIDES) a.ints = strides;
  }
  for (auto& t : plan_.tensors)
    if (t.record == record) {
      t.dims = std::move(dims);
      t.strides = std::move(strides);
    }
}

std::vector<std::int64_t> Lowerer::record_dims(int record) const {
  for (const auto& t : plan_.tensors)
    if (t.record == record) return t.dims;
  return {};
}

std::vector<std::int64_t> Lowerer::record_strides(int record) const {
  for (const auto& t : plan_.tensors)
    if (t.record == record) return t.strides;
  return {};
}

std::int64_t Lowerer::uid_of(int record) const {
  for (const auto& t : plan_.tensors)
    if (t.record == record) return t.uid;
  return -1;
}

namespace sdpa {
namespace {

bool is_fp8_op(std::string_view op) { return op != "sdpa" && op != "sdpa_backward"; }

Status decline_rule(const Node& n, const std::string& what, std::string_view rule, const std::string& why) {
  return Lowerer::decline(n, what + ": rule " + std::string(rule) + ": " + why);
}

// The declines every variant shares; the first that applies is returned.
Status check_lowerable(const Node& n, const Geom& g, bool backward, int sm_version) {
  if (is_fp8_op(n.op()))
    return decline_rule(n, "op '" + std::string(n.op()) + "'", "sdpa_fp8_not_lowered",
                        "the fp8 / MXFP8 attention variants (per-tensor and block scales, amax outputs) are not "
                        "lowered to the cuDNN backend");
  if (g.io != DataType::HALF && g.io != DataType::BFLOAT16)
    return decline_rule(n, "port 'Q'", "sdpa_io_half",
                        "cuDNN fused attention takes HALF or BFLOAT16 Q/K/V, got " + std::string(to_string(g.io)));
  if (n.attr_is_set("dropout_probability") && ops::attr::dropout_probability(n).value_or(0.0) > 0.0)
    return decline_rule(n, "attribute 'dropout_probability'", "dropout_not_lowered",
                        "dropout (Philox RNG masks) is not lowered to the cuDNN backend");
  if (n.input(ops::in::Dropout_mask))
    return decline_rule(n, "port 'Dropout_mask'", "dropout_not_lowered", "a user dropout mask is not lowered");
  if (backward) {
    // backward: sdpa_backward only (fp8 ops return earlier). On Hopper cudnn-frontend's deterministic
    // backward is the dP-workspace composite (lowering_sdpa_bwd.cpp); elsewhere it pins engines and knobs.
    if (ops::SdpaBackward::use_deterministic_algorithm(n) && sm_version / 10 != 9)
      return decline_rule(n, "attribute 'use_deterministic_algorithm'", "deterministic_not_lowered",
                          "the deterministic backward is lowered for Hopper (sm_9x) only, as cudnn-frontend's "
                          "dP-workspace composite; elsewhere it pins engines and knobs (target: " +
                              (sm_version ? "sm_" + std::to_string(sm_version) : std::string("unknown")) + ")");
  } else {
    // cudnn-frontend's composite softmax gives Stats alone, or Max and Sum_exp together (not with Stats).
    const bool mx = ops::Sdpa::score_max(n), se = ops::Sdpa::score_sum_exp(n);  // the fp8 ops returned above
    if (mx != se)
      return decline_rule(n, std::string("attribute '") + (mx ? "score_max" : "score_sum_exp") + "'",
                          "max_sum_exp_together", "the composite softmax outputs Max and Sum_exp together or neither");
    if (mx && n.output(ops::out::Stats))
      return decline_rule(n, "attribute 'generate_stats'", "stats_or_max_sum_exp",
                          "the composite softmax outputs Stats, or Max and Sum_exp, not both");
    if (ops::Sdpa::unfuse_fma(n))
      return decline_rule(n, "attribute 'unfuse_fma'", "unfuse_fma_needs_9_21",
                          "UNFUSE_FMA is an attribute of the native SDPA operation from cuDNN 9.21");
  }
  return Status::ok();
}

// Why the native OPERATION_SDPA_FWD cannot take this node ("" = it can).
std::string native_refusal(const Node& n, const Geom& g, std::int64_t v) {
  if (v < 91301) return "the native SDPA operation needs cuDNN >= 9.13.1 (loaded: " + std::to_string(v) + ")";
  if (ops::Sdpa::implementation(n) == ops::Implementation::COMPOSITE) return "implementation is COMPOSITE";
  ops::sdpa::Band band = ops::sdpa::band_of(n);
  if (band.left || band.right) return "causal / sliding-window masks need the native subgraph of cuDNN >= 9.21";
  if (n.input(ops::in::Bias)) return "a Bias needs the native subgraph of cuDNN >= 9.21";
  if (ops::attr::use_alibi_mask(n)) return "ALiBi needs the native subgraph of cuDNN >= 9.21";
  if (n.input(ops::in::SINK_TOKEN)) return "a SINK_TOKEN in the native operation needs cuDNN >= 9.21";
  if (ops::Sdpa::score_max(n) || ops::Sdpa::score_sum_exp(n))
    return "the Max / Sum_exp outputs of the native operation need cuDNN >= 9.21";
  if ((g.padding || g.paged) && v < 91500) return "seq lens / paged K/V in the native operation need cuDNN >= 9.15";
  if (n.input(ops::in::Block_mask) && v < 91400) return "a block mask needs cuDNN >= 9.14";
  for (const char* p : {"Q", "K", "V"})
    if (n.input(p)->get_ragged_offset()) return "ragged (THD) tensors go through the composite";
  if (auto o = n.output(ops::out::O); o && o->get_ragged_offset()) return "ragged (THD) tensors go through the composite";
  return "";
}

Status lower_forward_native(Builder& bld) {
  Lowerer& l = bld.lowerer();
  const Node& n = bld.node();
  // A scale attribute travels as a by-value scalar (created first: references point backwards).
  const int scale = !n.input(ops::in::Attn_scale) && n.attr_is_set("attn_scale") ? bld.scalar_f(ops::attr::attn_scale(n).value_or(0.0)) : -1;
  OPGRAPH_CHECK(bld.status());
  int op = l.add(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, Lowerer::node_label(n) + " (native SDPA)", "sdpa");
  const std::pair<std::string_view, cudnnBackendAttributeName_t> ins[] = {
      {"Q", CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC},
      {"K", CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC},
      {"V", CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC},
      {"Attn_scale", CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC},
      {"Block_mask", CUDNN_ATTR_OPERATION_SDPA_FWD_BLOCK_MASK_DESC},
      {"Page_table_K", CUDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_KDESC},
      {"Page_table_V", CUDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_VDESC},
      {"SEQ_LEN_Q", CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC},
      {"SEQ_LEN_KV", CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KVDESC}};
  for (const auto& [port, attr] : ins) OPGRAPH_CHECK(l.bind_in(op, attr, n, port));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, n, ops::out::O));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, n, ops::out::Stats));
  if (scale >= 0) l.set_refs(op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, {scale});
  l.plan().operations.push_back(op);
  return Status::ok();
}

}  // namespace

Geom geom_of(const Node& n) {
  Geom g;
  const auto &q = n.input(ops::in::Q)->get_dim(), &k = n.input(ops::in::K)->get_dim(), &v = n.input(ops::in::V)->get_dim();
  g.b = q[0]; g.h_q = q[1]; g.s_q = q[2]; g.d_qk = q[3];
  g.h_k = k[1]; g.h_v = v[1]; g.d_v = v[3];
  g.paged = n.input(ops::in::Page_table_K) != nullptr;
  // Only the forward ops have page tables, and each declares the attribute.
  g.s_kv = g.paged ? ops::attr::paged_attention_max_seq_len_kv(n).value_or(0) : k[2];
  g.padding = ops::attr::use_padding_mask(n);
  g.io = n.input(ops::in::Q)->get_data_type();
  return g;
}

Dims packed(const Dims& d) { return Tensor::packed_strides(d); }

// The variants lowered but failing on the H200 (LoweringOptions::include_failed_variants).
Status check_not_failed(const Node& n, bool backward) {
  constexpr std::string_view rule = "failed_on_h200";
  const std::string see = " (bench/results/2026-11-30-cudnn-sdpa-h200.txt)";
  if (!backward && (ops::Sdpa::score_max(n) || ops::Sdpa::score_sum_exp(n)))
    return decline_rule(n, "attribute 'score_max'", rule,
                        "the composite's Max / Sum_exp outputs came back unwritten on cuDNN 9.14" + see);
  if (backward && n.output(ops::out::DSINK_TOKEN))
    return decline_rule(n, "output 'DSINK_TOKEN'", rule, "cuDNN 9.14 lists no engine for the DSINK_TOKEN backward" + see);
  if (backward && n.input(ops::in::SINK_TOKEN))
    return decline_rule(n, "port 'SINK_TOKEN'", rule,
                        "cuDNN 9.14 refused the sink backward's variant pack at execute (BAD_PARAM_NULL_POINTER)" + see);
  return Status::ok();
}

Status lower_sdpa_node(Lowerer& l, const Node& n) {
  if (is_fp8_op(n.op())) return check_lowerable(n, Geom{}, false, l.options().sm_version);
  const Geom g = geom_of(n);
  const bool backward = n.op() == "sdpa_backward";
  OPGRAPH_CHECK(check_lowerable(n, g, backward, l.options().sm_version));
  if (!l.options().include_failed_variants) OPGRAPH_CHECK(check_not_failed(n, backward));
  Builder bld(l, n);
  if (backward) return lower_backward_composite(bld, g);
  std::string why = native_refusal(n, g, l.options().cudnn_version);
  if (why.empty()) return lower_forward_native(bld);
  if (ops::Sdpa::implementation(n) == ops::Implementation::UNIFIED)
    return decline_rule(n, "attribute 'implementation'", "unified_not_available", "UNIFIED was asked for, but " + why);
  if (n.input(ops::in::Block_mask))
    return decline_rule(n, "port 'Block_mask'", "block_mask_native_only",
                        "a block mask exists only in the native SDPA operation, and " + why);
  return lower_forward_composite(bld, g);
}

}  // namespace sdpa

namespace {
const LoweringRecord kLowerings[] = {
    {ops::Sdpa::kIndex, sdpa::lower_sdpa_node, {}},
    {ops::SdpaBackward::kIndex, sdpa::lower_sdpa_node, {}},
    {ops::SdpaFp8::kIndex, sdpa::lower_sdpa_node, {}},
    {ops::SdpaFp8Backward::kIndex, sdpa::lower_sdpa_node, {}},
    {ops::SdpaMxfp8::kIndex, sdpa::lower_sdpa_node, {}},
    {ops::SdpaMxfp8Backward::kIndex, sdpa::lower_sdpa_node, {}},
};
}  // namespace

std::span<const LoweringRecord> sdpa_lowerings() { return kLowerings; }

}  // namespace opgraph::engines::cudnn::detail
