// ir/ops/sdpa_fp8.cpp — the fp8 records of the captured SDPA family and their
// builders: sdpa_fp8, sdpa_fp8_backward (per-tensor scales) and sdpa_mxfp8,
// sdpa_mxfp8_backward (MXFP8 block scales).
//
// Per-tensor fp8: a stored value x means x * Descale_X. Intermediates (the
// softmax probabilities "S", the softmax gradient "dP") are quantized with
// Scale_S / Scale_dP and dequantized with Descale_S / Descale_dP. An output is
// its real value times its Scale_* rounded to its declared type; each Amax_* is
// max |real value| BEFORE scaling, [1, 1, 1, 1] FLOAT.
// MXFP8: each run of 32 elements along the contraction axis of the matmul that
// reads the tensor shares one FP8_E8M0 scale (F8_128x4 reordering): Q, K along
// d (S = Q K^T); V along s_kv in the forward (O = P V) and along d in the
// backward (dP = dO V^T); the transposed copies Q_T, K_T, dO_T along s. O, dQ,
// dK, dV are high precision (HALF/BFLOAT16/FLOAT), reported with their Amax.
#include "ir/infer_context.h"
#include "ir/ops/groups.h"
#include "ir/ops/sdpa_common.h"
#include "opgraph/builders/sdpa.h"

namespace opgraph::ops::sdpa {
namespace {

const Dims kScalarDims = {1, 1, 1, 1};

// A user-set output data type must be in `allowed`; an unset one becomes `dflt`.
Status out_dtype(InferContext& c, std::string_view port, std::initializer_list<DataType> allowed, DataType dflt,
                 DataType* chosen) {
  TensorPtr t = c.out(port);
  *chosen = dflt;
  if (!t || !t->data_type_set_by_user()) return Status::ok();
  for (DataType a : allowed)
    if (a == t->get_data_type()) { *chosen = a; return Status::ok(); }
  std::string list;
  for (DataType a : allowed) list += (list.empty() ? "" : ", ") + std::string(to_string(a));
  return fail_rule(c, port, "fp8_output_dtype",
                   "must be one of {" + list + "}, got " + std::string(to_string(t->get_data_type())));
}

// High-precision type for MXFP8 outputs: the graph's io type when it is one, else BFLOAT16.
DataType high_precision_default(const InferContext& c) {
  DataType io = c.graph_context().io_data_type;
  return io == DataType::HALF || io == DataType::BFLOAT16 || io == DataType::FLOAT ? io : DataType::BFLOAT16;
}

Status check_scalars(const InferContext& c, std::initializer_list<const char*> ports) {
  for (const char* p : ports) {
    if (c.has(p) && c.dtype(p) == DataType::FP8_E8M0)
      return fail_rule(c, p, "fp8_descale_is_mxfp8",
                       "an FP8_E8M0 block scale makes this an MXFP8 graph: use the sdpa_mxfp8 ops");
    OPGRAPH_CHECK(check_scalar(c, p));
  }
  return Status::ok();
}

Status set_amax(InferContext& c, std::initializer_list<const char*> ports) {
  for (const char* p : ports) OPGRAPH_CHECK(c.set_output(p, kScalarDims, DataType::FLOAT));
  return Status::ok();
}

Status require_dtypes(const InferContext& c, std::string_view port, std::initializer_list<DataType> allowed,
                      std::string_view rule) {
  OPGRAPH_CHECK(c.require(port));
  for (DataType a : allowed)
    if (a == c.dtype(port)) return Status::ok();
  std::string list;
  for (DataType a : allowed) list += (list.empty() ? "" : ", ") + std::string(to_string(a));
  return fail_rule(c, port, rule, "must be one of {" + list + "}, got " + std::string(to_string(c.dtype(port))));
}

constexpr std::initializer_list<DataType> kFp8OrHalf = {DataType::FP8_E4M3, DataType::FP8_E5M2, DataType::HALF,
                                                        DataType::BFLOAT16};
constexpr std::initializer_list<DataType> kHigh = {DataType::HALF, DataType::BFLOAT16, DataType::FLOAT};
constexpr std::initializer_list<DataType> kFp8 = {DataType::FP8_E4M3, DataType::FP8_E5M2};

Status infer_fp8(InferContext& c) {
  Geometry g;
  OPGRAPH_CHECK(read_geometry(c, Variant::FP8_FWD, g));
  OPGRAPH_CHECK(check_scalars(c, {"Descale_Q", "Descale_K", "Descale_V", "Descale_S", "Scale_S", "Scale_O"}));
  OPGRAPH_CHECK(check_common(c, Variant::FP8_FWD, g));
  DataType o;
  OPGRAPH_CHECK(out_dtype(c, "O", kFp8OrHalf, c.dtype(ops::in::Q), &o));
  OPGRAPH_CHECK(set_forward_outputs(c, g, o));
  return set_amax(c, {"Amax_S", "Amax_O"});
}

Status infer_mxfp8(InferContext& c) {
  Geometry g;
  OPGRAPH_CHECK(read_geometry(c, Variant::MXFP8_FWD, g));
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_Q, ops::in::Q, 3));
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_K, ops::in::K, 3));
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_V, ops::in::V, 2));
  OPGRAPH_CHECK(check_common(c, Variant::MXFP8_FWD, g));
  DataType o;
  OPGRAPH_CHECK(out_dtype(c, "O", kHigh, high_precision_default(c), &o));
  OPGRAPH_CHECK(set_forward_outputs(c, g, o));
  return set_amax(c, {"Amax_O"});
}

Status infer_fp8_backward(InferContext& c) {
  Geometry g;
  OPGRAPH_CHECK(read_geometry(c, Variant::FP8_BWD, g));
  for (const char* p : {"O", "dO"}) OPGRAPH_CHECK(require_dtypes(c, p, kFp8OrHalf, "fp8_io_dtype"));
  OPGRAPH_CHECK(check_scalars(c, {"Descale_Q", "Descale_K", "Descale_V", "Descale_O", "Descale_dO", "Descale_S",
                                  "Descale_dP", "Scale_S", "Scale_dQ", "Scale_dK", "Scale_dV", "Scale_dP"}));
  if (c.has(ops::in::dO_f16)) {
    OPGRAPH_CHECK(require_dtypes(c, "dO_f16", kHigh, "fp8_io_dtype"));
    OPGRAPH_CHECK(c.require_same_dims(ops::in::dO_f16, ops::in::dO));
  }
  OPGRAPH_CHECK(check_common(c, Variant::FP8_BWD, g));
  DataType t = c.dtype(ops::in::Q);
  for (const char* p : {"dQ", "dK", "dV"}) OPGRAPH_CHECK(out_dtype(c, p, kFp8OrHalf, c.dtype(ops::in::Q), &t));
  OPGRAPH_CHECK(set_backward_outputs(c, c.dtype(ops::in::Q)));
  return set_amax(c, {"Amax_dQ", "Amax_dK", "Amax_dV", "Amax_dP"});
}

Status infer_mxfp8_backward(InferContext& c) {
  Geometry g;
  OPGRAPH_CHECK(read_geometry(c, Variant::MXFP8_BWD, g));
  OPGRAPH_CHECK(require_dtypes(c, "O", kHigh, "fp8_io_dtype"));
  for (const char* p : {"dO", "Q_T", "K_T", "dO_T"}) OPGRAPH_CHECK(require_dtypes(c, p, kFp8, "fp8_io_dtype"));
  for (auto [t, d] : {std::pair{"Q_T", "Q"}, std::pair{"K_T", "K"}, std::pair{"dO_T", "dO"}}) {
    OPGRAPH_CHECK(check_layout(c, t));
    if (c.dims(t) != c.dims(d))
      return fail_rule(c, t, "mxfp8_transposed_copy",
                       "is " + std::string(d) + " quantized along s: its dims must equal " + std::string(d) + "'s " +
                           InferContext::dims_str(c.dims(d)) + ", got " + InferContext::dims_str(c.dims(t)));
  }
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_Q, ops::in::Q, 3));
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_Q_T, ops::in::Q_T, 2));
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_K, ops::in::K, 3));
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_K_T, ops::in::K_T, 2));
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_V, ops::in::V, 3));
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_dO, ops::in::dO, 3));
  OPGRAPH_CHECK(check_mx_descale(c, ops::in::Descale_dO_T, ops::in::dO_T, 2));
  OPGRAPH_CHECK(check_common(c, Variant::MXFP8_BWD, g));
  DataType dflt = high_precision_default(c), t = dflt;
  for (const char* p : {"dQ", "dK", "dV"}) OPGRAPH_CHECK(out_dtype(c, p, kHigh, dflt, &t));
  OPGRAPH_CHECK(set_backward_outputs(c, dflt));
  return set_amax(c, {"Amax_dQ", "Amax_dK", "Amax_dV"});
}

// The optional ports shared by the forward / backward records, after their own.
void add_forward_optional(std::vector<PortSpec>& v) {
  for (const char* p : {"Attn_scale", "Bias", "SEQ_LEN_Q", "SEQ_LEN_KV", "Seed", "Offset", "Dropout_mask",
                        "Dropout_scale", "Page_table_K", "Page_table_V", "SINK_TOKEN"})
    v.push_back({p, true});
}
void add_backward_optional(std::vector<PortSpec>& v) {
  for (const char* p : {"Attn_scale", "Bias", "SEQ_LEN_Q", "SEQ_LEN_KV", "Seed", "Offset", "Dropout_mask",
                        "Dropout_scale", "Dropout_scale_inv", "SINK_TOKEN"})
    v.push_back({p, true});
}
std::vector<PortSpec> required(std::initializer_list<const char*> names) {
  std::vector<PortSpec> v;
  for (const char* n : names) v.push_back({n});
  return v;
}

std::vector<AttrSpec> fp8_backward_attrs() {
  std::vector<AttrSpec> a;
  for (auto& s : backward_attrs())
    if (s.name != "dbias" && s.name != "rng_dump") a.push_back(s);
  return a;
}

}  // namespace

std::vector<OpSpec> fp8_specs() {
  std::vector<OpSpec> v;
  auto fwd = required({"Q", "K", "V", "Descale_Q", "Descale_K", "Descale_V", "Descale_S", "Scale_S", "Scale_O"});
  add_forward_optional(fwd);
  v.push_back({.name = "sdpa_fp8",
               .mechanism = OpMechanism::CAPTURED,
               .inputs = fwd,
               .outputs = {{"O"}, {"Stats", wants_stats}, {"Max", wants_max}, {"Sum_exp", wants_sum_exp},
                           {"RNG_DUMP", wants_rng_dump}, {"Amax_S"}, {"Amax_O"}},
               .attrs = forward_attrs(),
               .infer = infer_fp8,
               .summary = "sdpa on per-tensor scaled fp8 Q/K/V with Amax of S and O"});
  auto bwd = required({"Q", "K", "V", "O", "dO", "Stats", "Descale_Q", "Descale_K", "Descale_V", "Descale_O",
                       "Descale_dO", "Descale_S", "Descale_dP", "Scale_S", "Scale_dQ", "Scale_dK", "Scale_dV",
                       "Scale_dP"});
  bwd.push_back({"dO_f16", true});
  add_backward_optional(bwd);
  v.push_back({.name = "sdpa_fp8_backward",
               .mechanism = OpMechanism::CAPTURED,
               .inputs = bwd,
               .outputs = {{"dQ"}, {"dK"}, {"dV"}, {"Amax_dQ"}, {"Amax_dK"}, {"Amax_dV"}, {"Amax_dP"},
                           {"DSINK_TOKEN", wants_dsink}},
               .attrs = fp8_backward_attrs(),
               .infer = infer_fp8_backward,
               .summary = "gradients of sdpa_fp8 with per-tensor scales and Amax of dQ, dK, dV, dP"});
  auto mfwd = required({"Q", "K", "V", "Descale_Q", "Descale_K", "Descale_V"});
  add_forward_optional(mfwd);
  v.push_back({.name = "sdpa_mxfp8",
               .mechanism = OpMechanism::CAPTURED,
               .inputs = mfwd,
               .outputs = {{"O"}, {"Stats", wants_stats}, {"Max", wants_max}, {"Sum_exp", wants_sum_exp},
                           {"RNG_DUMP", wants_rng_dump}, {"Amax_O"}},
               .attrs = forward_attrs(),
               .infer = infer_mxfp8,
               .summary = "sdpa on MXFP8 Q/K/V (E8M0 block scales, F8_128x4) with Amax of O"});
  auto mbwd = required({"Q", "Q_T", "K", "K_T", "V", "O", "dO", "dO_T", "Stats", "Descale_Q", "Descale_Q_T",
                        "Descale_K", "Descale_K_T", "Descale_V", "Descale_dO", "Descale_dO_T"});
  add_backward_optional(mbwd);
  v.push_back({.name = "sdpa_mxfp8_backward",
               .mechanism = OpMechanism::CAPTURED,
               .inputs = mbwd,
               .outputs = {{"dQ"}, {"dK"}, {"dV"}, {"Amax_dQ"}, {"Amax_dK"}, {"Amax_dV"}, {"DSINK_TOKEN", wants_dsink}},
               .attrs = fp8_backward_attrs(),
               .infer = infer_mxfp8_backward,
               .summary = "gradients of sdpa_mxfp8 from MXFP8 operands and their transposed copies"});
  return v;
}

}  // namespace opgraph::ops::sdpa

namespace opgraph {

using ops::sdpa::append;
using ops::sdpa::backward_optional;
using ops::sdpa::backward_outputs;
using ops::sdpa::forward_optional;
using ops::sdpa::forward_outputs;

SdpaOutputs SdpaBuilders::sdpa_fp8(TensorPtr q, TensorPtr k, TensorPtr v, const SdpaFp8Scales& s,
                                   const Attributes& attrs, const SdpaInputs& in) {
  std::vector<PortArg> a = {{"Q", q}, {"K", k}, {"V", v}, {"Descale_Q", s.descale_q}, {"Descale_K", s.descale_k},
                            {"Descale_V", s.descale_v}, {"Descale_S", s.descale_s}, {"Scale_S", s.scale_s},
                            {"Scale_O", s.scale_o}};
  append(a, forward_optional(in));
  return forward_outputs("sdpa_fp8", add_node("sdpa_fp8", std::move(a), attrs));
}

SdpaBackwardOutputs SdpaBuilders::sdpa_fp8_backward(TensorPtr q, TensorPtr k, TensorPtr v, TensorPtr o, TensorPtr dO,
                                                    TensorPtr stats, const SdpaFp8BackwardScales& s,
                                                    const Attributes& attrs, const SdpaBackwardInputs& in) {
  std::vector<PortArg> a = {{"Q", q}, {"K", k}, {"V", v}, {"O", o}, {"dO", dO}, {"Stats", stats},
                            {"Descale_Q", s.descale_q}, {"Descale_K", s.descale_k}, {"Descale_V", s.descale_v},
                            {"Descale_O", s.descale_o}, {"Descale_dO", s.descale_dO}, {"Descale_S", s.descale_s},
                            {"Descale_dP", s.descale_dP}, {"Scale_S", s.scale_s}, {"Scale_dQ", s.scale_dQ},
                            {"Scale_dK", s.scale_dK}, {"Scale_dV", s.scale_dV}, {"Scale_dP", s.scale_dP},
                            {"dO_f16", s.dO_f16}};
  append(a, backward_optional(in));
  return backward_outputs("sdpa_fp8_backward", add_node("sdpa_fp8_backward", std::move(a), attrs));
}

SdpaOutputs SdpaBuilders::sdpa_mxfp8(TensorPtr q, TensorPtr k, TensorPtr v, const SdpaMxfp8Scales& s,
                                     const Attributes& attrs, const SdpaInputs& in) {
  std::vector<PortArg> a = {{"Q", q}, {"K", k}, {"V", v}, {"Descale_Q", s.descale_q}, {"Descale_K", s.descale_k},
                            {"Descale_V", s.descale_v}};
  append(a, forward_optional(in));
  return forward_outputs("sdpa_mxfp8", add_node("sdpa_mxfp8", std::move(a), attrs));
}

SdpaBackwardOutputs SdpaBuilders::sdpa_mxfp8_backward(TensorPtr q, TensorPtr k, TensorPtr v, TensorPtr o,
                                                      TensorPtr dO, TensorPtr stats,
                                                      const SdpaMxfp8BackwardOperands& m, const Attributes& attrs,
                                                      const SdpaBackwardInputs& in) {
  std::vector<PortArg> a = {{"Q", q}, {"Q_T", m.q_t}, {"K", k}, {"K_T", m.k_t}, {"V", v}, {"O", o}, {"dO", dO},
                            {"dO_T", m.dO_t}, {"Stats", stats}, {"Descale_Q", m.descale_q},
                            {"Descale_Q_T", m.descale_q_t}, {"Descale_K", m.descale_k},
                            {"Descale_K_T", m.descale_k_t}, {"Descale_V", m.descale_v},
                            {"Descale_dO", m.descale_dO}, {"Descale_dO_T", m.descale_dO_t}};
  append(a, backward_optional(in));
  return backward_outputs("sdpa_mxfp8_backward", add_node("sdpa_mxfp8_backward", std::move(a), attrs));
}

}  // namespace opgraph
