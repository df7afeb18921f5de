// opgraph/ops/sdpa.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
// Part of opgraph/ops.h (include that): the scaled dot-product attention ops.
#pragma once

#include "opgraph/ops/enums.h"

namespace opgraph::ops {

// ---- scaled dot-product attention ops ----

// sdpa: scaled dot-product attention forward (masks, bias, alibi, dropout, paged, THD, GQA)
struct Sdpa {
  static constexpr std::size_t kIndex = 34;
  static constexpr std::string_view kName = "sdpa";
  enum class In : std::uint8_t { Q, K, V, Attn_scale, Bias, SEQ_LEN_Q, SEQ_LEN_KV, Seed, Offset, Dropout_mask, Dropout_scale, Page_table_K, Page_table_V, Block_mask, SINK_TOKEN };
  enum class Out : std::uint8_t { O, Stats, Max, Sum_exp, RNG_DUMP };
  using DiagonalAlignment = ops::DiagonalAlignment;
  using Implementation = ops::Implementation;
  static bool generate_stats(const Node& n) { return detail::get<bool>(n, kIndex, 0); }
  static bool score_max(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool score_sum_exp(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static std::optional<double> attn_scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 3); }
  static bool use_alibi_mask(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static bool use_padding_mask(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
  static bool use_causal_mask(const Node& n) { return detail::get<bool>(n, kIndex, 6); }
  static bool use_causal_mask_bottom_right(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static std::optional<DiagonalAlignment> diagonal_alignment(const Node& n) { return detail::get_opt<DiagonalAlignment>(n, kIndex, 8); }
  static std::optional<std::int64_t> diagonal_band_left_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 9); }
  static std::optional<std::int64_t> diagonal_band_right_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 10); }
  static std::optional<std::int64_t> sliding_window_length(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 11); }
  static std::optional<double> dropout_probability(const Node& n) { return detail::get_opt<double>(n, kIndex, 12); }
  static bool rng_dump(const Node& n) { return detail::get<bool>(n, kIndex, 13); }
  static std::optional<std::int64_t> paged_attention_max_seq_len_kv(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 14); }
  static Implementation implementation(const Node& n) { return detail::get<Implementation>(n, kIndex, 15); }
  static bool unfuse_fma(const Node& n) { return detail::get<bool>(n, kIndex, 16); }
};
template <>
struct PortTraits<Sdpa::In> {
  using Op = Sdpa;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"Q", "K", "V", "Attn_scale", "Bias", "SEQ_LEN_Q", "SEQ_LEN_KV", "Seed", "Offset", "Dropout_mask", "Dropout_scale", "Page_table_K", "Page_table_V", "Block_mask", "SINK_TOKEN"};
};
template <>
struct PortTraits<Sdpa::Out> {
  using Op = Sdpa;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"O", "Stats", "Max", "Sum_exp", "RNG_DUMP"};
};

// sdpa_backward: gradients of sdpa: dQ, dK, dV (+ dBias, DSINK_TOKEN)
struct SdpaBackward {
  static constexpr std::size_t kIndex = 35;
  static constexpr std::string_view kName = "sdpa_backward";
  enum class In : std::uint8_t { Q, K, V, O, dO, Stats, Attn_scale, Bias, SEQ_LEN_Q, SEQ_LEN_KV, Seed, Offset, Dropout_mask, Dropout_scale, Dropout_scale_inv, SINK_TOKEN };
  enum class Out : std::uint8_t { dQ, dK, dV, dBias, RNG_DUMP, DSINK_TOKEN };
  using DiagonalAlignment = ops::DiagonalAlignment;
  static std::optional<double> attn_scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_alibi_mask(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool use_padding_mask(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool use_causal_mask(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool use_causal_mask_bottom_right(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static std::optional<DiagonalAlignment> diagonal_alignment(const Node& n) { return detail::get_opt<DiagonalAlignment>(n, kIndex, 5); }
  static std::optional<std::int64_t> diagonal_band_left_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 6); }
  static std::optional<std::int64_t> diagonal_band_right_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 7); }
  static std::optional<std::int64_t> sliding_window_length(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 8); }
  static std::optional<double> dropout_probability(const Node& n) { return detail::get_opt<double>(n, kIndex, 9); }
  static bool rng_dump(const Node& n) { return detail::get<bool>(n, kIndex, 10); }
  static bool dbias(const Node& n) { return detail::get<bool>(n, kIndex, 11); }
  static bool dsink_token(const Node& n) { return detail::get<bool>(n, kIndex, 12); }
  static std::optional<std::int64_t> max_total_seq_len_q(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 13); }
  static std::optional<std::int64_t> max_total_seq_len_kv(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 14); }
  static bool use_deterministic_algorithm(const Node& n) { return detail::get<bool>(n, kIndex, 15); }
};
template <>
struct PortTraits<SdpaBackward::In> {
  using Op = SdpaBackward;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"Q", "K", "V", "O", "dO", "Stats", "Attn_scale", "Bias", "SEQ_LEN_Q", "SEQ_LEN_KV", "Seed", "Offset", "Dropout_mask", "Dropout_scale", "Dropout_scale_inv", "SINK_TOKEN"};
};
template <>
struct PortTraits<SdpaBackward::Out> {
  using Op = SdpaBackward;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"dQ", "dK", "dV", "dBias", "RNG_DUMP", "DSINK_TOKEN"};
};

// sdpa_fp8: sdpa on per-tensor scaled fp8 Q/K/V with Amax of S and O
struct SdpaFp8 {
  static constexpr std::size_t kIndex = 36;
  static constexpr std::string_view kName = "sdpa_fp8";
  enum class In : std::uint8_t { Q, K, V, Descale_Q, Descale_K, Descale_V, Descale_S, Scale_S, Scale_O, Attn_scale, Bias, SEQ_LEN_Q, SEQ_LEN_KV, Seed, Offset, Dropout_mask, Dropout_scale, Page_table_K, Page_table_V, SINK_TOKEN };
  enum class Out : std::uint8_t { O, Stats, Max, Sum_exp, RNG_DUMP, Amax_S, Amax_O };
  using DiagonalAlignment = ops::DiagonalAlignment;
  using Implementation = ops::Implementation;
  static bool generate_stats(const Node& n) { return detail::get<bool>(n, kIndex, 0); }
  static bool score_max(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool score_sum_exp(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static std::optional<double> attn_scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 3); }
  static bool use_alibi_mask(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static bool use_padding_mask(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
  static bool use_causal_mask(const Node& n) { return detail::get<bool>(n, kIndex, 6); }
  static bool use_causal_mask_bottom_right(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static std::optional<DiagonalAlignment> diagonal_alignment(const Node& n) { return detail::get_opt<DiagonalAlignment>(n, kIndex, 8); }
  static std::optional<std::int64_t> diagonal_band_left_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 9); }
  static std::optional<std::int64_t> diagonal_band_right_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 10); }
  static std::optional<std::int64_t> sliding_window_length(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 11); }
  static std::optional<double> dropout_probability(const Node& n) { return detail::get_opt<double>(n, kIndex, 12); }
  static bool rng_dump(const Node& n) { return detail::get<bool>(n, kIndex, 13); }
  static std::optional<std::int64_t> paged_attention_max_seq_len_kv(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 14); }
  static Implementation implementation(const Node& n) { return detail::get<Implementation>(n, kIndex, 15); }
  static bool unfuse_fma(const Node& n) { return detail::get<bool>(n, kIndex, 16); }
};
template <>
struct PortTraits<SdpaFp8::In> {
  using Op = SdpaFp8;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"Q", "K", "V", "Descale_Q", "Descale_K", "Descale_V", "Descale_S", "Scale_S", "Scale_O", "Attn_scale", "Bias", "SEQ_LEN_Q", "SEQ_LEN_KV", "Seed", "Offset", "Dropout_mask", "Dropout_scale", "Page_table_K", "Page_table_V", "SINK_TOKEN"};
};
template <>
struct PortTraits<SdpaFp8::Out> {
  using Op = SdpaFp8;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"O", "Stats", "Max", "Sum_exp", "RNG_DUMP", "Amax_S", "Amax_O"};
};

// sdpa_fp8_backward: gradients of sdpa_fp8 with per-tensor scales and Amax of dQ, dK, dV, dP
struct SdpaFp8Backward {
  static constexpr std::size_t kIndex = 37;
  static constexpr std::string_view kName = "sdpa_fp8_backward";
  enum class In : std::uint8_t { Q, K, V, O, dO, Stats, Descale_Q, Descale_K, Descale_V, Descale_O, Descale_dO, Descale_S, Descale_dP, Scale_S, Scale_dQ, Scale_dK, Scale_dV, Scale_dP, dO_f16, Attn_scale, Bias, SEQ_LEN_Q, SEQ_LEN_KV, Seed, Offset, Dropout_mask, Dropout_scale, Dropout_scale_inv, SINK_TOKEN };
  enum class Out : std::uint8_t { dQ, dK, dV, Amax_dQ, Amax_dK, Amax_dV, Amax_dP, DSINK_TOKEN };
  using DiagonalAlignment = ops::DiagonalAlignment;
  static std::optional<double> attn_scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_alibi_mask(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool use_padding_mask(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool use_causal_mask(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool use_causal_mask_bottom_right(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static std::optional<DiagonalAlignment> diagonal_alignment(const Node& n) { return detail::get_opt<DiagonalAlignment>(n, kIndex, 5); }
  static std::optional<std::int64_t> diagonal_band_left_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 6); }
  static std::optional<std::int64_t> diagonal_band_right_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 7); }
  static std::optional<std::int64_t> sliding_window_length(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 8); }
  static std::optional<double> dropout_probability(const Node& n) { return detail::get_opt<double>(n, kIndex, 9); }
  static bool dsink_token(const Node& n) { return detail::get<bool>(n, kIndex, 10); }
  static std::optional<std::int64_t> max_total_seq_len_q(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 11); }
  static std::optional<std::int64_t> max_total_seq_len_kv(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 12); }
  static bool use_deterministic_algorithm(const Node& n) { return detail::get<bool>(n, kIndex, 13); }
};
template <>
struct PortTraits<SdpaFp8Backward::In> {
  using Op = SdpaFp8Backward;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"Q", "K", "V", "O", "dO", "Stats", "Descale_Q", "Descale_K", "Descale_V", "Descale_O", "Descale_dO", "Descale_S", "Descale_dP", "Scale_S", "Scale_dQ", "Scale_dK", "Scale_dV", "Scale_dP", "dO_f16", "Attn_scale", "Bias", "SEQ_LEN_Q", "SEQ_LEN_KV", "Seed", "Offset", "Dropout_mask", "Dropout_scale", "Dropout_scale_inv", "SINK_TOKEN"};
};
template <>
struct PortTraits<SdpaFp8Backward::Out> {
  using Op = SdpaFp8Backward;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"dQ", "dK", "dV", "Amax_dQ", "Amax_dK", "Amax_dV", "Amax_dP", "DSINK_TOKEN"};
};

// sdpa_mxfp8: sdpa on MXFP8 Q/K/V (E8M0 block scales, F8_128x4) with Amax of O
struct SdpaMxfp8 {
  static constexpr std::size_t kIndex = 38;
  static constexpr std::string_view kName = "sdpa_mxfp8";
  enum class In : std::uint8_t { Q, K, V, Descale_Q, Descale_K, Descale_V, Attn_scale, Bias, SEQ_LEN_Q, SEQ_LEN_KV, Seed, Offset, Dropout_mask, Dropout_scale, Page_table_K, Page_table_V, SINK_TOKEN };
  enum class Out : std::uint8_t { O, Stats, Max, Sum_exp, RNG_DUMP, Amax_O };
  using DiagonalAlignment = ops::DiagonalAlignment;
  using Implementation = ops::Implementation;
  static bool generate_stats(const Node& n) { return detail::get<bool>(n, kIndex, 0); }
  static bool score_max(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool score_sum_exp(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static std::optional<double> attn_scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 3); }
  static bool use_alibi_mask(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static bool use_padding_mask(const Node& n) { return detail::get<bool>(n, kIndex, 5); }
  static bool use_causal_mask(const Node& n) { return detail::get<bool>(n, kIndex, 6); }
  static bool use_causal_mask_bottom_right(const Node& n) { return detail::get<bool>(n, kIndex, 7); }
  static std::optional<DiagonalAlignment> diagonal_alignment(const Node& n) { return detail::get_opt<DiagonalAlignment>(n, kIndex, 8); }
  static std::optional<std::int64_t> diagonal_band_left_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 9); }
  static std::optional<std::int64_t> diagonal_band_right_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 10); }
  static std::optional<std::int64_t> sliding_window_length(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 11); }
  static std::optional<double> dropout_probability(const Node& n) { return detail::get_opt<double>(n, kIndex, 12); }
  static bool rng_dump(const Node& n) { return detail::get<bool>(n, kIndex, 13); }
  static std::optional<std::int64_t> paged_attention_max_seq_len_kv(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 14); }
  static Implementation implementation(const Node& n) { return detail::get<Implementation>(n, kIndex, 15); }
  static bool unfuse_fma(const Node& n) { return detail::get<bool>(n, kIndex, 16); }
};
template <>
struct PortTraits<SdpaMxfp8::In> {
  using Op = SdpaMxfp8;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"Q", "K", "V", "Descale_Q", "Descale_K", "Descale_V", "Attn_scale", "Bias", "SEQ_LEN_Q", "SEQ_LEN_KV", "Seed", "Offset", "Dropout_mask", "Dropout_scale", "Page_table_K", "Page_table_V", "SINK_TOKEN"};
};
template <>
struct PortTraits<SdpaMxfp8::Out> {
  using Op = SdpaMxfp8;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"O", "Stats", "Max", "Sum_exp", "RNG_DUMP", "Amax_O"};
};

// sdpa_mxfp8_backward: gradients of sdpa_mxfp8 from MXFP8 operands and their transposed copies
struct SdpaMxfp8Backward {
  static constexpr std::size_t kIndex = 39;
  static constexpr std::string_view kName = "sdpa_mxfp8_backward";
  enum class In : std::uint8_t { Q, Q_T, K, K_T, V, O, dO, dO_T, Stats, Descale_Q, Descale_Q_T, Descale_K, Descale_K_T, Descale_V, Descale_dO, Descale_dO_T, Attn_scale, Bias, SEQ_LEN_Q, SEQ_LEN_KV, Seed, Offset, Dropout_mask, Dropout_scale, Dropout_scale_inv, SINK_TOKEN };
  enum class Out : std::uint8_t { dQ, dK, dV, Amax_dQ, Amax_dK, Amax_dV, DSINK_TOKEN };
  using DiagonalAlignment = ops::DiagonalAlignment;
  static std::optional<double> attn_scale(const Node& n) { return detail::get_opt<double>(n, kIndex, 0); }
  static bool use_alibi_mask(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
  static bool use_padding_mask(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
  static bool use_causal_mask(const Node& n) { return detail::get<bool>(n, kIndex, 3); }
  static bool use_causal_mask_bottom_right(const Node& n) { return detail::get<bool>(n, kIndex, 4); }
  static std::optional<DiagonalAlignment> diagonal_alignment(const Node& n) { return detail::get_opt<DiagonalAlignment>(n, kIndex, 5); }
  static std::optional<std::int64_t> diagonal_band_left_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 6); }
  static std::optional<std::int64_t> diagonal_band_right_bound(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 7); }
  static std::optional<std::int64_t> sliding_window_length(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 8); }
  static std::optional<double> dropout_probability(const Node& n) { return detail::get_opt<double>(n, kIndex, 9); }
  static bool dsink_token(const Node& n) { return detail::get<bool>(n, kIndex, 10); }
  static std::optional<std::int64_t> max_total_seq_len_q(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 11); }
  static std::optional<std::int64_t> max_total_seq_len_kv(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 12); }
  static bool use_deterministic_algorithm(const Node& n) { return detail::get<bool>(n, kIndex, 13); }
};
template <>
struct PortTraits<SdpaMxfp8Backward::In> {
  using Op = SdpaMxfp8Backward;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"Q", "Q_T", "K", "K_T", "V", "O", "dO", "dO_T", "Stats", "Descale_Q", "Descale_Q_T", "Descale_K", "Descale_K_T", "Descale_V", "Descale_dO", "Descale_dO_T", "Attn_scale", "Bias", "SEQ_LEN_Q", "SEQ_LEN_KV", "Seed", "Offset", "Dropout_mask", "Dropout_scale", "Dropout_scale_inv", "SINK_TOKEN"};
};
template <>
struct PortTraits<SdpaMxfp8Backward::Out> {
  using Op = SdpaMxfp8Backward;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"dQ", "dK", "dV", "Amax_dQ", "Amax_dK", "Amax_dV", "DSINK_TOKEN"};
};

}  // namespace opgraph::ops
