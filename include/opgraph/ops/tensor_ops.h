// opgraph/ops/tensor_ops.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
// Part of opgraph/ops.h (include that): the tensor (reduction, rng, layout, resampling, masking, paged cache, block scale) ops.
#pragma once

#include "opgraph/ops/enums.h"

namespace opgraph::ops {

// ---- tensor (reduction, rng, layout, resampling, masking, paged cache, block scale) ops ----

// reduction: reduce X over the axes where the user-set Y dim is 1
struct Reduction {
  static constexpr std::size_t kIndex = 4;
  static constexpr std::string_view kName = "reduction";
  enum class In : std::uint8_t { X };
  enum class Out : std::uint8_t { Y };
  using Mode = ops::ReductionMode;
  static std::optional<ReductionMode> mode(const Node& n) { return detail::get_opt<ReductionMode>(n, kIndex, 0); }  // required
  static bool is_deterministic(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
};
template <>
struct PortTraits<Reduction::In> {
  using Op = Reduction;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X"};
};
template <>
struct PortTraits<Reduction::Out> {
  using Op = Reduction;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// rng: counter-based random numbers (Philox-4x32-10) from seed and offset
struct Rng {
  static constexpr std::size_t kIndex = 5;
  static constexpr std::string_view kName = "rng";
  enum class In : std::uint8_t { Seed, Offset };
  enum class Out : std::uint8_t { Y };
  using Distribution = ops::Distribution;
  static std::optional<Distribution> distribution(const Node& n) { return detail::get_opt<Distribution>(n, kIndex, 0); }  // required
  static std::optional<std::vector<std::int64_t>> dim(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 1); }  // required
  static std::optional<std::vector<std::int64_t>> stride(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 2); }
  static std::optional<std::int64_t> seed(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 3); }
  static std::optional<double> bernoulli_probability(const Node& n) { return detail::get_opt<double>(n, kIndex, 4); }
  static double uniform_dist_minimum(const Node& n) { return detail::get<double>(n, kIndex, 5); }
  static double uniform_dist_maximum(const Node& n) { return detail::get<double>(n, kIndex, 6); }
  static double normal_dist_mean(const Node& n) { return detail::get<double>(n, kIndex, 7); }
  static double normal_dist_standard_deviation(const Node& n) { return detail::get<double>(n, kIndex, 8); }
};
template <>
struct PortTraits<Rng::In> {
  using Op = Rng;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"Seed", "Offset"};
};
template <>
struct PortTraits<Rng::Out> {
  using Op = Rng;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// reshape: the same elements under new dims (a view, or a logical copy)
struct Reshape {
  static constexpr std::size_t kIndex = 6;
  static constexpr std::string_view kName = "reshape";
  enum class In : std::uint8_t { X };
  enum class Out : std::uint8_t { Y };
  using ReshapeMode = ops::ReshapeMode;
  static ReshapeMode reshape_mode(const Node& n) { return detail::get<ReshapeMode>(n, kIndex, 0); }
  static std::optional<std::vector<std::int64_t>> dim(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 1); }
  static std::optional<std::vector<std::int64_t>> stride(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 2); }
};
template <>
struct PortTraits<Reshape::In> {
  using Op = Reshape;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X"};
};
template <>
struct PortTraits<Reshape::Out> {
  using Op = Reshape;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// transpose: permute X's axes
struct Transpose {
  static constexpr std::size_t kIndex = 7;
  static constexpr std::string_view kName = "transpose";
  enum class In : std::uint8_t { X };
  enum class Out : std::uint8_t { Y };
  static std::optional<std::vector<std::int64_t>> permutation(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 0); }  // required
};
template <>
struct PortTraits<Transpose::In> {
  using Op = Transpose;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X"};
};
template <>
struct PortTraits<Transpose::Out> {
  using Op = Transpose;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// slice: X[start:end:stride] on every axis
struct Slice {
  static constexpr std::size_t kIndex = 8;
  static constexpr std::string_view kName = "slice";
  enum class In : std::uint8_t { X };
  enum class Out : std::uint8_t { Y };
  static std::optional<std::vector<std::int64_t>> slices(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 0); }  // required
  static std::optional<std::vector<std::int64_t>> strides(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 1); }
};
template <>
struct PortTraits<Slice::In> {
  using Op = Slice;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X"};
};
template <>
struct PortTraits<Slice::Out> {
  using Op = Slice;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// concatenate: join tensors along an axis
struct Concatenate {
  static constexpr std::size_t kIndex = 9;
  static constexpr std::string_view kName = "concatenate";
  enum class In : std::uint8_t { X };
  enum class Out : std::uint8_t { Y };
  static std::optional<std::int64_t> axis(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 0); }  // required
  static std::optional<std::int64_t> in_place_index(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 1); }
};
template <>
struct PortTraits<Concatenate::In> {
  using Op = Concatenate;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X"};
};
template <>
struct PortTraits<Concatenate::Out> {
  using Op = Concatenate;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// resample: pooling (max/avg with padding modes) or nearest/bilinear interpolation
struct Resample {
  static constexpr std::size_t kIndex = 10;
  static constexpr std::string_view kName = "resample";
  enum class In : std::uint8_t { X };
  enum class Out : std::uint8_t { Y, Index };
  using ResamplingMode = ops::ResamplingMode;
  using PaddingMode = ops::PaddingMode;
  static std::optional<ResamplingMode> resampling_mode(const Node& n) { return detail::get_opt<ResamplingMode>(n, kIndex, 0); }  // required
  static std::optional<PaddingMode> padding_mode(const Node& n) { return detail::get_opt<PaddingMode>(n, kIndex, 1); }
  static std::optional<std::vector<std::int64_t>> window(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 2); }
  static std::optional<std::vector<std::int64_t>> stride(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 3); }
  static std::optional<std::vector<std::int64_t>> pre_padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 4); }
  static std::optional<std::vector<std::int64_t>> post_padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 5); }
  static bool generate_index(const Node& n) { return detail::get<bool>(n, kIndex, 6); }
};
template <>
struct PortTraits<Resample::In> {
  using Op = Resample;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X"};
};
template <>
struct PortTraits<Resample::Out> {
  using Op = Resample;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y", "Index"};
};

// diagonal_band_mask: fill X outside a diagonal band (causal, sliding window) with B
struct DiagonalBandMask {
  static constexpr std::size_t kIndex = 11;
  static constexpr std::string_view kName = "diagonal_band_mask";
  enum class In : std::uint8_t { X, B, SEQ_LEN_Q, SEQ_LEN_KV, LeftBound, ShiftRightBound };
  enum class Out : std::uint8_t { Y };
  using ComparisonMode = ops::ComparisonMode;
  static ComparisonMode comparison_mode(const Node& n) { return detail::get<ComparisonMode>(n, kIndex, 0); }
};
template <>
struct PortTraits<DiagonalBandMask::In> {
  using Op = DiagonalBandMask;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "B", "SEQ_LEN_Q", "SEQ_LEN_KV", "LeftBound", "ShiftRightBound"};
};
template <>
struct PortTraits<DiagonalBandMask::Out> {
  using Op = DiagonalBandMask;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// paged_cache_load: gather a paged K/V cache into a dense [B, H, S, D] tensor
struct PagedCacheLoad {
  static constexpr std::size_t kIndex = 12;
  static constexpr std::string_view kName = "paged_cache_load";
  enum class In : std::uint8_t { container, seqLen, pageTable };
  enum class Out : std::uint8_t { yOut };
};
template <>
struct PortTraits<PagedCacheLoad::In> {
  using Op = PagedCacheLoad;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"container", "seqLen", "pageTable"};
};
template <>
struct PortTraits<PagedCacheLoad::Out> {
  using Op = PagedCacheLoad;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"yOut"};
};

// block_scale_quantize: quantize to MXFP8 / MXFP4 / NVFP4 with one scale per block
struct BlockScaleQuantize {
  static constexpr std::size_t kIndex = 13;
  static constexpr std::string_view kName = "block_scale_quantize";
  enum class In : std::uint8_t { X };
  enum class Out : std::uint8_t { Y, scale };
  static std::optional<std::int64_t> block_size(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 0); }  // required
  static std::int64_t axis(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 1); }
  static bool transpose(const Node& n) { return detail::get<bool>(n, kIndex, 2); }
};
template <>
struct PortTraits<BlockScaleQuantize::In> {
  using Op = BlockScaleQuantize;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X"};
};
template <>
struct PortTraits<BlockScaleQuantize::Out> {
  using Op = BlockScaleQuantize;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y", "scale"};
};

// block_scale_dequantize: multiply block-scaled data by its per-block scales
struct BlockScaleDequantize {
  static constexpr std::size_t kIndex = 14;
  static constexpr std::string_view kName = "block_scale_dequantize";
  enum class In : std::uint8_t { X, scale };
  enum class Out : std::uint8_t { Y };
  static std::optional<std::vector<std::int64_t>> block_size(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 0); }  // required
  static bool is_negative_scale(const Node& n) { return detail::get<bool>(n, kIndex, 1); }
};
template <>
struct PortTraits<BlockScaleDequantize::In> {
  using Op = BlockScaleDequantize;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "scale"};
};
template <>
struct PortTraits<BlockScaleDequantize::Out> {
  using Op = BlockScaleDequantize;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

}  // namespace opgraph::ops
