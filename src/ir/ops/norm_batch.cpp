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
  bool m = c.has("PREV_RUNNING_MEAN"), v = c.has("PREV_RUNNING_VAR"), mo = c.has("MOMENTUM");
  if (!m && !v && !mo) return Status::ok();
  for (const char* p : {"PREV_RUNNING_MEAN", "PREV_RUNNING_VAR", "MOMENTUM"})
    if (!c.has(p))
      return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, p,
                         "previous running stats need PREV_RUNNING_MEAN, PREV_RUNNING_VAR and MOMENTUM together");
  OPGRAPH_CHECK(check_dims(c, "PREV_RUNNING_MEAN", stats, "the previous running mean (per channel)"));
  OPGRAPH_CHECK(check_dims(c, "PREV_RUNNING_VAR", stats, "the previous running variance (per channel)"));
  return check_scalar(c, "MOMENTUM");
}

Status peer_stats(InferContext& c, const Dims& stats) {
  Dims want = stats;
  want[0] = 2;
  for (const auto& t : c.ins("PEER_STATS")) {
    if (!is_floating(t->get_data_type()) || t->get_dim() != want)
      return c.fail("PEER_STATS", "each peer stats tensor ('" + t->get_name() + "') must be floating with dims " +
                                      InferContext::dims_str(want) + " (two rows per channel), got " +
                                      InferContext::dims_str(t->get_dim()) + " " +
                                      std::string(to_string(t->get_data_type())));
  }
  return Status::ok();
}

}  // namespace

Status infer_genstats(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank_between("X", 2, 8));
  OPGRAPH_CHECK(c.require_floating("X"));
  Dims ch = channel_dims(c.dims("X"));
  OPGRAPH_CHECK(set_output_like(c, "SUM", ch, "X", DataType::FLOAT));
  return set_output_like(c, "SQ_SUM", ch, "X", DataType::FLOAT);
}

Status infer_bn_finalize(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank_between("SUM", 2, 8));
  const Dims& sum = c.dims("SUM");
  Dims ch = channel_dims(sum);
  if (sum != ch)
    return c.fail("SUM", "must be per channel [1, C, 1, ...], got " + InferContext::dims_str(sum));
  OPGRAPH_CHECK(check_dims(c, "SUM", ch, "the per-channel sum"));
  OPGRAPH_CHECK(check_dims(c, "SQ_SUM", ch, "the per-channel sum of squares (as SUM)"));
  OPGRAPH_CHECK(check_dims(c, "SCALE", ch, "SCALE (per channel, as SUM)"));
  OPGRAPH_CHECK(check_dims(c, "BIAS", ch, "BIAS (per channel, as SUM)"));
  OPGRAPH_CHECK(check_epsilon(c));
  OPGRAPH_CHECK(c.require_integer_index("ACCUM_COUNT"));
  OPGRAPH_CHECK(c.require_numel("ACCUM_COUNT", 1, "the element count per channel behind SUM"));
  OPGRAPH_CHECK(running_stats(c, ch));
  for (const char* p : {"EQ_SCALE", "EQ_BIAS", "MEAN", "INV_VARIANCE", "NEXT_RUNNING_MEAN", "NEXT_RUNNING_VAR"})
    OPGRAPH_CHECK(c.set_output(p, ch, DataType::FLOAT));
  return Status::ok();
}

Status infer_batchnorm(InferContext& c) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, NormKind::BATCH, &stats));
  OPGRAPH_CHECK(check_dims(c, "BIAS", stats, "BIAS (per channel, as SCALE)"));
  OPGRAPH_CHECK(c.require("EPSILON"));
  OPGRAPH_CHECK(check_epsilon(c));
  OPGRAPH_CHECK(running_stats(c, stats));
  OPGRAPH_CHECK(peer_stats(c, stats));
  OPGRAPH_CHECK(set_output_like(c, "Y", c.dims("X"), "X"));
  for (const char* p : {"MEAN", "INV_VARIANCE", "NEXT_RUNNING_MEAN", "NEXT_RUNNING_VAR"})
    OPGRAPH_CHECK(c.set_output(p, stats, DataType::FLOAT));
  return Status::ok();
}

Status infer_batchnorm_inference(InferContext& c) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, NormKind::BATCH, &stats));
  OPGRAPH_CHECK(check_dims(c, "BIAS", stats, "BIAS (per channel, as SCALE)"));
  OPGRAPH_CHECK(check_dims(c, "MEAN", stats, "the per-channel mean"));
  OPGRAPH_CHECK(check_dims(c, "INV_VARIANCE", stats, "the per-channel inverse variance"));
  return set_output_like(c, "Y", c.dims("X"), "X");
}

Status infer_batchnorm_backward(InferContext& c) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, NormKind::BATCH, &stats));
  OPGRAPH_CHECK(c.require_floating("DY"));
  OPGRAPH_CHECK(c.require_same_dims("DY", "X"));
  OPGRAPH_CHECK(check_dims(c, "MEAN", stats, "the saved per-channel mean"));
  OPGRAPH_CHECK(check_dims(c, "INV_VARIANCE", stats, "the saved per-channel inverse variance"));
  OPGRAPH_CHECK(peer_stats(c, stats));
  OPGRAPH_CHECK(set_output_like(c, "DX", c.dims("X"), "X"));
  OPGRAPH_CHECK(c.set_output("DSCALE", stats));
  return c.set_output("DBIAS", stats);
}

Status infer_dbn_weight(InferContext& c) {
  Dims stats;
  OPGRAPH_CHECK(scale_and_stats(c, NormKind::BATCH, &stats));
  OPGRAPH_CHECK(c.require_floating("DY"));
  OPGRAPH_CHECK(c.require_same_dims("DY", "X"));
  OPGRAPH_CHECK(check_dims(c, "MEAN", stats, "the saved per-channel mean"));
  OPGRAPH_CHECK(check_dims(c, "INV_VARIANCE", stats, "the saved per-channel inverse variance"));
  for (const char* p : {"DSCALE", "DBIAS", "EQ_BIAS", "EQ_SCALE_DY", "EQ_SCALE_X"})
    OPGRAPH_CHECK(c.set_output(p, stats, DataType::FLOAT));
  return Status::ok();
}

}  // namespace opgraph::ops::norm
