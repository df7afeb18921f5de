// opgraph/ops/linear_attention.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
// Part of opgraph/ops.h (include that): the linear attention ops.
#pragma once

#include "opgraph/ops/enums.h"

namespace opgraph::ops {

// ---- linear attention ops ----

// gdn: Gated DeltaNet: scalar-gated delta rule over THD varlen sequences
struct Gdn {
  static constexpr std::size_t kIndex = 40;
  static constexpr std::string_view kName = "gdn";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices };
  enum class Out : std::uint8_t { O, final_state, state_checkpoints };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 5); }
  static bool output_final_state(const Node& n) { return detail::get<bool>(n, kIndex, 6); }
  static std::int64_t checkpoint_every_n_tokens(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 7); }
  static bool overwrite_initial_state(const Node& n) { return detail::get<bool>(n, kIndex, 8); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 9); }
};
template <>
struct PortTraits<Gdn::In> {
  using Op = Gdn;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices"};
};
template <>
struct PortTraits<Gdn::Out> {
  using Op = Gdn;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"O", "final_state", "state_checkpoints"};
};

// gdn_bwd: gradients of the forward op
struct GdnBwd {
  static constexpr std::size_t kIndex = 41;
  static constexpr std::string_view kName = "gdn_bwd";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices, dO, d_final_state, state_checkpoints };
  enum class Out : std::uint8_t { dQ, dK, dV, dG, dBeta, d_initial_state, d_a_log, d_dt_bias };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 5); }
  static std::int64_t checkpoint_every_n_tokens(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 6); }
  static bool overwrite_initial_state(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 8); }
};
template <>
struct PortTraits<GdnBwd::In> {
  using Op = GdnBwd;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices", "dO", "d_final_state", "state_checkpoints"};
};
template <>
struct PortTraits<GdnBwd::Out> {
  using Op = GdnBwd;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"dQ", "dK", "dV", "dG", "dBeta", "d_initial_state", "d_a_log", "d_dt_bias"};
};

// gdn_summary: per-sequence state H from a zero seed and transition M (stored M^T)
struct GdnSummary {
  static constexpr std::size_t kIndex = 42;
  static constexpr std::string_view kName = "gdn_summary";
  enum class In : std::uint8_t { k, v, g, beta, cu_seqlens, a_log, dt_bias };
  enum class Out : std::uint8_t { H, M };
  using GateDomain = ops::GateDomain;
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 0); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 4); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
};
template <>
struct PortTraits<GdnSummary::In> {
  using Op = GdnSummary;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"k", "v", "g", "beta", "cu_seqlens", "a_log", "dt_bias"};
};
template <>
struct PortTraits<GdnSummary::Out> {
  using Op = GdnSummary;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"H", "M"};
};

// gdn_summary_bwd: per-sequence incoming state gradient G from a zero outgoing gradient, and the transition M
struct GdnSummaryBwd {
  static constexpr std::size_t kIndex = 43;
  static constexpr std::string_view kName = "gdn_summary_bwd";
  enum class In : std::uint8_t { q, k, g, beta, dO, cu_seqlens, a_log, dt_bias };
  enum class Out : std::uint8_t { G, transition };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 5); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 6); }
  static bool output_transition(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
};
template <>
struct PortTraits<GdnSummaryBwd::In> {
  using Op = GdnSummaryBwd;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "g", "beta", "dO", "cu_seqlens", "a_log", "dt_bias"};
};
template <>
struct PortTraits<GdnSummaryBwd::Out> {
  using Op = GdnSummaryBwd;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"G", "transition"};
};

// kda: Kimi Delta Attention: delta rule with a per-key-channel gate
struct Kda {
  static constexpr std::size_t kIndex = 44;
  static constexpr std::string_view kName = "kda";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices };
  enum class Out : std::uint8_t { O, final_state, state_checkpoints };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static double lower_bound(const Node& n) { return detail::get<double>(n, kIndex, 3); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 6); }
  static bool output_final_state(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static std::int64_t checkpoint_every_n_tokens(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 8); }
  static bool overwrite_initial_state(const Node& n) { return detail::get<bool>(n, kIndex, 9); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 10); }
};
template <>
struct PortTraits<Kda::In> {
  using Op = Kda;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices"};
};
template <>
struct PortTraits<Kda::Out> {
  using Op = Kda;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"O", "final_state", "state_checkpoints"};
};

// kda_bwd: gradients of the forward op
struct KdaBwd {
  static constexpr std::size_t kIndex = 45;
  static constexpr std::string_view kName = "kda_bwd";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices, dO, d_final_state, state_checkpoints };
  enum class Out : std::uint8_t { dQ, dK, dV, dG, dBeta, d_initial_state, d_a_log, d_dt_bias };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static double lower_bound(const Node& n) { return detail::get<double>(n, kIndex, 3); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 6); }
  static std::int64_t checkpoint_every_n_tokens(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 7); }
  static bool overwrite_initial_state(const Node& n) { return detail::get<bool>(n, kIndex, 8); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 9); }
};
template <>
struct PortTraits<KdaBwd::In> {
  using Op = KdaBwd;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices", "dO", "d_final_state", "state_checkpoints"};
};
template <>
struct PortTraits<KdaBwd::Out> {
  using Op = KdaBwd;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"dQ", "dK", "dV", "dG", "dBeta", "d_initial_state", "d_a_log", "d_dt_bias"};
};

// kda_summary: per-sequence state H from a zero seed and transition M (stored M^T)
struct KdaSummary {
  static constexpr std::size_t kIndex = 46;
  static constexpr std::string_view kName = "kda_summary";
  enum class In : std::uint8_t { k, v, g, beta, cu_seqlens, a_log, dt_bias };
  enum class Out : std::uint8_t { H, M };
  using GateDomain = ops::GateDomain;
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 0); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static double lower_bound(const Node& n) { return detail::get<double>(n, kIndex, 2); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 5); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 6); }
};
template <>
struct PortTraits<KdaSummary::In> {
  using Op = KdaSummary;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"k", "v", "g", "beta", "cu_seqlens", "a_log", "dt_bias"};
};
template <>
struct PortTraits<KdaSummary::Out> {
  using Op = KdaSummary;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"H", "M"};
};

// kda_summary_bwd: per-sequence incoming state gradient G from a zero outgoing gradient, and the transition M
struct KdaSummaryBwd {
  static constexpr std::size_t kIndex = 47;
  static constexpr std::string_view kName = "kda_summary_bwd";
  enum class In : std::uint8_t { q, k, g, beta, dO, cu_seqlens, a_log, dt_bias };
  enum class Out : std::uint8_t { G, transition };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static double lower_bound(const Node& n) { return detail::get<double>(n, kIndex, 3); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 6); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static bool output_transition(const Node& n) { return detail::get<bool>(n, kIndex, 8); }
};
template <>
struct PortTraits<KdaSummaryBwd::In> {
  using Op = KdaSummaryBwd;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "g", "beta", "dO", "cu_seqlens", "a_log", "dt_bias"};
};
template <>
struct PortTraits<KdaSummaryBwd::Out> {
  using Op = KdaSummaryBwd;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"G", "transition"};
};

// gdn2: Gated DeltaNet-2: per-channel gate, erase gate b and write gate w
struct Gdn2 {
  static constexpr std::size_t kIndex = 48;
  static constexpr std::string_view kName = "gdn2";
  enum class In : std::uint8_t { q, k, v, g, b, w, cu_seqlens, initial_state, a_log, dt_bias, state_indices };
  enum class Out : std::uint8_t { O, final_state, state_checkpoints };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static double lower_bound(const Node& n) { return detail::get<double>(n, kIndex, 3); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 6); }
  static bool output_final_state(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static std::int64_t checkpoint_every_n_tokens(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 8); }
  static bool overwrite_initial_state(const Node& n) { return detail::get<bool>(n, kIndex, 9); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 10); }
};
template <>
struct PortTraits<Gdn2::In> {
  using Op = Gdn2;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "b", "w", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices"};
};
template <>
struct PortTraits<Gdn2::Out> {
  using Op = Gdn2;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"O", "final_state", "state_checkpoints"};
};

// gdn2_bwd: gradients of the forward op
struct Gdn2Bwd {
  static constexpr std::size_t kIndex = 49;
  static constexpr std::string_view kName = "gdn2_bwd";
  enum class In : std::uint8_t { q, k, v, g, b, w, cu_seqlens, initial_state, a_log, dt_bias, state_indices, dO, d_final_state, state_checkpoints };
  enum class Out : std::uint8_t { dQ, dK, dV, dG, dB, dW, d_initial_state, d_a_log, d_dt_bias };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static double lower_bound(const Node& n) { return detail::get<double>(n, kIndex, 3); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 6); }
  static std::int64_t checkpoint_every_n_tokens(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 7); }
  static bool overwrite_initial_state(const Node& n) { return detail::get<bool>(n, kIndex, 8); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 9); }
};
template <>
struct PortTraits<Gdn2Bwd::In> {
  using Op = Gdn2Bwd;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "b", "w", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices", "dO", "d_final_state", "state_checkpoints"};
};
template <>
struct PortTraits<Gdn2Bwd::Out> {
  using Op = Gdn2Bwd;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"dQ", "dK", "dV", "dG", "dB", "dW", "d_initial_state", "d_a_log", "d_dt_bias"};
};

// gdn2_summary: per-sequence state H from a zero seed and transition M (stored M^T)
struct Gdn2Summary {
  static constexpr std::size_t kIndex = 50;
  static constexpr std::string_view kName = "gdn2_summary";
  enum class In : std::uint8_t { k, v, g, b, w, cu_seqlens, a_log, dt_bias };
  enum class Out : std::uint8_t { H, M };
  using GateDomain = ops::GateDomain;
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 0); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static double lower_bound(const Node& n) { return detail::get<double>(n, kIndex, 2); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 5); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 6); }
};
template <>
struct PortTraits<Gdn2Summary::In> {
  using Op = Gdn2Summary;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"k", "v", "g", "b", "w", "cu_seqlens", "a_log", "dt_bias"};
};
template <>
struct PortTraits<Gdn2Summary::Out> {
  using Op = Gdn2Summary;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"H", "M"};
};

// gdn2_summary_bwd: per-sequence incoming state gradient G from a zero outgoing gradient, and the transition M
struct Gdn2SummaryBwd {
  static constexpr std::size_t kIndex = 51;
  static constexpr std::string_view kName = "gdn2_summary_bwd";
  enum class In : std::uint8_t { q, k, g, b, dO, cu_seqlens, a_log, dt_bias };
  enum class Out : std::uint8_t { G, transition };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static double lower_bound(const Node& n) { return detail::get<double>(n, kIndex, 3); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 6); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static bool output_transition(const Node& n) { return detail::get<bool>(n, kIndex, 8); }
};
template <>
struct PortTraits<Gdn2SummaryBwd::In> {
  using Op = Gdn2SummaryBwd;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "g", "b", "dO", "cu_seqlens", "a_log", "dt_bias"};
};
template <>
struct PortTraits<Gdn2SummaryBwd::Out> {
  using Op = Gdn2SummaryBwd;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"G", "transition"};
};

// gdp: Gated DeltaProduct: num_householder delta sub-steps per token, one gate per token
struct Gdp {
  static constexpr std::size_t kIndex = 52;
  static constexpr std::string_view kName = "gdp";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices };
  enum class Out : std::uint8_t { O, final_state, state_checkpoints };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 5); }
  static std::int64_t num_householder(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 6); }
  static bool output_final_state(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static std::int64_t checkpoint_every_n_tokens(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 8); }
  static bool overwrite_initial_state(const Node& n) { return detail::get<bool>(n, kIndex, 9); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 10); }
};
template <>
struct PortTraits<Gdp::In> {
  using Op = Gdp;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices"};
};
template <>
struct PortTraits<Gdp::Out> {
  using Op = Gdp;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"O", "final_state", "state_checkpoints"};
};

// gdp_bwd: gradients of the forward op
struct GdpBwd {
  static constexpr std::size_t kIndex = 53;
  static constexpr std::string_view kName = "gdp_bwd";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices, dO, d_final_state, state_checkpoints };
  enum class Out : std::uint8_t { dQ, dK, dV, dG, dBeta, d_initial_state, d_a_log, d_dt_bias };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 5); }
  static std::int64_t num_householder(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 6); }
  static std::int64_t checkpoint_every_n_tokens(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 7); }
  static bool overwrite_initial_state(const Node& n) { return detail::get<bool>(n, kIndex, 8); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 9); }
};
template <>
struct PortTraits<GdpBwd::In> {
  using Op = GdpBwd;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices", "dO", "d_final_state", "state_checkpoints"};
};
template <>
struct PortTraits<GdpBwd::Out> {
  using Op = GdpBwd;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"dQ", "dK", "dV", "dG", "dBeta", "d_initial_state", "d_a_log", "d_dt_bias"};
};

// gdp_summary: per-sequence state H from a zero seed and transition M (stored M^T)
struct GdpSummary {
  static constexpr std::size_t kIndex = 54;
  static constexpr std::string_view kName = "gdp_summary";
  enum class In : std::uint8_t { k, v, g, beta, cu_seqlens, a_log, dt_bias };
  enum class Out : std::uint8_t { H, M };
  using GateDomain = ops::GateDomain;
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 0); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 4); }
  static std::int64_t num_householder(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 5); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 6); }
};
template <>
struct PortTraits<GdpSummary::In> {
  using Op = GdpSummary;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"k", "v", "g", "beta", "cu_seqlens", "a_log", "dt_bias"};
};
template <>
struct PortTraits<GdpSummary::Out> {
  using Op = GdpSummary;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"H", "M"};
};

// gdp_summary_bwd: per-sequence incoming state gradient G from a zero outgoing gradient, and the transition M
struct GdpSummaryBwd {
  static constexpr std::size_t kIndex = 55;
  static constexpr std::string_view kName = "gdp_summary_bwd";
  enum class In : std::uint8_t { q, k, g, beta, dO, cu_seqlens, a_log, dt_bias };
  enum class Out : std::uint8_t { G, transition };
  using GateDomain = ops::GateDomain;
  static std::optional<double> scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_qk_l2norm(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool safe_gate(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool use_beta_sigmoid(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool allow_neg_eigval(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static GateDomain gate_domain(const Node& n) { return detail::get<GateDomain>(n, kIndex, 5); }
  static std::int64_t num_householder(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 6); }
  static bool batch_invariant(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static bool output_transition(const Node& n) { return detail::get<bool>(n, kIndex, 8); }
};
template <>
struct PortTraits<GdpSummaryBwd::In> {
  using Op = GdpSummaryBwd;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"q", "k", "g", "beta", "dO", "cu_seqlens", "a_log", "dt_bias"};
};
template <>
struct PortTraits<GdpSummaryBwd::Out> {
  using Op = GdpSummaryBwd;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"G", "transition"};
};

}  // namespace opgraph::ops
