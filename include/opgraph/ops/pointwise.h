// opgraph/ops/pointwise.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
// Part of opgraph/ops.h (include that): the pointwise ops.
#pragma once

#include "opgraph/ops/enums.h"

namespace opgraph::ops {

// ---- pointwise ops ----

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

}  // namespace opgraph::ops
