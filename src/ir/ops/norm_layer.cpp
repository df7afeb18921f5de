// ir/ops/norm_layer.cpp — infer() hooks of the per-sample norms (layernorm, rmsnorm,
// instancenorm, adalayernorm, forward and backward) and of rope / rope_backward.
//
// Forward:  Y has X's dims; MEAN / INV_VARIANCE (TRAINING only) have the stats dims.
// Backward: DY has X's dims; MEAN / INV_VARIANCE are the saved stats (stats dims);
//           DX has X's dims, DSCALE / DBIAS have SCALE's dims.
// Rope:     X [B, S, H, D]; COS, SIN [S, R/2] with 2 <= R <= D, R even.
#include "ir/ops/norm_rules.h"

namespace opgraph::ops::norm {
namespace {

Status norm_forward(InferContext& c, NormKind kind) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, kind, &stats));
  if (kind != NormKind::RMS || c.has(ops::in::BIAS)) OPGRAPH_CHECK(check_dims(c, ops::in::BIAS, c.dims(ops::in::SCALE), "BIAS (as SCALE)"));
  OPGRAPH_CHECK(c.require(ops::in::EPSILON));
  OPGRAPH_CHECK(check_epsilon(c));
  OPGRAPH_CHECK(set_output_like(c, "Y", c.dims(ops::in::X), "X"));
  if (kind != NormKind::RMS) OPGRAPH_CHECK(set_output_like(c, "MEAN", stats, "X", DataType::FLOAT));
  return set_output_like(c, "INV_VARIANCE", stats, "X", DataType::FLOAT);
}

Status norm_backward(InferContext& c, NormKind kind) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, kind, &stats));
  OPGRAPH_CHECK(c.require_floating(ops::in::DY));
  OPGRAPH_CHECK(c.require_same_dims(ops::in::DY, ops::in::X));
  if (kind != NormKind::RMS) OPGRAPH_CHECK(check_dims(c, ops::in::MEAN, stats, "the saved mean"));
  OPGRAPH_CHECK(check_dims(c, ops::in::INV_VARIANCE, stats, "the saved inverse variance"));
  OPGRAPH_CHECK(check_epsilon(c));
  OPGRAPH_CHECK(set_output_like(c, "DX", c.dims(ops::in::X), "X"));
  OPGRAPH_CHECK(set_output_like(c, "DSCALE", c.dims(ops::in::SCALE), "SCALE"));
  return set_output_like(c, "DBIAS", c.dims(ops::in::SCALE), "SCALE");
}

Status rope_common(InferContext& c, std::string_view in, std::string_view out) {
  OPGRAPH_CHECK(c.require_rank(in, 4));
  OPGRAPH_CHECK(c.require_floating(in));
  OPGRAPH_CHECK(c.require_rank(ops::in::COS, 2));
  OPGRAPH_CHECK(c.require_floating(ops::in::COS));
  OPGRAPH_CHECK(c.require_floating(ops::in::SIN));
  OPGRAPH_CHECK(c.require_same_dims(ops::in::SIN, ops::in::COS));
  const Dims& x = c.dims(in);
  const Dims& cs = c.dims(ops::in::COS);
  if (cs[0] != x[1])
    return c.fail(ops::in::COS, "axis 0 must be the sequence length S = " + std::to_string(x[1]) + " of " + std::string(in) +
                             " [B, S, H, D] " + InferContext::dims_str(x) + ", got " + InferContext::dims_str(cs));
  if (2 * cs[1] > x[3] || cs[1] < 1)
    return c.fail(ops::in::COS, "axis 1 must be R/2 with 2 <= R <= head dim D = " + std::to_string(x[3]) + ", got " +
                             InferContext::dims_str(cs));
  return set_output_like(c, out, x, in);
}

}  // namespace

Status infer_layernorm(InferContext& c) { return norm_forward(c, NormKind::LAYER); }
Status infer_adalayernorm(InferContext& c) { return norm_forward(c, NormKind::ADA_LAYER); }
Status infer_instancenorm(InferContext& c) { return norm_forward(c, NormKind::INSTANCE); }
Status infer_rmsnorm(InferContext& c) { return norm_forward(c, NormKind::RMS); }
Status infer_layernorm_backward(InferContext& c) { return norm_backward(c, NormKind::LAYER); }
Status infer_adalayernorm_backward(InferContext& c) { return norm_backward(c, NormKind::ADA_LAYER); }
Status infer_instancenorm_backward(InferContext& c) { return norm_backward(c, NormKind::INSTANCE); }
Status infer_rmsnorm_backward(InferContext& c) { return norm_backward(c, NormKind::RMS); }
Status infer_rope(InferContext& c) { return rope_common(c, "X", "Y"); }
Status infer_rope_backward(InferContext& c) { return rope_common(c, "DY", "DX"); }

}  // namespace opgraph::ops::norm
