// ir/ops/linear_attention_common.h — what the linear_attention group's files share:
// the variant/role of each of its 16 ops, the port and attribute names, and the
// one infer() that applies the group's rules (linear_attention_rules.cpp).
//
// The group is engine-only (OpMechanism::ENGINE_ONLY, backend_lowerable = false):
// gated delta-rule recurrences with no cuDNN backend lowering. Every op shares
// one set of shape and attribute rules; what differs per op is
//   variant: GDN (scalar gate), KDA (per-key-channel gate), GDN2 (per-channel
//            gate + erase gate b + write gate w), GDP (GDN with num_householder
//            sub-steps per token);
//   role:    FORWARD (O, final_state, state_checkpoints), BACKWARD (gradients), SUMMARY (H, M from a
//            zero seed) and SUMMARY_BWD (G, transition).
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/infer_context.h"

namespace opgraph::ops::la {

enum class Variant : std::uint8_t { GDN, KDA, GDN2, GDP };
enum class Role : std::uint8_t { FORWARD, BACKWARD, SUMMARY, SUMMARY_BWD };

// Vector (per-key-channel) gates: g is [T, HO, K] and dt_bias is [HO, K].
constexpr bool has_vector_gate(Variant v) { return v == Variant::KDA || v == Variant::GDN2; }

// The shared rules: attributes, THD shapes, head grouping, gate parameters,
// state pools, in-place state, and the outputs' dims and dtypes. Returns
// GRAPH_NOT_SUPPORTED (ATTRIBUTE_NOT_SET for an unbound required port) naming
// op, node, port, tensor and rule.
Status infer(InferContext& c, Variant v, Role r);

template <Variant V, Role R>
Status infer_thunk(InferContext& c) {
  return infer(c, V, R);
}

// Port names (the seed's lowercase names; gradients and summaries as the seed spells them).
namespace port {
inline constexpr std::string_view kQ = "q", kK = "k", kV = "v", kG = "g", kBeta = "beta", kB = "b", kW = "w";
inline constexpr std::string_view kCuSeqlens = "cu_seqlens", kInitialState = "initial_state", kALog = "a_log",
                                  kDtBias = "dt_bias", kStateIndices = "state_indices";
inline constexpr std::string_view kO = "O", kFinalState = "final_state", kDO = "dO", kDFinalState = "d_final_state",
                                  kStateCheckpoints = "state_checkpoints";
inline constexpr std::string_view kDQ = "dQ", kDK = "dK", kDV = "dV", kDG = "dG", kDBeta = "dBeta", kDB = "dB",
                                  kDW = "dW", kDInitialState = "d_initial_state", kDALog = "d_a_log",
                                  kDDtBias = "d_dt_bias";
inline constexpr std::string_view kH = "H", kM = "M", kGSum = "G", kTransition = "transition";
}  // namespace port

}  // namespace opgraph::ops::la
