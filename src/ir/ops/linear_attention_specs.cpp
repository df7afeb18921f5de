// ir/ops/linear_attention_specs.cpp — the 16 records of the linear_attention group:
// gdn, kda, gdn2, gdp, each with _bwd, _summary and _summary_bwd.
//
// Records are assembled from the op's (variant, role) so the ports and
// attributes of the 16 ops cannot drift apart; the rules they share live in
// linear_attention_rules.cpp. Port lists (optional ports marked ?):
//   forward:     q k v g beta|b,w cu_seqlens initial_state? a_log? dt_bias? state_indices?
//                -> O, final_state (iff output_final_state),
//                   state_checkpoints (iff checkpoint_every_n_tokens > 0; the third output, as cudnn's pygraph)
//   backward:    the forward's ports + dO, d_final_state?, state_checkpoints? (the forward's; bound only
//                with checkpoint_every_n_tokens > 0: the backward takes the states there from it)
//                -> dQ dK dV dG dBeta|dB,dW, d_initial_state (iff initial_state),
//                   d_a_log (iff safe_gate and a_log), d_dt_bias (iff safe_gate and dt_bias)
//   summary:     k v g beta|b,w cu_seqlens a_log? dt_bias?            -> H, M
//   summary_bwd: q k g beta|b dO cu_seqlens a_log? dt_bias?          -> G, transition (iff output_transition)
#include <string>
#include <vector>

#include "ir/ops/groups.h"
#include "ir/ops/linear_attention_common.h"

namespace opgraph::ops {
namespace {

using la::Role;
using la::Variant;
namespace p = la::port;

bool final_state_present(const Node& n) { return ops::attr::output_final_state(n); }
bool checkpoints_present(const Node& n) { return ops::attr::checkpoint_every_n_tokens(n) > 0; }
bool d_initial_state_present(const Node& n) { return n.input(p::kInitialState) != nullptr; }
bool d_a_log_present(const Node& n) { return ops::attr::safe_gate(n) && n.input(p::kALog) != nullptr; }
bool d_dt_bias_present(const Node& n) { return ops::attr::safe_gate(n) && n.input(p::kDtBias) != nullptr; }
bool transition_present(const Node& n) { return ops::attr::output_transition(n); }

std::vector<PortSpec> inputs_of(Variant v, Role r) {
  const bool gdn2 = v == Variant::GDN2;
  std::vector<PortSpec> in;
  if (r != Role::SUMMARY) in.push_back({p::kQ});
  in.push_back({p::kK});
  if (r != Role::SUMMARY_BWD) in.push_back({p::kV});
  in.push_back({p::kG});
  if (gdn2) {
    in.push_back({p::kB});
    if (r != Role::SUMMARY_BWD) in.push_back({p::kW});
  } else {
    in.push_back({p::kBeta});
  }
  if (r == Role::SUMMARY_BWD) in.push_back({p::kDO});
  in.push_back({p::kCuSeqlens});
  if (r == Role::FORWARD || r == Role::BACKWARD) in.push_back({p::kInitialState, true});
  in.push_back({p::kALog, true});
  in.push_back({p::kDtBias, true});
  // Forward only; the backward declares the port so that binding it is refused
  // at validate() with the rule's name rather than by the builder.
  if (r == Role::FORWARD || r == Role::BACKWARD) in.push_back({p::kStateIndices, true});
  if (r == Role::BACKWARD) {
    in.push_back({p::kDO});
    in.push_back({p::kDFinalState, true});
    in.push_back({p::kStateCheckpoints, true});
  }
  return in;
}

std::vector<OutputSpec> outputs_of(Variant v, Role r) {
  switch (r) {
    case Role::FORWARD:
      return {{p::kO}, {p::kFinalState, final_state_present}, {p::kStateCheckpoints, checkpoints_present}};
    case Role::SUMMARY: return {{p::kH}, {p::kM}};
    case Role::SUMMARY_BWD: return {{p::kGSum}, {p::kTransition, transition_present}};
    case Role::BACKWARD: break;
  }
  std::vector<OutputSpec> out = {{p::kDQ}, {p::kDK}, {p::kDV}, {p::kDG}};
  if (v == Variant::GDN2) {
    out.push_back({p::kDB});
    out.push_back({p::kDW});
  } else {
    out.push_back({p::kDBeta});
  }
  out.push_back({p::kDInitialState, d_initial_state_present});
  out.push_back({p::kDALog, d_a_log_present});
  out.push_back({p::kDDtBias, d_dt_bias_present});
  return out;
}

std::vector<AttrSpec> attrs_of(Variant v, Role r) {
  const AttrValue kFalse{false};
  std::vector<AttrSpec> a;
  if (r != Role::SUMMARY) a.push_back({"scale", AttrType::FLOAT, std::nullopt});  // unset: K^-0.5
  a.push_back({"use_qk_l2norm", AttrType::BOOL, kFalse});
  a.push_back({"safe_gate", AttrType::BOOL, kFalse});
  if (la::has_vector_gate(v)) a.push_back({"lower_bound", AttrType::FLOAT, AttrValue{-5.0}});
  a.push_back({"use_beta_sigmoid", AttrType::BOOL, kFalse});
  a.push_back({"allow_neg_eigval", AttrType::BOOL, kFalse});
  a.push_back({"gate_domain", AttrType::ENUM, AttrValue{std::string("log")}, false, {"log", "linear"}});
  if (v == Variant::GDP) a.push_back({"num_householder", AttrType::INT, AttrValue{std::int64_t{1}}});
  if (r == Role::FORWARD) a.push_back({"output_final_state", AttrType::BOOL, kFalse});
  if (r == Role::FORWARD || r == Role::BACKWARD) {
    a.push_back({"checkpoint_every_n_tokens", AttrType::INT, AttrValue{std::int64_t{0}}});
    a.push_back({"overwrite_initial_state", AttrType::BOOL, kFalse});
  }
  a.push_back({"batch_invariant", AttrType::BOOL, kFalse});
  if (r == Role::SUMMARY_BWD) a.push_back({"output_transition", AttrType::BOOL, kFalse});
  return a;
}

template <Variant V, Role R>
OpSpec make_spec(std::string_view name, std::string_view summary) {
  return OpSpec{.name = name,
                .mechanism = OpMechanism::ENGINE_ONLY,
                .inputs = inputs_of(V, R),
                .outputs = outputs_of(V, R),
                .attrs = attrs_of(V, R),
                .backend_lowerable = false,
                .infer = la::infer_thunk<V, R>,
                .summary = summary};
}

template <Variant V>
void add_family(std::vector<OpSpec>& out, std::string_view fwd, std::string_view bwd, std::string_view sum,
                std::string_view sum_bwd, std::string_view what) {
  out.push_back(make_spec<V, Role::FORWARD>(fwd, what));
  out.push_back(make_spec<V, Role::BACKWARD>(bwd, "gradients of the forward op"));
  out.push_back(
      make_spec<V, Role::SUMMARY>(sum, "per-sequence state H from a zero seed and transition M (stored M^T)"));
  out.push_back(make_spec<V, Role::SUMMARY_BWD>(
      sum_bwd, "per-sequence incoming state gradient G from a zero outgoing gradient, and the transition M"));
}

}  // namespace

std::span<const OpSpec> linear_attention_specs() {
  static const std::vector<OpSpec> kSpecs = [] {
    std::vector<OpSpec> v;
    add_family<Variant::GDN>(v, "gdn", "gdn_bwd", "gdn_summary", "gdn_summary_bwd",
                             "Gated DeltaNet: scalar-gated delta rule over THD varlen sequences");
    add_family<Variant::KDA>(v, "kda", "kda_bwd", "kda_summary", "kda_summary_bwd",
                             "Kimi Delta Attention: delta rule with a per-key-channel gate");
    add_family<Variant::GDN2>(v, "gdn2", "gdn2_bwd", "gdn2_summary", "gdn2_summary_bwd",
                              "Gated DeltaNet-2: per-channel gate, erase gate b and write gate w");
    add_family<Variant::GDP>(v, "gdp", "gdp_bwd", "gdp_summary", "gdp_summary_bwd",
                             "Gated DeltaProduct: num_householder delta sub-steps per token, one gate per token");
    return v;
  }();
  return kSpecs;
}

}  // namespace opgraph::ops
