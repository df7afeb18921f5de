// ir/ops/linear_attention_builders.cpp — the builders of the linear_attention group.
// Each binds the ports its op declares (linear_attention_specs.cpp) from the input
// struct, then maps the spec's outputs back to named fields.
#include <string>

#include "ir/ops/linear_attention_common.h"
#include "opgraph/builders/linear_attention.h"

namespace opgraph {
namespace {

namespace p = ops::la::port;
using ops::la::Role;

// One view over both input structs (b and w are null for gdn/kda/gdp, beta for gdn2).
struct Bound {
  TensorPtr q, k, v, g, beta, b, w, cu_seqlens, initial_state, a_log, dt_bias, state_indices;
};
Bound bound(const DeltaRuleInputs& in) {
  return {in.q, in.k, in.v, in.g, in.beta, nullptr, nullptr, in.cu_seqlens, in.initial_state, in.a_log,
          in.dt_bias, in.state_indices};
}
Bound bound(const Gdn2Inputs& in) {
  return {in.q, in.k, in.v, in.g, nullptr, in.b, in.w, in.cu_seqlens, in.initial_state, in.a_log,
          in.dt_bias, in.state_indices};
}

// The port bindings of an op of `role` (mirrors inputs_of() in linear_attention_specs.cpp).
std::vector<PortArg> bindings(const Bound& in, bool gdn2, Role role, TensorPtr d_o, TensorPtr d_final_state,
                              TensorPtr state_checkpoints = nullptr) {
  std::vector<PortArg> a;
  if (role != Role::SUMMARY) a.emplace_back(p::kQ, in.q);
  a.emplace_back(p::kK, in.k);
  if (role != Role::SUMMARY_BWD) a.emplace_back(p::kV, in.v);
  a.emplace_back(p::kG, in.g);
  if (gdn2) {
    a.emplace_back(p::kB, in.b);
    if (role != Role::SUMMARY_BWD) a.emplace_back(p::kW, in.w);
  } else {
    a.emplace_back(p::kBeta, in.beta);
  }
  if (role == Role::SUMMARY_BWD) a.emplace_back(p::kDO, d_o);
  a.emplace_back(p::kCuSeqlens, in.cu_seqlens);
  if (role == Role::FORWARD || role == Role::BACKWARD) {
    a.emplace_back(p::kInitialState, in.initial_state);
    a.emplace_back(p::kStateIndices, in.state_indices);
  }
  a.emplace_back(p::kALog, in.a_log);
  a.emplace_back(p::kDtBias, in.dt_bias);
  if (role == Role::BACKWARD) {
    a.emplace_back(p::kDO, d_o);
    a.emplace_back(p::kDFinalState, d_final_state);
    a.emplace_back(p::kStateCheckpoints, state_checkpoints);
  }
  return a;
}

TensorPtr pick(const std::vector<TensorPtr>& outs, std::string_view op, std::string_view port) {
  int i = find_op_spec(op)->output_index(port);
  return i < 0 ? nullptr : outs[static_cast<std::size_t>(i)];
}

DeltaRuleGrads grads_of(const std::vector<TensorPtr>& o, std::string_view op) {
  return {pick(o, op, p::kDQ),  pick(o, op, p::kDK),           pick(o, op, p::kDV),   pick(o, op, p::kDG),
          pick(o, op, p::kDBeta), pick(o, op, p::kDB),         pick(o, op, p::kDW),
          pick(o, op, p::kDInitialState), pick(o, op, p::kDALog), pick(o, op, p::kDDtBias)};
}

}  // namespace

DeltaRuleOutputs LinearAttentionBuilders::gdn(const DeltaRuleInputs& in, const Attributes& attrs) {
  auto o = add_node("gdn", bindings(bound(in), false, Role::FORWARD, nullptr, nullptr), attrs);
  return {o[0], o[1], o[2]};
}
DeltaRuleOutputs LinearAttentionBuilders::kda(const DeltaRuleInputs& in, const Attributes& attrs) {
  auto o = add_node("kda", bindings(bound(in), false, Role::FORWARD, nullptr, nullptr), attrs);
  return {o[0], o[1], o[2]};
}
DeltaRuleOutputs LinearAttentionBuilders::gdp(const DeltaRuleInputs& in, const Attributes& attrs) {
  auto o = add_node("gdp", bindings(bound(in), false, Role::FORWARD, nullptr, nullptr), attrs);
  return {o[0], o[1], o[2]};
}
DeltaRuleOutputs LinearAttentionBuilders::gdn2(const Gdn2Inputs& in, const Attributes& attrs) {
  auto o = add_node("gdn2", bindings(bound(in), true, Role::FORWARD, nullptr, nullptr), attrs);
  return {o[0], o[1], o[2]};
}

DeltaRuleGrads LinearAttentionBuilders::gdn_bwd(const DeltaRuleInputs& in, TensorPtr d_o, TensorPtr d_final_state,
    const Attributes& attrs, TensorPtr state_checkpoints) {
  return grads_of(
      add_node("gdn_bwd", bindings(bound(in), false, Role::BACKWARD, d_o, d_final_state, state_checkpoints), attrs),
      "gdn_bwd");
}
DeltaRuleGrads LinearAttentionBuilders::kda_bwd(const DeltaRuleInputs& in, TensorPtr d_o, TensorPtr d_final_state,
    const Attributes& attrs, TensorPtr state_checkpoints) {
  return grads_of(
      add_node("kda_bwd", bindings(bound(in), false, Role::BACKWARD, d_o, d_final_state, state_checkpoints), attrs),
      "kda_bwd");
}
DeltaRuleGrads LinearAttentionBuilders::gdp_bwd(const DeltaRuleInputs& in, TensorPtr d_o, TensorPtr d_final_state,
    const Attributes& attrs, TensorPtr state_checkpoints) {
  return grads_of(
      add_node("gdp_bwd", bindings(bound(in), false, Role::BACKWARD, d_o, d_final_state, state_checkpoints), attrs),
      "gdp_bwd");
}
DeltaRuleGrads LinearAttentionBuilders::gdn2_bwd(const Gdn2Inputs& in, TensorPtr d_o, TensorPtr d_final_state,
    const Attributes& attrs, TensorPtr state_checkpoints) {
  return grads_of(
      add_node("gdn2_bwd", bindings(bound(in), true, Role::BACKWARD, d_o, d_final_state, state_checkpoints), attrs),
      "gdn2_bwd");
}

StateSummary LinearAttentionBuilders::gdn_summary(const DeltaRuleInputs& in, const Attributes& attrs) {
  auto o = add_node("gdn_summary", bindings(bound(in), false, Role::SUMMARY, nullptr, nullptr), attrs);
  return {o[0], o[1]};
}
StateSummary LinearAttentionBuilders::kda_summary(const DeltaRuleInputs& in, const Attributes& attrs) {
  auto o = add_node("kda_summary", bindings(bound(in), false, Role::SUMMARY, nullptr, nullptr), attrs);
  return {o[0], o[1]};
}
StateSummary LinearAttentionBuilders::gdp_summary(const DeltaRuleInputs& in, const Attributes& attrs) {
  auto o = add_node("gdp_summary", bindings(bound(in), false, Role::SUMMARY, nullptr, nullptr), attrs);
  return {o[0], o[1]};
}
StateSummary LinearAttentionBuilders::gdn2_summary(const Gdn2Inputs& in, const Attributes& attrs) {
  auto o = add_node("gdn2_summary", bindings(bound(in), true, Role::SUMMARY, nullptr, nullptr), attrs);
  return {o[0], o[1]};
}

StateSummaryGrad LinearAttentionBuilders::gdn_summary_bwd(const DeltaRuleInputs& in, TensorPtr d_o,
                                                          const Attributes& attrs) {
  auto o = add_node("gdn_summary_bwd", bindings(bound(in), false, Role::SUMMARY_BWD, d_o, nullptr), attrs);
  return {o[0], o[1]};
}
StateSummaryGrad LinearAttentionBuilders::kda_summary_bwd(const DeltaRuleInputs& in, TensorPtr d_o,
                                                          const Attributes& attrs) {
  auto o = add_node("kda_summary_bwd", bindings(bound(in), false, Role::SUMMARY_BWD, d_o, nullptr), attrs);
  return {o[0], o[1]};
}
StateSummaryGrad LinearAttentionBuilders::gdp_summary_bwd(const DeltaRuleInputs& in, TensorPtr d_o,
                                                          const Attributes& attrs) {
  auto o = add_node("gdp_summary_bwd", bindings(bound(in), false, Role::SUMMARY_BWD, d_o, nullptr), attrs);
  return {o[0], o[1]};
}
StateSummaryGrad LinearAttentionBuilders::gdn2_summary_bwd(const Gdn2Inputs& in, TensorPtr d_o,
                                                           const Attributes& attrs) {
  auto o = add_node("gdn2_summary_bwd", bindings(bound(in), true, Role::SUMMARY_BWD, d_o, nullptr), attrs);
  return {o[0], o[1]};
}

}  // namespace opgraph
