// ir/ops/norm_rules.cpp — shape rules shared by the norm group (see norm_rules.h):
// which axes each norm normalizes, the stats shape, scalar ports.
#include "ir/ops/norm_rules.h"

#include <cstdio>

namespace opgraph::ops::norm {

namespace {

std::string_view kind_name(NormKind k) {
  switch (k) {
    case NormKind::LAYER: return "layernorm";
    case NormKind::RMS: return "rmsnorm";
    case NormKind::ADA_LAYER: return "adalayernorm";
    case NormKind::INSTANCE: return "instancenorm";
    case NormKind::BATCH: return "batchnorm";
  }
  return "norm";
}

}  // namespace

Dims channel_dims(const Dims& x) {
  Dims d(x.size(), 1);
  if (d.size() > 1) d[1] = x[1];
  return d;
}

Status scale_and_stats(InferContext& c, NormKind kind, Dims* stats) {
  std::int64_t min_rank = kind == NormKind::INSTANCE ? 3 : 2;
  OPGRAPH_CHECK(c.require_rank_between(ops::in::X, min_rank, 8));
  OPGRAPH_CHECK(c.require_floating(ops::in::X));
  OPGRAPH_CHECK(c.require_floating(ops::in::SCALE));
  const Dims& x = c.dims(ops::in::X);
  const Dims& s = c.dims(ops::in::SCALE);
  if (s.size() != x.size())
    return c.fail(ops::in::SCALE, "rank must equal X's rank " + std::to_string(x.size()) + ", got " +
                               InferContext::dims_str(s) + " for X " + InferContext::dims_str(x));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (s[i] != 1 && s[i] != x[i])
      return c.fail(ops::in::SCALE, "axis " + std::to_string(i) + " extent must be 1 or X's " + std::to_string(x[i]) +
                                 ", got " + InferContext::dims_str(s) + " for X " + InferContext::dims_str(x));
  *stats = x;
  switch (kind) {
    case NormKind::LAYER:
    case NormKind::RMS:
    case NormKind::ADA_LAYER: {
      bool per_sample = kind == NormKind::ADA_LAYER;
      if (per_sample && s[0] != x[0])
        return c.fail(ops::in::SCALE, "adalayernorm takes a per-sample scale: axis 0 must be X's batch " +
                                   std::to_string(x[0]) + ", got " + InferContext::dims_str(s));
      if (!per_sample && s[0] != 1)
        return c.fail(ops::in::SCALE, std::string(kind_name(kind)) + " scale is shared by the batch: axis 0 must be 1, got " +
                                   InferContext::dims_str(s));
      bool any = false;
      for (std::size_t i = 1; i < x.size(); ++i)
        if (s[i] != 1) { (*stats)[i] = 1; any = true; }
      if (!any)
        return c.fail(ops::in::SCALE, "must span at least one normalized axis (an axis >= 1 where its extent is not 1), got " +
                                   InferContext::dims_str(s) + " for X " + InferContext::dims_str(x));
      break;
    }
    case NormKind::INSTANCE:
    case NormKind::BATCH:
      if (s != channel_dims(x))
        return c.fail(ops::in::SCALE, std::string(kind_name(kind)) + " takes a per-channel scale " +
                                   InferContext::dims_str(channel_dims(x)) + ", got " + InferContext::dims_str(s));
      for (std::size_t i = 2; i < x.size(); ++i) (*stats)[i] = 1;
      if (kind == NormKind::BATCH) (*stats)[0] = 1;
      break;
  }
  return Status::ok();
}

Status check_scalar(InferContext& c, ops::PortRef port) {
  if (!c.has(port)) return Status::ok();
  OPGRAPH_CHECK(c.require_floating(port));
  return c.require_numel(port, 1, "a scalar");
}

// What we match. cudnn-frontend (NVIDIA/cudnn-frontend 3929da2, node/layernorm.h,
// rmsnorm.h, batchnorm.h, instancenorm.h, bn_finalize.h, adaptive_layernorm.h) never
// reads epsilon's value: its pre_validate_node checks the forward phase only and the
// tensor goes to the backend as the NORM_FWD / BN_FINALIZE EPSILON_DESC. cuDNN's own
// header (cudnn_ops.h, 9.x) says epsilon "has to be >= CUDNN_BN_MIN_EPSILON", which is
// 0.0. So the bound is eps >= 0, written so that NaN fails it; +inf meets it and passes.
Status check_epsilon(InferContext& c) {
  if (!c.has(ops::in::EPSILON)) return Status::ok();
  OPGRAPH_CHECK(check_scalar(c, ops::in::EPSILON));
  const auto& v = c.in(ops::in::EPSILON)->get_pass_by_value();
  if (!v) return Status::ok();
  const double eps = v->as_double();
  if (!(eps >= 0.0)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", eps);
    return c.fail(ops::in::EPSILON, std::string("rule epsilon_range: epsilon must be >= 0 (cuDNN's CUDNN_BN_MIN_EPSILON), got ") + got);
  }
  return Status::ok();
}

Status check_dims(InferContext& c, ops::PortRef port, const Dims& dims, std::string_view what) {
  OPGRAPH_CHECK(c.require_floating(port));
  if (c.dims(port) != dims)
    return c.fail(port, std::string(what) + " must have dims " + InferContext::dims_str(dims) + ", got " +
                            InferContext::dims_str(c.dims(port)));
  return Status::ok();
}

// Unset (no valid graph: the record requires it) reads as not training; the cuDNN
// lowering reads the phase through the same accessor.
bool is_training(const Node& n) { return ops::attr::forward_phase(n) == ops::ForwardPhase::TRAINING; }
bool has_prev_running_stats(const Node& n) { return n.input(ops::in::PREV_RUNNING_MEAN) != nullptr; }
bool has_dbias(const Node& n) { return ops::RmsnormBackward::has_dbias(n); }

}  // namespace opgraph::ops::norm
