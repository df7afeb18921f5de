// opgraph/ops/norm.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
// Part of opgraph/ops.h (include that): the normalisation ops.
#pragma once

#include "opgraph/ops/enums.h"

namespace opgraph::ops {

// ---- normalisation ops ----

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

}  // namespace opgraph::ops
