// engines/reference/norm.cpp — reference kernels of the norm op group: the table, the
// per-sample norms (layernorm, rmsnorm, instancenorm, adalayernorm; forward in both
// phases and backward) and rope / rope_backward. Batch statistics: norm_batch.cpp.
//
// Semantics (float64 throughout; shapes in include/opgraph/builders/norm.h):
//   forward:  x_hat = (X - mean) * inv, inv = 1 / sqrt(var + EPSILON), var biased (divides
//             by the group size); rmsnorm: x_hat = X * inv, inv = 1 / sqrt(mean(X^2) + EPSILON).
//             Y = x_hat * SCALE + BIAS; MEAN / INV_VARIANCE written in TRAINING.
//   backward: norm_backward() in norm_common.h from the saved MEAN / INV_VARIANCE.
//   rope:     for each (b, s, h) and i < R/2, with c = COS[s, i], n = SIN[s, i] and the pair
//             (a, b) = (i, i + R/2) for ROTATE_HALF or (2i, 2i + 1) for INTERLEAVED:
//             Y[a] = X[a] c - X[b] n;  Y[b] = X[b] c + X[a] n;  channels >= R copy X.
//             rope_backward applies the transpose: DX[a] = DY[a] c + DY[b] n; DX[b] = DY[b] c - DY[a] n.
#include <string>

#include "engines/reference/norm_common.h"

namespace opgraph::reference {
namespace {

using norm::Axes;

Status norm_forward(KernelContext& c, Axes axes, bool rms) {
  const Array& x = c.in(ops::in::X);
  const Array& scale = c.in(ops::in::SCALE);
  const double eps = c.in(ops::in::EPSILON)[0];
  auto ix = norm::make_index(x.dims, norm::stats_dims(axes, x.dims, scale.dims), scale.dims);
  std::vector<double> mean, inv;
  norm::group_stats(x, ix, eps, rms, &mean, &inv);
  Array& y = c.out(ops::out::Y);
  const Array* bias = c.has(ops::in::BIAS) ? &c.in(ops::in::BIAS) : nullptr;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    auto g = static_cast<std::size_t>(ix.stat_of[i]);
    double v = (x[i] - mean[g]) * inv[g] * scale[ix.scale_of[i]];
    y[i] = bias ? v + (*bias)[ix.scale_of[i]] : v;
  }
  if (!rms && c.wants(ops::out::MEAN)) c.out(ops::out::MEAN).v = mean;
  if (c.wants(ops::out::INV_VARIANCE)) c.out(ops::out::INV_VARIANCE).v = inv;
  return Status::ok();
}

Status norm_backward(KernelContext& c, Axes axes, bool rms) {
  const Array& x = c.in(ops::in::X);
  const Array& scale = c.in(ops::in::SCALE);
  auto ix = norm::make_index(x.dims, norm::stats_dims(axes, x.dims, scale.dims), scale.dims);
  const std::vector<double> mean = rms ? std::vector<double>(c.in(ops::in::INV_VARIANCE).v.size(), 0.0) : c.in(ops::in::MEAN).v;
  norm::norm_backward(c.in(ops::in::DY), x, scale, ix, mean, c.in(ops::in::INV_VARIANCE).v, rms, {}, {}, 1.0,
                      c.wants(ops::out::DX) ? &c.out(ops::out::DX) : nullptr, c.wants(ops::out::DSCALE) ? &c.out(ops::out::DSCALE) : nullptr,
                      c.wants(ops::out::DBIAS) ? &c.out(ops::out::DBIAS) : nullptr);
  return Status::ok();
}

Status layernorm(KernelContext& c) { return norm_forward(c, Axes::LAYER, false); }
Status rmsnorm(KernelContext& c) { return norm_forward(c, Axes::LAYER, true); }
Status instancenorm(KernelContext& c) { return norm_forward(c, Axes::INSTANCE, false); }
Status adalayernorm(KernelContext& c) { return norm_forward(c, Axes::ADA_LAYER, false); }
Status layernorm_backward(KernelContext& c) { return norm_backward(c, Axes::LAYER, false); }
Status rmsnorm_backward(KernelContext& c) { return norm_backward(c, Axes::LAYER, true); }
Status instancenorm_backward(KernelContext& c) { return norm_backward(c, Axes::INSTANCE, false); }
Status adalayernorm_backward(KernelContext& c) { return norm_backward(c, Axes::ADA_LAYER, false); }

// Rotates (or, with `transpose`, rotates back by the transpose) every head of `in` into `out`.
Status rope_apply(KernelContext& c, std::string_view in_port, std::string_view out_port, bool transpose) {
  const Array& x = c.in(in_port);
  const Array& cs = c.in(ops::in::COS);
  const Array& sn = c.in(ops::in::SIN);
  Array& y = c.out(out_port);
  const bool interleaved = ops::attr::rotation(c.node()) == ops::Rotation::INTERLEAVED;
  const std::int64_t seq = x.dims[1], heads = x.dims[2], d = x.dims[3], half = cs.dims[1];
  const double sign = transpose ? -1.0 : 1.0;
  y.v = x.v;  // channels >= R pass through
  for (std::int64_t bsh = 0; bsh < x.dims[0] * seq * heads; ++bsh) {
    const std::int64_t s = (bsh / heads) % seq;
    const std::int64_t base = bsh * d;
    for (std::int64_t i = 0; i < half; ++i) {
      const std::int64_t a = base + (interleaved ? 2 * i : i);
      const std::int64_t b = base + (interleaved ? 2 * i + 1 : i + half);
      const double co = cs[s * half + i], si = sign * sn[s * half + i];
      y[a] = x[a] * co - x[b] * si;
      y[b] = x[b] * co + x[a] * si;
    }
  }
  return Status::ok();
}

Status rope(KernelContext& c) { return rope_apply(c, "X", "Y", false); }
Status rope_backward(KernelContext& c) { return rope_apply(c, "DY", "DX", true); }

constexpr KernelRecord kKernels[] = {
    {ops::Genstats::kIndex, norm::genstats},
    {ops::BnFinalize::kIndex, norm::bn_finalize},
    {ops::Batchnorm::kIndex, norm::batchnorm},
    {ops::BatchnormInference::kIndex, norm::batchnorm_inference},
    {ops::BatchnormBackward::kIndex, norm::batchnorm_backward},
    {ops::DbnWeight::kIndex, norm::dbn_weight},
    {ops::Layernorm::kIndex, layernorm},
    {ops::LayernormBackward::kIndex, layernorm_backward},
    {ops::Rmsnorm::kIndex, rmsnorm},
    {ops::RmsnormBackward::kIndex, rmsnorm_backward},
    {ops::Instancenorm::kIndex, instancenorm},
    {ops::InstancenormBackward::kIndex, instancenorm_backward},
    {ops::Adalayernorm::kIndex, adalayernorm},
    {ops::AdalayernormBackward::kIndex, adalayernorm_backward},
    {ops::Rope::kIndex, rope},
    {ops::RopeBackward::kIndex, rope_backward},
};

}  // namespace

std::span<const KernelRecord> norm_kernels() { return kKernels; }

}  // namespace opgraph::reference
