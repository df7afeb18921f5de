// opgraph/ops.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
//
// Per op (registry order): a struct with kIndex (its position in all_op_specs()),
// kName, the port enums In / Out (record positions; Node::input / output /
// inputs_of take them), the enum attribute domains it uses and one accessor per
// attribute: the value as set, else the record's default (std::optional when
// the record has no default). Then the shared forms: ops::in / ops::out port
// names and ops::attr accessors. Support code: opgraph/op_typed.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opgraph/op_typed.h"

namespace opgraph::ops {

// ---- enum attribute domains ----
enum class PointwiseMode : std::uint8_t { ADD, MUL, SQRT, MAX, MIN, RELU_FWD, TANH_FWD, SIGMOID_FWD, ELU_FWD, GELU_FWD, SOFTPLUS_FWD, SWISH_FWD, RELU_BWD, TANH_BWD, SIGMOID_BWD, ELU_BWD, GELU_BWD, SOFTPLUS_BWD, SWISH_BWD, ERF, IDENTITY, GELU_APPROX_TANH_BWD, GELU_APPROX_TANH_FWD, GEN_INDEX, BINARY_SELECT, EXP, LOG, NEG, MOD, POW, ABS, CEIL, COS, FLOOR, RSQRT, SIN, LOGICAL_NOT, TAN, SUB, ADD_SQUARE, DIV, CMP_EQ, CMP_NEQ, CMP_GT, CMP_GE, CMP_LT, CMP_LE, LOGICAL_AND, LOGICAL_OR, RECIPROCAL };
template <>
struct EnumDomain<PointwiseMode> {
  static constexpr std::string_view kNames[] = {"ADD", "MUL", "SQRT", "MAX", "MIN", "RELU_FWD", "TANH_FWD", "SIGMOID_FWD", "ELU_FWD", "GELU_FWD", "SOFTPLUS_FWD", "SWISH_FWD", "RELU_BWD", "TANH_BWD", "SIGMOID_BWD", "ELU_BWD", "GELU_BWD", "SOFTPLUS_BWD", "SWISH_BWD", "ERF", "IDENTITY", "GELU_APPROX_TANH_BWD", "GELU_APPROX_TANH_FWD", "GEN_INDEX", "BINARY_SELECT", "EXP", "LOG", "NEG", "MOD", "POW", "ABS", "CEIL", "COS", "FLOOR", "RSQRT", "SIN", "LOGICAL_NOT", "TAN", "SUB", "ADD_SQUARE", "DIV", "CMP_EQ", "CMP_NEQ", "CMP_GT", "CMP_GE", "CMP_LT", "CMP_LE", "LOGICAL_AND", "LOGICAL_OR", "RECIPROCAL"};
};
enum class MoeGroupedMatmulMode : std::uint8_t { NONE, GATHER, SCATTER };
template <>
struct EnumDomain<MoeGroupedMatmulMode> {
  static constexpr std::string_view kNames[] = {"NONE", "GATHER", "SCATTER"};
};
enum class ReductionMode : std::uint8_t { ADD, MUL, MIN, MAX, AMAX, AVG, NORM1, NORM2, MUL_NO_ZEROS };
template <>
struct EnumDomain<ReductionMode> {
  static constexpr std::string_view kNames[] = {"ADD", "MUL", "MIN", "MAX", "AMAX", "AVG", "NORM1", "NORM2", "MUL_NO_ZEROS"};
};
enum class Distribution : std::uint8_t { BERNOULLI, UNIFORM, NORMAL };
template <>
struct EnumDomain<Distribution> {
  static constexpr std::string_view kNames[] = {"BERNOULLI", "UNIFORM", "NORMAL"};
};
enum class ReshapeMode : std::uint8_t { VIEW_ONLY, LOGICAL };
template <>
struct EnumDomain<ReshapeMode> {
  static constexpr std::string_view kNames[] = {"VIEW_ONLY", "LOGICAL"};
};
enum class ResamplingMode : std::uint8_t { AVGPOOL_EXCLUDE_PADDING, AVGPOOL_INCLUDE_PADDING, BILINEAR, NEAREST, MAXPOOL };
template <>
struct EnumDomain<ResamplingMode> {
  static constexpr std::string_view kNames[] = {"AVGPOOL_EXCLUDE_PADDING", "AVGPOOL_INCLUDE_PADDING", "BILINEAR", "NEAREST", "MAXPOOL"};
};
enum class PaddingMode : std::uint8_t { EDGE_VAL_PAD, NEG_INF_PAD, ZERO_PAD };
template <>
struct EnumDomain<PaddingMode> {
  static constexpr std::string_view kNames[] = {"EDGE_VAL_PAD", "NEG_INF_PAD", "ZERO_PAD"};
};
enum class ComparisonMode : std::uint8_t { CMP_GT, CMP_GE };
template <>
struct EnumDomain<ComparisonMode> {
  static constexpr std::string_view kNames[] = {"CMP_GT", "CMP_GE"};
};
enum class ForwardPhase : std::uint8_t { INFERENCE, TRAINING };
template <>
struct EnumDomain<ForwardPhase> {
  static constexpr std::string_view kNames[] = {"INFERENCE", "TRAINING"};
};
enum class Rotation : std::uint8_t { ROTATE_HALF, INTERLEAVED };
template <>
struct EnumDomain<Rotation> {
  static constexpr std::string_view kNames[] = {"ROTATE_HALF", "INTERLEAVED"};
};
enum class ConvolutionMode : std::uint8_t { CONVOLUTION, CROSS_CORRELATION };
template <>
struct EnumDomain<ConvolutionMode> {
  static constexpr std::string_view kNames[] = {"CONVOLUTION", "CROSS_CORRELATION"};
};
enum class DiagonalAlignment : std::uint8_t { TOP_LEFT, BOTTOM_RIGHT };
template <>
struct EnumDomain<DiagonalAlignment> {
  static constexpr std::string_view kNames[] = {"TOP_LEFT", "BOTTOM_RIGHT"};
};
enum class Implementation : std::uint8_t { AUTO, COMPOSITE, UNIFIED };
template <>
struct EnumDomain<Implementation> {
  static constexpr std::string_view kNames[] = {"AUTO", "COMPOSITE", "UNIFIED"};
};
enum class GateDomain : std::uint8_t { log, linear };
template <>
struct EnumDomain<GateDomain> {
  static constexpr std::string_view kNames[] = {"log", "linear"};
};

// ---- ops ----

// pointwise: elementwise op of one of cudnn's 50 pointwise modes, with numpy broadcasting
struct Pointwise {
  static constexpr std::size_t kIndex = 0;
  static constexpr std::string_view kName = "pointwise";
  enum class In : std::uint8_t { IN_0, IN_1, IN_2 };
  enum class Out : std::uint8_t { OUT_0 };
  using Mode = ops::PointwiseMode;
  static std::optional<PointwiseMode> mode(const Node& n) { return detail::get_opt<PointwiseMode>(n, kIndex, 0); }  // required
  static std::optional<std::int64_t> axis(const Node& n) { return detail::get_opt<std::int64_t>(n, kIndex, 1); }
  static double relu_lower_clip(const Node& n) { return detail::get<double>(n, kIndex, 2); }
  static std::optional<double> relu_upper_clip(const Node& n) { return detail::get_opt<double>(n, kIndex, 3); }
  static double relu_lower_clip_slope(const Node& n) { return detail::get<double>(n, kIndex, 4); }
  static double swish_beta(const Node& n) { return detail::get<double>(n, kIndex, 5); }
  static double elu_alpha(const Node& n) { return detail::get<double>(n, kIndex, 6); }
  static double softplus_beta(const Node& n) { return detail::get<double>(n, kIndex, 7); }
};
template <>
struct PortTraits<Pointwise::In> {
  using Op = Pointwise;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"IN_0", "IN_1", "IN_2"};
};
template <>
struct PortTraits<Pointwise::Out> {
  using Op = Pointwise;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"OUT_0"};
};

// matmul: C = A @ B with batch broadcast and optional per-batch M/N/K overrides
struct Matmul {
  static constexpr std::size_t kIndex = 1;
  static constexpr std::string_view kName = "matmul";
  enum class In : std::uint8_t { A, B, M_override, N_override, K_override };
  enum class Out : std::uint8_t { C };
  static double padding(const Node& n) { return detail::get<double>(n, kIndex, 0); }
};
template <>
struct PortTraits<Matmul::In> {
  using Op = Matmul;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"A", "B", "M_override", "N_override", "K_override"};
};
template <>
struct PortTraits<Matmul::Out> {
  using Op = Matmul;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"C"};
};

// moe_grouped_matmul: per-expert matmul over token groups (MoE), with gather/scatter modes
struct MoeGroupedMatmul {
  static constexpr std::size_t kIndex = 2;
  static constexpr std::string_view kName = "moe_grouped_matmul";
  enum class In : std::uint8_t { Token, Weight, FirstTokenOffset, TokenIndex, TokenKs };
  enum class Out : std::uint8_t { Output };
  using Mode = ops::MoeGroupedMatmulMode;
  static MoeGroupedMatmulMode mode(const Node& n) { return detail::get<MoeGroupedMatmulMode>(n, kIndex, 0); }
  static std::int64_t top_k(const Node& n) { return detail::get<std::int64_t>(n, kIndex, 1); }
};
template <>
struct PortTraits<MoeGroupedMatmul::In> {
  using Op = MoeGroupedMatmul;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"Token", "Weight", "FirstTokenOffset", "TokenIndex", "TokenKs"};
};
template <>
struct PortTraits<MoeGroupedMatmul::Out> {
  using Op = MoeGroupedMatmul;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Output"};
};

// moe_grouped_matmul_bwd: weight gradient of moe_grouped_matmul (mode NONE)
struct MoeGroupedMatmulBwd {
  static constexpr std::size_t kIndex = 3;
  static constexpr std::string_view kName = "moe_grouped_matmul_bwd";
  enum class In : std::uint8_t { DOutput, Token, FirstTokenOffset };
  enum class Out : std::uint8_t { DWeight };
};
template <>
struct PortTraits<MoeGroupedMatmulBwd::In> {
  using Op = MoeGroupedMatmulBwd;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DOutput", "Token", "FirstTokenOffset"};
};
template <>
struct PortTraits<MoeGroupedMatmulBwd::Out> {
  using Op = MoeGroupedMatmulBwd;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DWeight"};
};

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

// genstats: per-channel sum and sum of squares of X
struct Genstats {
  static constexpr std::size_t kIndex = 15;
  static constexpr std::string_view kName = "genstats";
  enum class In : std::uint8_t { X };
  enum class Out : std::uint8_t { SUM, SQ_SUM };
};
template <>
struct PortTraits<Genstats::In> {
  using Op = Genstats;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X"};
};
template <>
struct PortTraits<Genstats::Out> {
  using Op = Genstats;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"SUM", "SQ_SUM"};
};

// bn_finalize: batchnorm statistics from genstats sums: equivalent scale/bias, mean, inv variance, running stats
struct BnFinalize {
  static constexpr std::size_t kIndex = 16;
  static constexpr std::string_view kName = "bn_finalize";
  enum class In : std::uint8_t { SUM, SQ_SUM, SCALE, BIAS, EPSILON, ACCUM_COUNT, PREV_RUNNING_MEAN, PREV_RUNNING_VAR, MOMENTUM };
  enum class Out : std::uint8_t { EQ_SCALE, EQ_BIAS, MEAN, INV_VARIANCE, NEXT_RUNNING_MEAN, NEXT_RUNNING_VAR };
};
template <>
struct PortTraits<BnFinalize::In> {
  using Op = BnFinalize;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"SUM", "SQ_SUM", "SCALE", "BIAS", "EPSILON", "ACCUM_COUNT", "PREV_RUNNING_MEAN", "PREV_RUNNING_VAR", "MOMENTUM"};
};
template <>
struct PortTraits<BnFinalize::Out> {
  using Op = BnFinalize;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"EQ_SCALE", "EQ_BIAS", "MEAN", "INV_VARIANCE", "NEXT_RUNNING_MEAN", "NEXT_RUNNING_VAR"};
};

// batchnorm: training batchnorm over every axis but the channel, optional running stats and peer stats
struct Batchnorm {
  static constexpr std::size_t kIndex = 17;
  static constexpr std::string_view kName = "batchnorm";
  enum class In : std::uint8_t { X, SCALE, BIAS, PREV_RUNNING_MEAN, PREV_RUNNING_VAR, EPSILON, MOMENTUM, PEER_STATS };
  enum class Out : std::uint8_t { Y, MEAN, INV_VARIANCE, NEXT_RUNNING_MEAN, NEXT_RUNNING_VAR };
};
template <>
struct PortTraits<Batchnorm::In> {
  using Op = Batchnorm;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "SCALE", "BIAS", "PREV_RUNNING_MEAN", "PREV_RUNNING_VAR", "EPSILON", "MOMENTUM", "PEER_STATS"};
};
template <>
struct PortTraits<Batchnorm::Out> {
  using Op = Batchnorm;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y", "MEAN", "INV_VARIANCE", "NEXT_RUNNING_MEAN", "NEXT_RUNNING_VAR"};
};

// batchnorm_inference: Y = (X - MEAN) * INV_VARIANCE * SCALE + BIAS per channel
struct BatchnormInference {
  static constexpr std::size_t kIndex = 18;
  static constexpr std::string_view kName = "batchnorm_inference";
  enum class In : std::uint8_t { X, MEAN, INV_VARIANCE, SCALE, BIAS };
  enum class Out : std::uint8_t { Y };
};
template <>
struct PortTraits<BatchnormInference::In> {
  using Op = BatchnormInference;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "MEAN", "INV_VARIANCE", "SCALE", "BIAS"};
};
template <>
struct PortTraits<BatchnormInference::Out> {
  using Op = BatchnormInference;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// batchnorm_backward: batchnorm gradients from the saved mean and inverse variance
struct BatchnormBackward {
  static constexpr std::size_t kIndex = 19;
  static constexpr std::string_view kName = "batchnorm_backward";
  enum class In : std::uint8_t { DY, X, SCALE, MEAN, INV_VARIANCE, PEER_STATS };
  enum class Out : std::uint8_t { DX, DSCALE, DBIAS };
};
template <>
struct PortTraits<BatchnormBackward::In> {
  using Op = BatchnormBackward;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DY", "X", "SCALE", "MEAN", "INV_VARIANCE", "PEER_STATS"};
};
template <>
struct PortTraits<BatchnormBackward::Out> {
  using Op = BatchnormBackward;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DX", "DSCALE", "DBIAS"};
};

// dbn_weight: batchnorm weight gradients and DX = EQ_SCALE_DY*DY + EQ_SCALE_X*X + EQ_BIAS
struct DbnWeight {
  static constexpr std::size_t kIndex = 20;
  static constexpr std::string_view kName = "dbn_weight";
  enum class In : std::uint8_t { DY, X, SCALE, MEAN, INV_VARIANCE };
  enum class Out : std::uint8_t { DSCALE, DBIAS, EQ_BIAS, EQ_SCALE_DY, EQ_SCALE_X };
};
template <>
struct PortTraits<DbnWeight::In> {
  using Op = DbnWeight;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DY", "X", "SCALE", "MEAN", "INV_VARIANCE"};
};
template <>
struct PortTraits<DbnWeight::Out> {
  using Op = DbnWeight;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DSCALE", "DBIAS", "EQ_BIAS", "EQ_SCALE_DY", "EQ_SCALE_X"};
};

// layernorm: layer norm over the axes SCALE spans
struct Layernorm {
  static constexpr std::size_t kIndex = 21;
  static constexpr std::string_view kName = "layernorm";
  enum class In : std::uint8_t { X, SCALE, BIAS, EPSILON };
  enum class Out : std::uint8_t { Y, MEAN, INV_VARIANCE };
  using ForwardPhase = ops::ForwardPhase;
  static std::optional<ForwardPhase> forward_phase(const Node& n) { return detail::get_opt<ForwardPhase>(n, kIndex, 0); }  // required
};
template <>
struct PortTraits<Layernorm::In> {
  using Op = Layernorm;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "SCALE", "BIAS", "EPSILON"};
};
template <>
struct PortTraits<Layernorm::Out> {
  using Op = Layernorm;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y", "MEAN", "INV_VARIANCE"};
};

// layernorm_backward: layer norm gradients from the saved mean and inverse variance
struct LayernormBackward {
  static constexpr std::size_t kIndex = 22;
  static constexpr std::string_view kName = "layernorm_backward";
  enum class In : std::uint8_t { DY, X, SCALE, MEAN, INV_VARIANCE, EPSILON };
  enum class Out : std::uint8_t { DX, DSCALE, DBIAS };
};
template <>
struct PortTraits<LayernormBackward::In> {
  using Op = LayernormBackward;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DY", "X", "SCALE", "MEAN", "INV_VARIANCE", "EPSILON"};
};
template <>
struct PortTraits<LayernormBackward::Out> {
  using Op = LayernormBackward;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DX", "DSCALE", "DBIAS"};
};

// rmsnorm: RMS norm over the axes SCALE spans, optional BIAS
struct Rmsnorm {
  static constexpr std::size_t kIndex = 23;
  static constexpr std::string_view kName = "rmsnorm";
  enum class In : std::uint8_t { X, SCALE, BIAS, EPSILON };
  enum class Out : std::uint8_t { Y, INV_VARIANCE };
  using ForwardPhase = ops::ForwardPhase;
  static std::optional<ForwardPhase> forward_phase(const Node& n) { return detail::get_opt<ForwardPhase>(n, kIndex, 0); }  // required
};
template <>
struct PortTraits<Rmsnorm::In> {
  using Op = Rmsnorm;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "SCALE", "BIAS", "EPSILON"};
};
template <>
struct PortTraits<Rmsnorm::Out> {
  using Op = Rmsnorm;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y", "INV_VARIANCE"};
};

// rmsnorm_backward: RMS norm gradients from the saved inverse RMS
struct RmsnormBackward {
  static constexpr std::size_t kIndex = 24;
  static constexpr std::string_view kName = "rmsnorm_backward";
  enum class In : std::uint8_t { DY, X, SCALE, INV_VARIANCE };
  enum class Out : std::uint8_t { DX, DSCALE, DBIAS };
  static bool has_dbias(const Node& n) { return detail::get<bool>(n, kIndex, 0); }
};
template <>
struct PortTraits<RmsnormBackward::In> {
  using Op = RmsnormBackward;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DY", "X", "SCALE", "INV_VARIANCE"};
};
template <>
struct PortTraits<RmsnormBackward::Out> {
  using Op = RmsnormBackward;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DX", "DSCALE", "DBIAS"};
};

// instancenorm: instance norm over the spatial axes, per-channel scale/bias
struct Instancenorm {
  static constexpr std::size_t kIndex = 25;
  static constexpr std::string_view kName = "instancenorm";
  enum class In : std::uint8_t { X, SCALE, BIAS, EPSILON };
  enum class Out : std::uint8_t { Y, MEAN, INV_VARIANCE };
  using ForwardPhase = ops::ForwardPhase;
  static std::optional<ForwardPhase> forward_phase(const Node& n) { return detail::get_opt<ForwardPhase>(n, kIndex, 0); }  // required
};
template <>
struct PortTraits<Instancenorm::In> {
  using Op = Instancenorm;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "SCALE", "BIAS", "EPSILON"};
};
template <>
struct PortTraits<Instancenorm::Out> {
  using Op = Instancenorm;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y", "MEAN", "INV_VARIANCE"};
};

// instancenorm_backward: instance norm gradients from the saved mean and inverse variance
struct InstancenormBackward {
  static constexpr std::size_t kIndex = 26;
  static constexpr std::string_view kName = "instancenorm_backward";
  enum class In : std::uint8_t { DY, X, SCALE, MEAN, INV_VARIANCE };
  enum class Out : std::uint8_t { DX, DSCALE, DBIAS };
};
template <>
struct PortTraits<InstancenormBackward::In> {
  using Op = InstancenormBackward;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DY", "X", "SCALE", "MEAN", "INV_VARIANCE"};
};
template <>
struct PortTraits<InstancenormBackward::Out> {
  using Op = InstancenormBackward;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DX", "DSCALE", "DBIAS"};
};

// adalayernorm: adaptive layer norm: per-sample SCALE/BIAS
struct Adalayernorm {
  static constexpr std::size_t kIndex = 27;
  static constexpr std::string_view kName = "adalayernorm";
  enum class In : std::uint8_t { X, SCALE, BIAS, EPSILON };
  enum class Out : std::uint8_t { Y, MEAN, INV_VARIANCE };
  using ForwardPhase = ops::ForwardPhase;
  static std::optional<ForwardPhase> forward_phase(const Node& n) { return detail::get_opt<ForwardPhase>(n, kIndex, 0); }  // required
};
template <>
struct PortTraits<Adalayernorm::In> {
  using Op = Adalayernorm;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "SCALE", "BIAS", "EPSILON"};
};
template <>
struct PortTraits<Adalayernorm::Out> {
  using Op = Adalayernorm;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y", "MEAN", "INV_VARIANCE"};
};

// adalayernorm_backward: adaptive layer norm gradients (per-sample DSCALE/DBIAS)
struct AdalayernormBackward {
  static constexpr std::size_t kIndex = 28;
  static constexpr std::string_view kName = "adalayernorm_backward";
  enum class In : std::uint8_t { DY, X, SCALE, MEAN, INV_VARIANCE };
  enum class Out : std::uint8_t { DX, DSCALE, DBIAS };
};
template <>
struct PortTraits<AdalayernormBackward::In> {
  using Op = AdalayernormBackward;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DY", "X", "SCALE", "MEAN", "INV_VARIANCE"};
};
template <>
struct PortTraits<AdalayernormBackward::Out> {
  using Op = AdalayernormBackward;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DX", "DSCALE", "DBIAS"};
};

// rope: rotary position embedding of X [B, S, H, D] by COS/SIN [S, R/2]
struct Rope {
  static constexpr std::size_t kIndex = 29;
  static constexpr std::string_view kName = "rope";
  enum class In : std::uint8_t { X, COS, SIN };
  enum class Out : std::uint8_t { Y };
  using Rotation = ops::Rotation;
  static Rotation rotation(const Node& n) { return detail::get<Rotation>(n, kIndex, 0); }
};
template <>
struct PortTraits<Rope::In> {
  using Op = Rope;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "COS", "SIN"};
};
template <>
struct PortTraits<Rope::Out> {
  using Op = Rope;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// rope_backward: gradient of rope: the transposed rotation of DY
struct RopeBackward {
  static constexpr std::size_t kIndex = 30;
  static constexpr std::string_view kName = "rope_backward";
  enum class In : std::uint8_t { DY, COS, SIN };
  enum class Out : std::uint8_t { DX };
  using Rotation = ops::Rotation;
  static Rotation rotation(const Node& n) { return detail::get<Rotation>(n, kIndex, 0); }
};
template <>
struct PortTraits<RopeBackward::In> {
  using Op = RopeBackward;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DY", "COS", "SIN"};
};
template <>
struct PortTraits<RopeBackward::Out> {
  using Op = RopeBackward;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DX"};
};

// conv_fprop: forward convolution, NCHW logical order, 1-3 spatial axes, groups from channel counts
struct ConvFprop {
  static constexpr std::size_t kIndex = 31;
  static constexpr std::string_view kName = "conv_fprop";
  enum class In : std::uint8_t { X, W };
  enum class Out : std::uint8_t { Y };
  using ConvolutionMode = ops::ConvolutionMode;
  static std::optional<std::vector<std::int64_t>> padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 0); }
  static std::optional<std::vector<std::int64_t>> pre_padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 1); }
  static std::optional<std::vector<std::int64_t>> post_padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 2); }
  static std::optional<std::vector<std::int64_t>> stride(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 3); }
  static std::optional<std::vector<std::int64_t>> dilation(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 4); }
  static ConvolutionMode convolution_mode(const Node& n) { return detail::get<ConvolutionMode>(n, kIndex, 5); }
};
template <>
struct PortTraits<ConvFprop::In> {
  using Op = ConvFprop;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"X", "W"};
};
template <>
struct PortTraits<ConvFprop::Out> {
  using Op = ConvFprop;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"Y"};
};

// conv_dgrad: data gradient of conv_fprop (DX dims set by the user)
struct ConvDgrad {
  static constexpr std::size_t kIndex = 32;
  static constexpr std::string_view kName = "conv_dgrad";
  enum class In : std::uint8_t { DY, W };
  enum class Out : std::uint8_t { DX };
  using ConvolutionMode = ops::ConvolutionMode;
  static std::optional<std::vector<std::int64_t>> padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 0); }
  static std::optional<std::vector<std::int64_t>> pre_padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 1); }
  static std::optional<std::vector<std::int64_t>> post_padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 2); }
  static std::optional<std::vector<std::int64_t>> stride(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 3); }
  static std::optional<std::vector<std::int64_t>> dilation(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 4); }
  static ConvolutionMode convolution_mode(const Node& n) { return detail::get<ConvolutionMode>(n, kIndex, 5); }
};
template <>
struct PortTraits<ConvDgrad::In> {
  using Op = ConvDgrad;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DY", "W"};
};
template <>
struct PortTraits<ConvDgrad::Out> {
  using Op = ConvDgrad;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DX"};
};

// conv_wgrad: filter gradient of conv_fprop (DW dims set by the user)
struct ConvWgrad {
  static constexpr std::size_t kIndex = 33;
  static constexpr std::string_view kName = "conv_wgrad";
  enum class In : std::uint8_t { DY, X };
  enum class Out : std::uint8_t { DW };
  using ConvolutionMode = ops::ConvolutionMode;
  static std::optional<std::vector<std::int64_t>> padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 0); }
  static std::optional<std::vector<std::int64_t>> pre_padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 1); }
  static std::optional<std::vector<std::int64_t>> post_padding(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 2); }
  static std::optional<std::vector<std::int64_t>> stride(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 3); }
  static std::optional<std::vector<std::int64_t>> dilation(const Node& n) { return detail::get_opt<std::vector<std::int64_t>>(n, kIndex, 4); }
  static ConvolutionMode convolution_mode(const Node& n) { return detail::get<ConvolutionMode>(n, kIndex, 5); }
};
template <>
struct PortTraits<ConvWgrad::In> {
  using Op = ConvWgrad;
  static constexpr bool kInput = true;
  static constexpr std::string_view kNames[] = {"DY", "X"};
};
template <>
struct PortTraits<ConvWgrad::Out> {
  using Op = ConvWgrad;
  static constexpr bool kInput = false;
  static constexpr std::string_view kNames[] = {"DW"};
};

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

// gdn: Gated DeltaNet: scalar-gated delta rule over THD varlen sequences
struct Gdn {
  static constexpr std::size_t kIndex = 40;
  static constexpr std::string_view kName = "gdn";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices };
  enum class Out : std::uint8_t { O, final_state };
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
  static constexpr std::string_view kNames[] = {"O", "final_state"};
};

// gdn_bwd: gradients of the forward op
struct GdnBwd {
  static constexpr std::size_t kIndex = 41;
  static constexpr std::string_view kName = "gdn_bwd";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices, dO, d_final_state };
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
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices", "dO", "d_final_state"};
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
  enum class Out : std::uint8_t { O, final_state };
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
  static constexpr std::string_view kNames[] = {"O", "final_state"};
};

// kda_bwd: gradients of the forward op
struct KdaBwd {
  static constexpr std::size_t kIndex = 45;
  static constexpr std::string_view kName = "kda_bwd";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices, dO, d_final_state };
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
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices", "dO", "d_final_state"};
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
  enum class Out : std::uint8_t { O, final_state };
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
  static constexpr std::string_view kNames[] = {"O", "final_state"};
};

// gdn2_bwd: gradients of the forward op
struct Gdn2Bwd {
  static constexpr std::size_t kIndex = 49;
  static constexpr std::string_view kName = "gdn2_bwd";
  enum class In : std::uint8_t { q, k, v, g, b, w, cu_seqlens, initial_state, a_log, dt_bias, state_indices, dO, d_final_state };
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
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "b", "w", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices", "dO", "d_final_state"};
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
  enum class Out : std::uint8_t { O, final_state };
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
  static constexpr std::string_view kNames[] = {"O", "final_state"};
};

// gdp_bwd: gradients of the forward op
struct GdpBwd {
  static constexpr std::size_t kIndex = 53;
  static constexpr std::string_view kName = "gdp_bwd";
  enum class In : std::uint8_t { q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, state_indices, dO, d_final_state };
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
  static constexpr std::string_view kNames[] = {"q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias", "state_indices", "dO", "d_final_state"};
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
