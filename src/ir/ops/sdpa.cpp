// ir/ops/sdpa.cpp — the captured SDPA family's fp16/bf16 records (sdpa,
// sdpa_backward), their builders, and the group table (which also lists the fp8
// records of sdpa_fp8.cpp).
//
// sdpa: O = softmax(mask(attn_scale * Q K^T + Bias + ALiBi), sink) V with
//   optional dropout on the probabilities; Stats = log-sum-exp of each row of
//   masked scores (incl. the sink), Max = row max, Sum_exp = sum of exp(s - Max).
//   GQA/MQA: query head h reads K head h / (h_q / h_k) and V head h / (h_q / h_v).
// sdpa_backward: dQ, dK, dV (and dBias, DSINK_TOKEN on request) of sdpa from
//   Q, K, V, O, dO and the forward's Stats; dK/dV of a shared K/V head sum the
//   gradients of every query head that reads it.
// The semantic rules live in sdpa_common.cpp (one list, named rules).
#include "ir/infer_context.h"
#include "ir/ops/groups.h"
#include "ir/ops/sdpa_common.h"
#include "opgraph/builders/sdpa.h"

namespace opgraph::ops {
namespace {

using namespace sdpa;

Status infer_sdpa(InferContext& c) {
  Geometry g;
  OPGRAPH_CHECK(read_geometry(c, Variant::FWD, g));
  OPGRAPH_CHECK(check_common(c, Variant::FWD, g));
  return set_forward_outputs(c, g, DataType::NOT_SET);
}

Status infer_sdpa_backward(InferContext& c) {
  Geometry g;
  OPGRAPH_CHECK(read_geometry(c, Variant::BWD, g));
  for (const char* p : {"O", "dO"})
    if (c.dtype(p) != c.dtype(ops::in::Q))
      return fail_rule(c, p, "same_io_dtype",
                       "must have Q's data type " + std::string(to_string(c.dtype(ops::in::Q))) + ", got " +
                           std::string(to_string(c.dtype(p))));
  OPGRAPH_CHECK(check_common(c, Variant::BWD, g));
  return set_backward_outputs(c, DataType::NOT_SET);
}

std::vector<PortSpec> forward_ports() {
  return {{"Q"},           {"K"},           {"V"},          {"Attn_scale", true},   {"Bias", true},
          {"SEQ_LEN_Q", true}, {"SEQ_LEN_KV", true}, {"Seed", true}, {"Offset", true}, {"Dropout_mask", true},
          {"Dropout_scale", true}, {"Page_table_K", true}, {"Page_table_V", true}, {"Block_mask", true},
          {"SINK_TOKEN", true}};
}

std::vector<PortSpec> backward_ports() {
  return {{"Q"},   {"K"},    {"V"},          {"O"},          {"dO"},           {"Stats"},
          {"Attn_scale", true}, {"Bias", true}, {"SEQ_LEN_Q", true}, {"SEQ_LEN_KV", true}, {"Seed", true},
          {"Offset", true}, {"Dropout_mask", true}, {"Dropout_scale", true}, {"Dropout_scale_inv", true},
          {"SINK_TOKEN", true}};
}

std::vector<OpSpec> make_specs() {
  std::vector<OpSpec> v;
  v.push_back({.name = "sdpa",
               .mechanism = OpMechanism::CAPTURED,
               .inputs = forward_ports(),
               .outputs = {{"O"}, {"Stats", wants_stats}, {"Max", wants_max}, {"Sum_exp", wants_sum_exp},
                           {"RNG_DUMP", wants_rng_dump}},
               .attrs = forward_attrs(),
               .infer = infer_sdpa,
               .summary = "scaled dot-product attention forward (masks, bias, alibi, dropout, paged, THD, GQA)"});
  v.push_back({.name = "sdpa_backward",
               .mechanism = OpMechanism::CAPTURED,
               .inputs = backward_ports(),
               .outputs = {{"dQ"}, {"dK"}, {"dV"}, {"dBias", wants_dbias}, {"RNG_DUMP", wants_rng_dump},
                           {"DSINK_TOKEN", wants_dsink}},
               .attrs = backward_attrs(),
               .infer = infer_sdpa_backward,
               .summary = "gradients of sdpa: dQ, dK, dV (+ dBias, DSINK_TOKEN)"});
  for (const OpSpec& s : fp8_specs()) v.push_back(s);
  return v;
}

}  // namespace

std::span<const OpSpec> sdpa_specs() {
  static const std::vector<OpSpec> kSpecs = make_specs();
  return kSpecs;
}

}  // namespace opgraph::ops

namespace opgraph {

using ops::sdpa::append;
using ops::sdpa::backward_optional;
using ops::sdpa::backward_outputs;
using ops::sdpa::forward_optional;
using ops::sdpa::forward_outputs;

SdpaOutputs SdpaBuilders::sdpa(TensorPtr q, TensorPtr k, TensorPtr v, const Attributes& attrs, const SdpaInputs& in) {
  std::vector<PortArg> a = {{"Q", q}, {"K", k}, {"V", v}};
  append(a, forward_optional(in, /*with_block_mask=*/true));
  return forward_outputs("sdpa", add_node("sdpa", std::move(a), attrs));
}

SdpaBackwardOutputs SdpaBuilders::sdpa_backward(TensorPtr q, TensorPtr k, TensorPtr v, TensorPtr o, TensorPtr dO,
                                                TensorPtr stats, const Attributes& attrs,
                                                const SdpaBackwardInputs& in) {
  std::vector<PortArg> a = {{"Q", q}, {"K", k}, {"V", v}, {"O", o}, {"dO", dO}, {"Stats", stats}};
  append(a, backward_optional(in));
  return backward_outputs("sdpa_backward", add_node("sdpa_backward", std::move(a), attrs));
}

}  // namespace opgraph
