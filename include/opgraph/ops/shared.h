// opgraph/ops/shared.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
// Part of opgraph/ops.h (include that): the port names and attribute accessors
// shared by several ops.
#pragma once

#include "opgraph/ops/enums.h"

namespace opgraph::ops {

// ---- port names shared by several ops (resolved by name on the node's op) ----
namespace in {
inline constexpr InName A{"A"};
inline constexpr InName ACCUM_COUNT{"ACCUM_COUNT"};
inline constexpr InName Attn_scale{"Attn_scale"};
inline constexpr InName B{"B"};
inline constexpr InName BIAS{"BIAS"};
inline constexpr InName Bias{"Bias"};
inline constexpr InName Block_mask{"Block_mask"};
inline constexpr InName COS{"COS"};
inline constexpr InName DOutput{"DOutput"};
inline constexpr InName DY{"DY"};
inline constexpr InName Descale_K{"Descale_K"};
inline constexpr InName Descale_K_T{"Descale_K_T"};
inline constexpr InName Descale_O{"Descale_O"};
inline constexpr InName Descale_Q{"Descale_Q"};
inline constexpr InName Descale_Q_T{"Descale_Q_T"};
inline constexpr InName Descale_S{"Descale_S"};
inline constexpr InName Descale_V{"Descale_V"};
inline constexpr InName Descale_dO{"Descale_dO"};
inline constexpr InName Descale_dO_T{"Descale_dO_T"};
inline constexpr InName Descale_dP{"Descale_dP"};
inline constexpr InName Dropout_mask{"Dropout_mask"};
inline constexpr InName Dropout_scale{"Dropout_scale"};
inline constexpr InName Dropout_scale_inv{"Dropout_scale_inv"};
inline constexpr InName EPSILON{"EPSILON"};
inline constexpr InName FirstTokenOffset{"FirstTokenOffset"};
inline constexpr InName INV_VARIANCE{"INV_VARIANCE"};
inline constexpr InName IN_0{"IN_0"};
inline constexpr InName IN_1{"IN_1"};
inline constexpr InName IN_2{"IN_2"};
inline constexpr InName K{"K"};
inline constexpr InName K_T{"K_T"};
inline constexpr InName K_override{"K_override"};
inline constexpr InName LeftBound{"LeftBound"};
inline constexpr InName MEAN{"MEAN"};
inline constexpr InName MOMENTUM{"MOMENTUM"};
inline constexpr InName M_override{"M_override"};
inline constexpr InName N_override{"N_override"};
inline constexpr InName O{"O"};
inline constexpr InName Offset{"Offset"};
inline constexpr InName PEER_STATS{"PEER_STATS"};
inline constexpr InName PREV_RUNNING_MEAN{"PREV_RUNNING_MEAN"};
inline constexpr InName PREV_RUNNING_VAR{"PREV_RUNNING_VAR"};
inline constexpr InName Page_table_K{"Page_table_K"};
inline constexpr InName Page_table_V{"Page_table_V"};
inline constexpr InName Q{"Q"};
inline constexpr InName Q_T{"Q_T"};
inline constexpr InName SCALE{"SCALE"};
inline constexpr InName SEQ_LEN_KV{"SEQ_LEN_KV"};
inline constexpr InName SEQ_LEN_Q{"SEQ_LEN_Q"};
inline constexpr InName SIN{"SIN"};
inline constexpr InName SINK_TOKEN{"SINK_TOKEN"};
inline constexpr InName SQ_SUM{"SQ_SUM"};
inline constexpr InName SUM{"SUM"};
inline constexpr InName Scale_O{"Scale_O"};
inline constexpr InName Scale_S{"Scale_S"};
inline constexpr InName Scale_dK{"Scale_dK"};
inline constexpr InName Scale_dP{"Scale_dP"};
inline constexpr InName Scale_dQ{"Scale_dQ"};
inline constexpr InName Scale_dV{"Scale_dV"};
inline constexpr InName Seed{"Seed"};
inline constexpr InName ShiftRightBound{"ShiftRightBound"};
inline constexpr InName Stats{"Stats"};
inline constexpr InName Token{"Token"};
inline constexpr InName TokenIndex{"TokenIndex"};
inline constexpr InName TokenKs{"TokenKs"};
inline constexpr InName V{"V"};
inline constexpr InName W{"W"};
inline constexpr InName Weight{"Weight"};
inline constexpr InName X{"X"};
inline constexpr InName a_log{"a_log"};
inline constexpr InName b{"b"};
inline constexpr InName beta{"beta"};
inline constexpr InName container{"container"};
inline constexpr InName cu_seqlens{"cu_seqlens"};
inline constexpr InName dO{"dO"};
inline constexpr InName dO_T{"dO_T"};
inline constexpr InName dO_f16{"dO_f16"};
inline constexpr InName d_final_state{"d_final_state"};
inline constexpr InName dt_bias{"dt_bias"};
inline constexpr InName g{"g"};
inline constexpr InName initial_state{"initial_state"};
inline constexpr InName k{"k"};
inline constexpr InName pageTable{"pageTable"};
inline constexpr InName q{"q"};
inline constexpr InName scale{"scale"};
inline constexpr InName seqLen{"seqLen"};
inline constexpr InName state_checkpoints{"state_checkpoints"};
inline constexpr InName state_indices{"state_indices"};
inline constexpr InName v{"v"};
inline constexpr InName w{"w"};
}  // namespace in
namespace out {
inline constexpr OutName Amax_O{"Amax_O"};
inline constexpr OutName Amax_S{"Amax_S"};
inline constexpr OutName Amax_dK{"Amax_dK"};
inline constexpr OutName Amax_dP{"Amax_dP"};
inline constexpr OutName Amax_dQ{"Amax_dQ"};
inline constexpr OutName Amax_dV{"Amax_dV"};
inline constexpr OutName C{"C"};
inline constexpr OutName DBIAS{"DBIAS"};
inline constexpr OutName DSCALE{"DSCALE"};
inline constexpr OutName DSINK_TOKEN{"DSINK_TOKEN"};
inline constexpr OutName DW{"DW"};
inline constexpr OutName DWeight{"DWeight"};
inline constexpr OutName DX{"DX"};
inline constexpr OutName EQ_BIAS{"EQ_BIAS"};
inline constexpr OutName EQ_SCALE{"EQ_SCALE"};
inline constexpr OutName EQ_SCALE_DY{"EQ_SCALE_DY"};
inline constexpr OutName EQ_SCALE_X{"EQ_SCALE_X"};
inline constexpr OutName G{"G"};
inline constexpr OutName H{"H"};
inline constexpr OutName INV_VARIANCE{"INV_VARIANCE"};
inline constexpr OutName Index{"Index"};
inline constexpr OutName M{"M"};
inline constexpr OutName MEAN{"MEAN"};
inline constexpr OutName Max{"Max"};
inline constexpr OutName NEXT_RUNNING_MEAN{"NEXT_RUNNING_MEAN"};
inline constexpr OutName NEXT_RUNNING_VAR{"NEXT_RUNNING_VAR"};
inline constexpr OutName O{"O"};
inline constexpr OutName OUT_0{"OUT_0"};
inline constexpr OutName Output{"Output"};
inline constexpr OutName RNG_DUMP{"RNG_DUMP"};
inline constexpr OutName SQ_SUM{"SQ_SUM"};
inline constexpr OutName SUM{"SUM"};
inline constexpr OutName Stats{"Stats"};
inline constexpr OutName Sum_exp{"Sum_exp"};
inline constexpr OutName Y{"Y"};
inline constexpr OutName dB{"dB"};
inline constexpr OutName dBeta{"dBeta"};
inline constexpr OutName dBias{"dBias"};
inline constexpr OutName dG{"dG"};
inline constexpr OutName dK{"dK"};
inline constexpr OutName dQ{"dQ"};
inline constexpr OutName dV{"dV"};
inline constexpr OutName dW{"dW"};
inline constexpr OutName d_a_log{"d_a_log"};
inline constexpr OutName d_dt_bias{"d_dt_bias"};
inline constexpr OutName d_initial_state{"d_initial_state"};
inline constexpr OutName final_state{"final_state"};
inline constexpr OutName scale{"scale"};
inline constexpr OutName state_checkpoints{"state_checkpoints"};
inline constexpr OutName transition{"transition"};
inline constexpr OutName yOut{"yOut"};
}  // namespace out

// ---- attribute accessors shared by every op that declares the attribute ----
// (the node's op must declare it: std::logic_error otherwise)
namespace attr {
inline double relu_lower_clip(const Node& n) { return detail::get_named<double>(n, "relu_lower_clip"); }
inline std::optional<double> relu_upper_clip(const Node& n) { return detail::get_opt_named<double>(n, "relu_upper_clip"); }
inline double relu_lower_clip_slope(const Node& n) { return detail::get_named<double>(n, "relu_lower_clip_slope"); }
inline double swish_beta(const Node& n) { return detail::get_named<double>(n, "swish_beta"); }
inline double elu_alpha(const Node& n) { return detail::get_named<double>(n, "elu_alpha"); }
inline double softplus_beta(const Node& n) { return detail::get_named<double>(n, "softplus_beta"); }
inline std::int64_t top_k(const Node& n) { return detail::get_named<std::int64_t>(n, "top_k"); }
inline bool is_deterministic(const Node& n) { return detail::get_named<bool>(n, "is_deterministic"); }
inline std::optional<Distribution> distribution(const Node& n) { return detail::get_opt_named<Distribution>(n, "distribution"); }
inline std::optional<std::vector<std::int64_t>> dim(const Node& n) { return detail::get_opt_named<std::vector<std::int64_t>>(n, "dim"); }
inline std::optional<std::vector<std::int64_t>> stride(const Node& n) { return detail::get_opt_named<std::vector<std::int64_t>>(n, "stride"); }
inline std::optional<std::int64_t> seed(const Node& n) { return detail::get_opt_named<std::int64_t>(n, "seed"); }
inline std::optional<double> bernoulli_probability(const Node& n) { return detail::get_opt_named<double>(n, "bernoulli_probability"); }
inline double uniform_dist_minimum(const Node& n) { return detail::get_named<double>(n, "uniform_dist_minimum"); }
inline double uniform_dist_maximum(const Node& n) { return detail::get_named<double>(n, "uniform_dist_maximum"); }
inline double normal_dist_mean(const Node& n) { return detail::get_named<double>(n, "normal_dist_mean"); }
inline double normal_dist_standard_deviation(const Node& n) { return detail::get_named<double>(n, "normal_dist_standard_deviation"); }
inline ReshapeMode reshape_mode(const Node& n) { return detail::get_named<ReshapeMode>(n, "reshape_mode"); }
inline std::optional<std::vector<std::int64_t>> permutation(const Node& n) { return detail::get_opt_named<std::vector<std::int64_t>>(n, "permutation"); }
inline std::optional<std::vector<std::int64_t>> slices(const Node& n) { return detail::get_opt_named<std::vector<std::int64_t>>(n, "slices"); }
inline std::optional<std::vector<std::int64_t>> strides(const Node& n) { return detail::get_opt_named<std::vector<std::int64_t>>(n, "strides"); }
inline std::optional<std::int64_t> in_place_index(const Node& n) { return detail::get_opt_named<std::int64_t>(n, "in_place_index"); }
inline std::optional<ResamplingMode> resampling_mode(const Node& n) { return detail::get_opt_named<ResamplingMode>(n, "resampling_mode"); }
inline std::optional<PaddingMode> padding_mode(const Node& n) { return detail::get_opt_named<PaddingMode>(n, "padding_mode"); }
inline std::optional<std::vector<std::int64_t>> window(const Node& n) { return detail::get_opt_named<std::vector<std::int64_t>>(n, "window"); }
inline std::optional<std::vector<std::int64_t>> pre_padding(const Node& n) { return detail::get_opt_named<std::vector<std::int64_t>>(n, "pre_padding"); }
inline std::optional<std::vector<std::int64_t>> post_padding(const Node& n) { return detail::get_opt_named<std::vector<std::int64_t>>(n, "post_padding"); }
inline bool generate_index(const Node& n) { return detail::get_named<bool>(n, "generate_index"); }
inline ComparisonMode comparison_mode(const Node& n) { return detail::get_named<ComparisonMode>(n, "comparison_mode"); }
inline bool transpose(const Node& n) { return detail::get_named<bool>(n, "transpose"); }
inline bool is_negative_scale(const Node& n) { return detail::get_named<bool>(n, "is_negative_scale"); }
inline std::optional<ForwardPhase> forward_phase(const Node& n) { return detail::get_opt_named<ForwardPhase>(n, "forward_phase"); }
inline bool has_dbias(const Node& n) { return detail::get_named<bool>(n, "has_dbias"); }
inline Rotation rotation(const Node& n) { return detail::get_named<Rotation>(n, "rotation"); }
inline std::optional<std::vector<std::int64_t>> dilation(const Node& n) { return detail::get_opt_named<std::vector<std::int64_t>>(n, "dilation"); }
inline ConvolutionMode convolution_mode(const Node& n) { return detail::get_named<ConvolutionMode>(n, "convolution_mode"); }
inline bool generate_stats(const Node& n) { return detail::get_named<bool>(n, "generate_stats"); }
inline bool score_max(const Node& n) { return detail::get_named<bool>(n, "score_max"); }
inline bool score_sum_exp(const Node& n) { return detail::get_named<bool>(n, "score_sum_exp"); }
inline std::optional<double> attn_scale(const Node& n) { return detail::get_opt_named<double>(n, "attn_scale"); }
inline bool use_alibi_mask(const Node& n) { return detail::get_named<bool>(n, "use_alibi_mask"); }
inline bool use_padding_mask(const Node& n) { return detail::get_named<bool>(n, "use_padding_mask"); }
inline bool use_causal_mask(const Node& n) { return detail::get_named<bool>(n, "use_causal_mask"); }
inline bool use_causal_mask_bottom_right(const Node& n) { return detail::get_named<bool>(n, "use_causal_mask_bottom_right"); }
inline std::optional<DiagonalAlignment> diagonal_alignment(const Node& n) { return detail::get_opt_named<DiagonalAlignment>(n, "diagonal_alignment"); }
inline std::optional<std::int64_t> diagonal_band_left_bound(const Node& n) { return detail::get_opt_named<std::int64_t>(n, "diagonal_band_left_bound"); }
inline std::optional<std::int64_t> diagonal_band_right_bound(const Node& n) { return detail::get_opt_named<std::int64_t>(n, "diagonal_band_right_bound"); }
inline std::optional<std::int64_t> sliding_window_length(const Node& n) { return detail::get_opt_named<std::int64_t>(n, "sliding_window_length"); }
inline std::optional<double> dropout_probability(const Node& n) { return detail::get_opt_named<double>(n, "dropout_probability"); }
inline bool rng_dump(const Node& n) { return detail::get_named<bool>(n, "rng_dump"); }
inline std::optional<std::int64_t> paged_attention_max_seq_len_kv(const Node& n) { return detail::get_opt_named<std::int64_t>(n, "paged_attention_max_seq_len_kv"); }
inline Implementation implementation(const Node& n) { return detail::get_named<Implementation>(n, "implementation"); }
inline bool unfuse_fma(const Node& n) { return detail::get_named<bool>(n, "unfuse_fma"); }
inline bool dbias(const Node& n) { return detail::get_named<bool>(n, "dbias"); }
inline bool dsink_token(const Node& n) { return detail::get_named<bool>(n, "dsink_token"); }
inline std::optional<std::int64_t> max_total_seq_len_q(const Node& n) { return detail::get_opt_named<std::int64_t>(n, "max_total_seq_len_q"); }
inline std::optional<std::int64_t> max_total_seq_len_kv(const Node& n) { return detail::get_opt_named<std::int64_t>(n, "max_total_seq_len_kv"); }
inline bool use_deterministic_algorithm(const Node& n) { return detail::get_named<bool>(n, "use_deterministic_algorithm"); }
inline std::optional<double> scale(const Node& n) { return detail::get_opt_named<double>(n, "scale"); }
inline bool use_qk_l2norm(const Node& n) { return detail::get_named<bool>(n, "use_qk_l2norm"); }
inline bool safe_gate(const Node& n) { return detail::get_named<bool>(n, "safe_gate"); }
inline bool use_beta_sigmoid(const Node& n) { return detail::get_named<bool>(n, "use_beta_sigmoid"); }
inline bool allow_neg_eigval(const Node& n) { return detail::get_named<bool>(n, "allow_neg_eigval"); }
inline GateDomain gate_domain(const Node& n) { return detail::get_named<GateDomain>(n, "gate_domain"); }
inline bool output_final_state(const Node& n) { return detail::get_named<bool>(n, "output_final_state"); }
inline std::int64_t checkpoint_every_n_tokens(const Node& n) { return detail::get_named<std::int64_t>(n, "checkpoint_every_n_tokens"); }
inline bool overwrite_initial_state(const Node& n) { return detail::get_named<bool>(n, "overwrite_initial_state"); }
inline bool batch_invariant(const Node& n) { return detail::get_named<bool>(n, "batch_invariant"); }
inline bool output_transition(const Node& n) { return detail::get_named<bool>(n, "output_transition"); }
inline double lower_bound(const Node& n) { return detail::get_named<double>(n, "lower_bound"); }
inline std::int64_t num_householder(const Node& n) { return detail::get_named<std::int64_t>(n, "num_householder"); }
}  // namespace attr

}  // namespace opgraph::ops
