// opgraph/ops/enums.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
// Part of opgraph/ops.h (include that): the enum attribute domains.
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

}  // namespace opgraph::ops
