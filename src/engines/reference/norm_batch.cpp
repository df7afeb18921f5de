// engines/reference/norm_batch.cpp — reference kernels of the batch-statistics ops
// (float64; every per-channel tensor is [1, C, 1, ...], read flat by channel).
//
//   genstats:  SUM[c] = sum of X over every axis but 1; SQ_SUM[c] = sum of X^2.
//   bn_finalize (n = ACCUM_COUNT, must be >= 1): MEAN = SUM / n; var = SQ_SUM / n - MEAN^2 (biased);
//              INV_VARIANCE = 1 / sqrt(var + EPSILON); EQ_SCALE = SCALE * INV_VARIANCE;
//              EQ_BIAS = BIAS - MEAN * EQ_SCALE, so EQ_SCALE * X + EQ_BIAS is batchnorm's Y.
//   running stats (bn_finalize and batchnorm, cuDNN's exponential average with the unbiased variance):
//              NEXT_RUNNING_MEAN = (1 - MOMENTUM) * PREV_RUNNING_MEAN + MOMENTUM * MEAN
//              NEXT_RUNNING_VAR  = (1 - MOMENTUM) * PREV_RUNNING_VAR + MOMENTUM * var * n / (n - 1)  (var when n = 1)
//   batchnorm: groups = channels, n = elements per channel; with P peer stats tensors (each the
//              per-channel [sum; sum of squares] of a peer holding as many elements) the totals are
//              local + peers over n * (1 + P) elements and var = E[x^2] - mean^2; without peers the
//              stats are two-pass. Y = (X - MEAN) * INV_VARIANCE * SCALE + BIAS.
//   batchnorm_inference: Y = (X - MEAN) * INV_VARIANCE * SCALE + BIAS.
//   batchnorm_backward: norm_backward() (norm_common.h) with peers' [sum DY; sum DY * x_hat] added to
//              the per-channel sums (and to DBIAS / DSCALE), over n * (1 + P) elements.
//   dbn_weight: DSCALE = sum DY * x_hat, DBIAS = sum DY (per channel, n elements);
//              EQ_SCALE_DY = SCALE * inv; EQ_SCALE_X = -SCALE * inv^2 * DSCALE / n;
//              EQ_BIAS = SCALE * inv * (MEAN * inv * DSCALE - DBIAS) / n,
//              so EQ_SCALE_DY * DY + EQ_SCALE_X * X + EQ_BIAS is batchnorm_backward's DX.
#include <algorithm>
#include <cmath>
#include <string>

#include "engines/reference/norm_common.h"

namespace opgraph::reference::norm {
namespace {

std::int64_t channels(const Dims& x) { return x.size() > 1 ? x[1] : 1; }

// Channel of X's flat element i.
struct ChannelOf {
  std::int64_t c, inner;
  std::int64_t operator()(std::int64_t i) const { return (i / inner) % c; }
};
ChannelOf channel_of(const Dims& x) {
  std::int64_t inner = 1;
  for (std::size_t k = 2; k < x.size(); ++k) inner *= x[k];
  return {channels(x), inner};
}

void running_stats(KernelContext& c, const std::vector<double>& mean, const std::vector<double>& var, double n) {
  if (!c.wants(ops::out::NEXT_RUNNING_MEAN) && !c.wants(ops::out::NEXT_RUNNING_VAR)) return;
  const double m = c.in(ops::in::MOMENTUM)[0];
  const double unbias = n > 1.0 ? n / (n - 1.0) : 1.0;
  const Array& pm = c.in(ops::in::PREV_RUNNING_MEAN);
  const Array& pv = c.in(ops::in::PREV_RUNNING_VAR);
  for (std::size_t ch = 0; ch < mean.size(); ++ch) {
    auto k = static_cast<std::int64_t>(ch);
    if (c.wants(ops::out::NEXT_RUNNING_MEAN)) c.out(ops::out::NEXT_RUNNING_MEAN)[k] = (1.0 - m) * pm[k] + m * mean[ch];
    if (c.wants(ops::out::NEXT_RUNNING_VAR)) c.out(ops::out::NEXT_RUNNING_VAR)[k] = (1.0 - m) * pv[k] + m * var[ch] * unbias;
  }
}

}  // namespace

Status genstats(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  auto ch = channel_of(x.dims);
  Array& sum = c.out(ops::out::SUM);
  Array& sq = c.out(ops::out::SQ_SUM);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    sum[ch(i)] += x[i];
    sq[ch(i)] += x[i] * x[i];
  }
  return Status::ok();
}

Status bn_finalize(KernelContext& c) {
  const Array& sum = c.in(ops::in::SUM);
  const Array& sq = c.in(ops::in::SQ_SUM);
  const double n = c.in(ops::in::ACCUM_COUNT)[0];
  if (!(n >= 1.0)) return c.fail("ACCUM_COUNT must be >= 1, got " + std::to_string(n));
  const double eps = c.in(ops::in::EPSILON)[0];
  const std::size_t chs = static_cast<std::size_t>(sum.numel());
  std::vector<double> mean(chs), var(chs);
  for (std::size_t k = 0; k < chs; ++k) {
    auto i = static_cast<std::int64_t>(k);
    mean[k] = sum[i] / n;
    var[k] = sq[i] / n - mean[k] * mean[k];
    const double inv = 1.0 / std::sqrt(var[k] + eps);
    const double eq_scale = c.in(ops::in::SCALE)[i] * inv;
    c.out(ops::out::MEAN)[i] = mean[k];
    c.out(ops::out::INV_VARIANCE)[i] = inv;
    c.out(ops::out::EQ_SCALE)[i] = eq_scale;
    c.out(ops::out::EQ_BIAS)[i] = c.in(ops::in::BIAS)[i] - mean[k] * eq_scale;
  }
  running_stats(c, mean, var, n);
  return Status::ok();
}

Status batchnorm(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  const Array& scale = c.in(ops::in::SCALE);
  const Array& bias = c.in(ops::in::BIAS);
  const double eps = c.in(ops::in::EPSILON)[0];
  auto ix = make_index(x.dims, stats_dims(Axes::BATCH, x.dims, scale.dims), scale.dims);
  std::vector<double> mean, inv;
  group_stats(x, ix, eps, false, &mean, &inv);
  const auto peers = c.ins(ops::in::PEER_STATS);
  const std::size_t chs = mean.size();
  const double n = static_cast<double>(std::max<std::int64_t>(ix.group_size, 1)) * static_cast<double>(1 + peers.size());
  std::vector<double> var(chs);
  for (std::size_t k = 0; k < chs; ++k) var[k] = 1.0 / (inv[k] * inv[k]) - eps;
  if (!peers.empty()) {
    std::vector<double> sum(chs, 0.0), sq(chs, 0.0);
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      sum[static_cast<std::size_t>(ix.stat_of[i])] += x[i];
      sq[static_cast<std::size_t>(ix.stat_of[i])] += x[i] * x[i];
    }
    for (const Array* p : peers)
      for (std::size_t k = 0; k < chs; ++k) {
        sum[k] += (*p)[static_cast<std::int64_t>(k)];
        sq[k] += (*p)[static_cast<std::int64_t>(chs + k)];
      }
    for (std::size_t k = 0; k < chs; ++k) {
      mean[k] = sum[k] / n;
      var[k] = sq[k] / n - mean[k] * mean[k];
      inv[k] = 1.0 / std::sqrt(var[k] + eps);
    }
  }
  Array& y = c.out(ops::out::Y);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    auto g = static_cast<std::size_t>(ix.stat_of[i]);
    y[i] = (x[i] - mean[g]) * inv[g] * scale[ix.scale_of[i]] + bias[ix.scale_of[i]];
  }
  c.out(ops::out::MEAN).v = mean;
  c.out(ops::out::INV_VARIANCE).v = inv;
  running_stats(c, mean, var, n);
  return Status::ok();
}

Status batchnorm_inference(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  auto ch = channel_of(x.dims);
  const Array &mean = c.in(ops::in::MEAN), &inv = c.in(ops::in::INV_VARIANCE), &scale = c.in(ops::in::SCALE), &bias = c.in(ops::in::BIAS);
  Array& y = c.out(ops::out::Y);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const std::int64_t k = ch(i);
    y[i] = (x[i] - mean[k]) * inv[k] * scale[k] + bias[k];
  }
  return Status::ok();
}

Status batchnorm_backward(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  const Array& scale = c.in(ops::in::SCALE);
  auto ix = make_index(x.dims, stats_dims(Axes::BATCH, x.dims, scale.dims), scale.dims);
  const auto peers = c.ins(ops::in::PEER_STATS);
  const std::size_t chs = static_cast<std::size_t>(scale.numel());
  std::vector<double> peer_dy(chs, 0.0), peer_dyx(chs, 0.0), extra_g, extra_gx;
  for (const Array* p : peers)
    for (std::size_t k = 0; k < chs; ++k) {
      peer_dy[k] += (*p)[static_cast<std::int64_t>(k)];
      peer_dyx[k] += (*p)[static_cast<std::int64_t>(chs + k)];
    }
  if (!peers.empty())
    for (std::size_t k = 0; k < chs; ++k) {
      extra_g.push_back(scale[static_cast<std::int64_t>(k)] * peer_dy[k]);
      extra_gx.push_back(scale[static_cast<std::int64_t>(k)] * peer_dyx[k]);
    }
  Array& dscale = c.out(ops::out::DSCALE);
  Array& dbias = c.out(ops::out::DBIAS);
  norm_backward(c.in(ops::in::DY), x, scale, ix, c.in(ops::in::MEAN).v, c.in(ops::in::INV_VARIANCE).v, false, extra_g, extra_gx,
                static_cast<double>(1 + peers.size()), &c.out(ops::out::DX), &dscale, &dbias);
  for (std::size_t k = 0; k < chs; ++k) {
    dscale[static_cast<std::int64_t>(k)] += peer_dyx[k];
    dbias[static_cast<std::int64_t>(k)] += peer_dy[k];
  }
  return Status::ok();
}

Status dbn_weight(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  const Array& scale = c.in(ops::in::SCALE);
  const Array& mean = c.in(ops::in::MEAN);
  const Array& inv = c.in(ops::in::INV_VARIANCE);
  auto ix = make_index(x.dims, stats_dims(Axes::BATCH, x.dims, scale.dims), scale.dims);
  Array& dscale = c.out(ops::out::DSCALE);
  Array& dbias = c.out(ops::out::DBIAS);
  norm_backward(c.in(ops::in::DY), x, scale, ix, mean.v, inv.v, false, {}, {}, 1.0, nullptr, &dscale, &dbias);
  const double n = static_cast<double>(std::max<std::int64_t>(ix.group_size, 1));
  for (std::int64_t k = 0; k < scale.numel(); ++k) {
    const double s = scale[k], r = inv[k];
    c.out(ops::out::EQ_SCALE_DY)[k] = s * r;
    c.out(ops::out::EQ_SCALE_X)[k] = -s * r * r * dscale[k] / n;
    c.out(ops::out::EQ_BIAS)[k] = s * r * (mean[k] * r * dscale[k] - dbias[k]) / n;
  }
  return Status::ok();
}

}  // namespace opgraph::reference::norm
