// opgraph/ops/matmul.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
// Part of opgraph/ops.h (include that): the matmul ops.
#pragma once

#include "opgraph/ops/enums.h"

namespace opgraph::ops {

// ---- matmul ops ----

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

}  // namespace opgraph::ops
