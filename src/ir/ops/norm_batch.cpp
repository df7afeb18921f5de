// ir/ops/norm_batch.cpp — infer() hooks of the batch-statistics ops: genstats,
// bn_finalize, batchnorm (training), batchnorm_inference, batchnorm_backward, dbn_weight.
//
// Every per-channel tensor (SCALE, BIAS, MEAN, INV_VARIANCE, running stats, sums and
// the equivalent scale/bias outputs) is [1, C, 1, ...] of X's rank; peer stats are
// [2, C, 1, ...]. The previous running stats and MOMENTUM are bound together or not at all.
#include "ir/ops/norm_rules.h"

namespace opgraph::ops::norm {
namespace {

// PREV_RUNNING_MEAN, PREV_RUNNING_VAR and MOMENTUM: all bound or none.
Status running_stats(InferContext& c, const Dims& stats) {
  bool m = c.has(ops::in::PREV_RUNNING_MEAN), v = c.has(ops::in::PREV_RUNNING_VAR), mo = c.has(ops::in::MOMENTUM);
  if (!m && !v && !mo) return Status::ok();
  for (const char* p : {"PREV_RUNNING_MEAN", "PREV_RUNNING_VAR", "MOMENTUM"})
    if (!c.has(p))
      return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, p,
                         "previous running stats need PREV_RUNNING_MEAN, PREV_RUNNING_VAR and MOMENTUM together");
  OPGRAPH_CHECK(check_dims(c, ops::in::PREV_RUNNING_MEAN, stats, "the previous running mean (per channel)"));
  OPGRAPH_CHECK(check_dims(c, ops::in::PREV_RUNNING_VAR, stats, "the previous running variance (per channel)"));
  return check_scalar(c, ops::in::MOMENTUM);
}

Status peer_stats(InferContext& c, const Dims& stats) {
  Dims want = stats;
  want[0] = 2;
  for (const auto& t : c.ins(ops::in::PEER_STATS)) {
    if (!is_floating(t->get_data_type()) || t->get_dim() != want)
      return c.fail(ops::in::PEER_STATS, "each peer stats tensor ('" + t->get_name() + "') must be floating with dims " +
                                      InferContext::dims_str(want) + " (two rows per channel), got " +
                                      InferContext::dims_str(t->get_dim()) + " " +
                                      std::string(to_string(t->get_data_type())));
  }
  return Status::ok();
}

}  // namespace

Status infer_genstats(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank_between(ops::in::X, 2, 8));
  OPGRAPH_CHECK(c.require_floating(ops::in::X));
  Dims ch = channel_dims(c.dims(ops::in::X));
  OPGRAPH_CHECK(set_output_like(c, "SUM", ch, "X", DataType::FLOAT));
  return set_output_like(c, "SQ_SUM", ch, "X", DataType::FLOAT);
}

Status infer_bn_finalize(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank_between(ops::in::SUM, 2, 8));
  const Dims& sum = c.dims(ops::in::SUM);
  Dims ch = channel_dims(sum);
  if (sum != ch)
    return c.fail(ops::in::SUM, "must be per channel [1, C, 1, ...], got " + InferContext::dims_str(sum));
  OPGRAPH_CHECK(check_dims(c, ops::in::SUM, ch, "the per-channel sum"));
  OPGRAPH_CHECK(check_dims(c, ops::in::SQ_SUM, ch, "the per-channel sum of squares (as SUM)"));
  OPGRAPH_CHECK(check_dims(c, ops::in::SCALE, ch, "SCALE (per channel, as SUM)"));
  OPGRAPH_CHECK(check_dims(c, ops::in::BIAS, ch, "BIAS (per channel, as SUM)"));
  OPGRAPH_CHECK(check_epsilon(c));
  OPGRAPH_CHECK(c.require_integer_index(ops::in::ACCUM_COUNT));
  OPGRAPH_CHECK(c.require_numel(ops::in::ACCUM_COUNT, 1, "the element count per channel behind SUM"));
  OPGRAPH_CHECK(running_stats(c, ch));
  for (const char* p : {"EQ_SCALE", "EQ_BIAS", "MEAN", "INV_VARIANCE", "NEXT_RUNNING_MEAN", "NEXT_RUNNING_VAR"})
    OPGRAPH_CHECK(c.set_output(p, ch, DataType::FLOAT));
  return Status::ok();
}

Status infer_batchnorm(InferContext& c) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, NormKind::BATCH, &stats));
  OPGRAPH_CHECK(check_dims(c, ops::in::BIAS, stats, "BIAS (per channel, as SCALE)"));
  OPGRAPH_CHECK(c.require(ops::in::EPSILON));
  OPGRAPH_CHECK(check_epsilon(c));
  OPGRAPH_CHECK(running_stats(c, stats));
  OPGRAPH_CHECK(peer_stats(c, stats));
  OPGRAPH_CHECK(set_output_like(c, "Y", c.dims(ops::in::X), "X"));
  for (const char* p : {"MEAN", "INV_VARIANCE", "NEXT_RUNNING_MEAN", "NEXT_RUNNING_VAR"})
    OPGRAPH_CHECK(c.set_output(p, stats, DataType::FLOAT));
  return Status::ok();
}

Status infer_batchnorm_inference(InferContext& c) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, NormKind::BATCH, &stats));
  OPGRAPH_CHECK(check_dims(c, ops::in::BIAS, stats, "BIAS (per channel, as SCALE)"));
  OPGRAPH_CHECK(check_dims(c, ops::in::MEAN, stats, "the per-channel mean"));
  OPGRAPH_CHECK(check_dims(c, ops::in::INV_VARIANCE, stats, "the per-channel inverse variance"));
  return set_output_like(c, "Y", c.dims(ops::in::X), "X");
}

Status infer_batchnorm_backward(InferContext& c) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, NormKind::BATCH, &stats));
  OPGRAPH_CHECK(c.require_floating(ops::in::DY));
  OPGRAPH_CHECK(c.require_same_dims(ops::in::DY, ops::in::X));
  OPGRAPH_CHECK(check_dims(c, ops::in::MEAN, stats, "the saved per-channel mean"));
  OPGRAPH_CHECK(check_dims(c, ops::in::INV_VARIANCE, stats, "the saved per-channel inverse variance"));
  OPGRAPH_CHECK(peer_stats(c, stats));
  OPGRAPH_CHECK(set_output_like(c, "DX", c.dims(ops::in::X), "X"));
  OPGRAPH_CHECK(c.set_output(ops::out::DSCALE, stats));
  return c.set_output(ops::out::DBIAS, stats);
}

Status infer_dbn_weight(InferContext& c) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, NormKind::BATCH, &stats));
  OPGRAPH_CHECK(c.require_floating(ops::in::DY));
  OPGRAPH_CHECK(c.require_same_dims(ops::in::DY, ops::in::X));
  OPGRAPH_CHECK(check_dims(c, ops::in::MEAN, stats, "the saved per-channel mean"));
  OPGRAPH_CHECK(check_dims(c, ops::in::INV_VARIANCE, stats, "the saved per-channel inverse variance"));
  for (const char* p : {"DSCALE", "DBIAS", "EQ_BIAS", "EQ_SCALE_DY", "EQ_SCALE_X"})
    OPGRAPH_CHECK(c.set_output(p, stats, DataType::FLOAT));
  return Status::ok();
}

}  // namespace opgraph::ops::norm
