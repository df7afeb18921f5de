// ir/ops/norm.cpp — the norm op group: its records (one per op) and builders.
//
// Semantics and shapes: include/opgraph/builders/norm.h. The infer() hooks live in
// norm_layer.cpp and norm_batch.cpp (contract in norm_rules.h). Ports follow
// cudnn-frontend's names; peer stats are the list port PEER_STATS. rope and
// rope_backward have no cudnn-frontend C++ counterpart: their contract is ours
// (builders/norm.h).
#include "ir/ops/groups.h"
#include "ir/ops/norm_rules.h"
#include "opgraph/builders/norm.h"

namespace opgraph::ops {
namespace {

using namespace norm;

AttrSpec forward_phase() {
  return {"forward_phase", AttrType::ENUM, std::nullopt, true, {"INFERENCE", "TRAINING"}};
}

const OpSpec kSpecs[] = {
    {.name = "genstats",
     .inputs = {{"X"}},
     .outputs = {{"SUM"}, {"SQ_SUM"}},
     .infer = infer_genstats,
     .summary = "per-channel sum and sum of squares of X"},
    {.name = "bn_finalize",
     .inputs = {{"SUM"}, {"SQ_SUM"}, {"SCALE"}, {"BIAS"}, {"EPSILON"}, {"ACCUM_COUNT"},
                {"PREV_RUNNING_MEAN", true}, {"PREV_RUNNING_VAR", true}, {"MOMENTUM", true}},
     .outputs = {{"EQ_SCALE"}, {"EQ_BIAS"}, {"MEAN"}, {"INV_VARIANCE"},
                 {"NEXT_RUNNING_MEAN", has_prev_running_stats}, {"NEXT_RUNNING_VAR", has_prev_running_stats}},
     .infer = infer_bn_finalize,
     .summary = "batchnorm statistics from genstats sums: equivalent scale/bias, mean, inv variance, running stats"},
    {.name = "batchnorm",
     .inputs = {{"X"}, {"SCALE"}, {"BIAS"}, {"PREV_RUNNING_MEAN", true}, {"PREV_RUNNING_VAR", true},
                {"EPSILON"}, {"MOMENTUM", true}, {"PEER_STATS", true, true}},
     .outputs = {{"Y"}, {"MEAN"}, {"INV_VARIANCE"},
                 {"NEXT_RUNNING_MEAN", has_prev_running_stats}, {"NEXT_RUNNING_VAR", has_prev_running_stats}},
     .infer = infer_batchnorm,
     .summary = "training batchnorm over every axis but the channel, optional running stats and peer stats"},
    {.name = "batchnorm_inference",
     .inputs = {{"X"}, {"MEAN"}, {"INV_VARIANCE"}, {"SCALE"}, {"BIAS"}},
     .outputs = {{"Y"}},
     .infer = infer_batchnorm_inference,
     .summary = "Y = (X - MEAN) * INV_VARIANCE * SCALE + BIAS per channel"},
    {.name = "batchnorm_backward",
     .inputs = {{"DY"}, {"X"}, {"SCALE"}, {"MEAN"}, {"INV_VARIANCE"}, {"PEER_STATS", true, true}},
     .outputs = {{"DX"}, {"DSCALE"}, {"DBIAS"}},
     .infer = infer_batchnorm_backward,
     .summary = "batchnorm gradients from the saved mean and inverse variance"},
    {.name = "dbn_weight",
     .inputs = {{"DY"}, {"X"}, {"SCALE"}, {"MEAN"}, {"INV_VARIANCE"}},
     .outputs = {{"DSCALE"}, {"DBIAS"}, {"EQ_BIAS"}, {"EQ_SCALE_DY"}, {"EQ_SCALE_X"}},
     .infer = infer_dbn_weight,
     .summary = "batchnorm weight gradients and DX = EQ_SCALE_DY*DY + EQ_SCALE_X*X + EQ_BIAS"},
    {.name = "layernorm",
     .inputs = {{"X"}, {"SCALE"}, {"BIAS"}, {"EPSILON"}},
     .outputs = {{"Y"}, {"MEAN", is_training}, {"INV_VARIANCE", is_training}},
     .attrs = {forward_phase()},
     .infer = infer_layernorm,
     .summary = "layer norm over the axes SCALE spans"},
    {.name = "layernorm_backward",
     .inputs = {{"DY"}, {"X"}, {"SCALE"}, {"MEAN"}, {"INV_VARIANCE"}, {"EPSILON", true}},
     .outputs = {{"DX"}, {"DSCALE"}, {"DBIAS"}},
     .infer = infer_layernorm_backward,
     .summary = "layer norm gradients from the saved mean and inverse variance"},
    {.name = "rmsnorm",
     .inputs = {{"X"}, {"SCALE"}, {"BIAS", true}, {"EPSILON"}},
     .outputs = {{"Y"}, {"INV_VARIANCE", is_training}},
     .attrs = {forward_phase()},
     .infer = infer_rmsnorm,
     .summary = "RMS norm over the axes SCALE spans, optional BIAS"},
    {.name = "rmsnorm_backward",
     .inputs = {{"DY"}, {"X"}, {"SCALE"}, {"INV_VARIANCE"}},
     .outputs = {{"DX"}, {"DSCALE"}, {"DBIAS", has_dbias}},
     .attrs = {{"has_dbias", AttrType::BOOL, AttrValue{true}}},
     .infer = infer_rmsnorm_backward,
     .summary = "RMS norm gradients from the saved inverse RMS"},
    {.name = "instancenorm",
     .inputs = {{"X"}, {"SCALE"}, {"BIAS"}, {"EPSILON"}},
     .outputs = {{"Y"}, {"MEAN", is_training}, {"INV_VARIANCE", is_training}},
     .attrs = {forward_phase()},
     .infer = infer_instancenorm,
     .summary = "instance norm over the spatial axes, per-channel scale/bias"},
    {.name = "instancenorm_backward",
     .inputs = {{"DY"}, {"X"}, {"SCALE"}, {"MEAN"}, {"INV_VARIANCE"}},
     .outputs = {{"DX"}, {"DSCALE"}, {"DBIAS"}},
     .infer = infer_instancenorm_backward,
     .summary = "instance norm gradients from the saved mean and inverse variance"},
    {.name = "adalayernorm",
     .inputs = {{"X"}, {"SCALE"}, {"BIAS"}, {"EPSILON"}},
     .outputs = {{"Y"}, {"MEAN", is_training}, {"INV_VARIANCE", is_training}},
     .attrs = {forward_phase()},
     .infer = infer_adalayernorm,
     .summary = "adaptive layer norm: per-sample SCALE/BIAS"},
    {.name = "adalayernorm_backward",
     .inputs = {{"DY"}, {"X"}, {"SCALE"}, {"MEAN"}, {"INV_VARIANCE"}},
     .outputs = {{"DX"}, {"DSCALE"}, {"DBIAS"}},
     .infer = infer_adalayernorm_backward,
     .summary = "adaptive layer norm gradients (per-sample DSCALE/DBIAS)"},
    {.name = "rope",
     .inputs = {{"X"}, {"COS"}, {"SIN"}},
     .outputs = {{"Y"}},
     .attrs = {{"rotation", AttrType::ENUM, AttrValue{std::string("ROTATE_HALF")}, false, {"ROTATE_HALF", "INTERLEAVED"}}},
     .infer = infer_rope,
     .summary = "rotary position embedding of X [B, S, H, D] by COS/SIN [S, R/2]"},
    {.name = "rope_backward",
     .inputs = {{"DY"}, {"COS"}, {"SIN"}},
     .outputs = {{"DX"}},
     .attrs = {{"rotation", AttrType::ENUM, AttrValue{std::string("ROTATE_HALF")}, false, {"ROTATE_HALF", "INTERLEAVED"}}},
     .infer = infer_rope_backward,
     .summary = "gradient of rope: the transposed rotation of DY"},
};

}  // namespace

std::span<const OpSpec> norm_specs() { return kSpecs; }

}  // namespace opgraph::ops

namespace opgraph {
namespace {

template <std::size_t N>
std::array<TensorPtr, N> take(std::vector<TensorPtr> v) {
  std::array<TensorPtr, N> a;
  for (std::size_t i = 0; i < N && i < v.size(); ++i) a[i] = std::move(v[i]);
  return a;
}

}  // namespace

std::array<TensorPtr, 2> NormBuilders::genstats(TensorPtr x, const Attributes& attrs) {
  return take<2>(add_node("genstats", {{"X", x}}, attrs));
}

std::array<TensorPtr, 6> NormBuilders::bn_finalize(TensorPtr sum, TensorPtr sq_sum, TensorPtr scale, TensorPtr bias,
                                                   TensorPtr epsilon, TensorPtr accum_count, const Attributes& attrs,
                                                   TensorPtr prev_running_mean, TensorPtr prev_running_var,
                                                   TensorPtr momentum) {
  return take<6>(add_node("bn_finalize",
                          {{"SUM", sum}, {"SQ_SUM", sq_sum}, {"SCALE", scale}, {"BIAS", bias}, {"EPSILON", epsilon},
                           {"ACCUM_COUNT", accum_count}, {"PREV_RUNNING_MEAN", prev_running_mean},
                           {"PREV_RUNNING_VAR", prev_running_var}, {"MOMENTUM", momentum}},
                          attrs));
}

std::array<TensorPtr, 5> NormBuilders::batchnorm(TensorPtr x, TensorPtr scale, TensorPtr bias, TensorPtr epsilon,
                                                 const Attributes& attrs, TensorPtr prev_running_mean,
                                                 TensorPtr prev_running_var, TensorPtr momentum,
                                                 std::vector<TensorPtr> peer_stats) {
  return take<5>(add_node("batchnorm",
                          {{"X", x}, {"SCALE", scale}, {"BIAS", bias}, {"PREV_RUNNING_MEAN", prev_running_mean},
                           {"PREV_RUNNING_VAR", prev_running_var}, {"EPSILON", epsilon}, {"MOMENTUM", momentum},
                           {"PEER_STATS", std::move(peer_stats)}},
                          attrs));
}

TensorPtr NormBuilders::batchnorm_inference(TensorPtr x, TensorPtr mean, TensorPtr inv_variance, TensorPtr scale,
                                            TensorPtr bias, const Attributes& attrs) {
  return add_node1("batchnorm_inference",
                   {{"X", x}, {"MEAN", mean}, {"INV_VARIANCE", inv_variance}, {"SCALE", scale}, {"BIAS", bias}}, attrs);
}

std::array<TensorPtr, 3> NormBuilders::batchnorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale, TensorPtr mean,
                                                          TensorPtr inv_variance, const Attributes& attrs,
                                                          std::vector<TensorPtr> peer_stats) {
  return take<3>(add_node("batchnorm_backward",
                          {{"DY", dy}, {"X", x}, {"SCALE", scale}, {"MEAN", mean}, {"INV_VARIANCE", inv_variance},
                           {"PEER_STATS", std::move(peer_stats)}},
                          attrs));
}

std::array<TensorPtr, 5> NormBuilders::dbn_weight(TensorPtr dy, TensorPtr x, TensorPtr mean, TensorPtr inv_variance,
                                                  TensorPtr scale, const Attributes& attrs) {
  return take<5>(add_node(
      "dbn_weight", {{"DY", dy}, {"X", x}, {"SCALE", scale}, {"MEAN", mean}, {"INV_VARIANCE", inv_variance}}, attrs));
}

std::array<TensorPtr, 3> NormBuilders::layernorm(TensorPtr x, TensorPtr scale, TensorPtr bias, TensorPtr epsilon,
                                                 const Attributes& attrs) {
  return take<3>(add_node("layernorm", {{"X", x}, {"SCALE", scale}, {"BIAS", bias}, {"EPSILON", epsilon}}, attrs));
}

std::array<TensorPtr, 3> NormBuilders::layernorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale, TensorPtr mean,
                                                          TensorPtr inv_variance, const Attributes& attrs,
                                                          TensorPtr epsilon) {
  return take<3>(add_node("layernorm_backward",
                          {{"DY", dy}, {"X", x}, {"SCALE", scale}, {"MEAN", mean}, {"INV_VARIANCE", inv_variance},
                           {"EPSILON", epsilon}},
                          attrs));
}

std::array<TensorPtr, 2> NormBuilders::rmsnorm(TensorPtr x, TensorPtr scale, TensorPtr epsilon,
                                               const Attributes& attrs, TensorPtr bias) {
  return take<2>(add_node("rmsnorm", {{"X", x}, {"SCALE", scale}, {"BIAS", bias}, {"EPSILON", epsilon}}, attrs));
}

std::array<TensorPtr, 3> NormBuilders::rmsnorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale,
                                                        TensorPtr inv_variance, const Attributes& attrs) {
  return take<3>(add_node("rmsnorm_backward",
                          {{"DY", dy}, {"X", x}, {"SCALE", scale}, {"INV_VARIANCE", inv_variance}}, attrs));
}

std::array<TensorPtr, 3> NormBuilders::instancenorm(TensorPtr x, TensorPtr scale, TensorPtr bias, TensorPtr epsilon,
                                                    const Attributes& attrs) {
  return take<3>(add_node("instancenorm", {{"X", x}, {"SCALE", scale}, {"BIAS", bias}, {"EPSILON", epsilon}}, attrs));
}

std::array<TensorPtr, 3> NormBuilders::instancenorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale,
                                                             TensorPtr mean, TensorPtr inv_variance,
                                                             const Attributes& attrs) {
  return take<3>(add_node("instancenorm_backward",
                          {{"DY", dy}, {"X", x}, {"SCALE", scale}, {"MEAN", mean}, {"INV_VARIANCE", inv_variance}},
                          attrs));
}

std::array<TensorPtr, 3> NormBuilders::adalayernorm(TensorPtr x, TensorPtr scale, TensorPtr bias, TensorPtr epsilon,
                                                    const Attributes& attrs) {
  return take<3>(add_node("adalayernorm", {{"X", x}, {"SCALE", scale}, {"BIAS", bias}, {"EPSILON", epsilon}}, attrs));
}

std::array<TensorPtr, 3> NormBuilders::adalayernorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale,
                                                             TensorPtr mean, TensorPtr inv_variance,
                                                             const Attributes& attrs) {
  return take<3>(add_node("adalayernorm_backward",
                          {{"DY", dy}, {"X", x}, {"SCALE", scale}, {"MEAN", mean}, {"INV_VARIANCE", inv_variance}},
                          attrs));
}

TensorPtr NormBuilders::rope(TensorPtr x, TensorPtr cos, TensorPtr sin, const Attributes& attrs) {
  return add_node1("rope", {{"X", x}, {"COS", cos}, {"SIN", sin}}, attrs);
}

TensorPtr NormBuilders::rope_backward(TensorPtr dy, TensorPtr cos, TensorPtr sin, const Attributes& attrs) {
  return add_node1("rope_backward", {{"DY", dy}, {"COS", cos}, {"SIN", sin}}, attrs);
}

}  // namespace opgraph
