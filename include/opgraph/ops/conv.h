// opgraph/ops/conv.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
// Part of opgraph/ops.h (include that): the convolution ops.
#pragma once

#include "opgraph/ops/enums.h"

namespace opgraph::ops {

// ---- convolution ops ----

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

}  // namespace opgraph::ops
