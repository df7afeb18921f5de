// engines/reference/norm_common.cpp — the float64 grouping, statistics and backward
// cores of the norm reference kernels (contract in norm_common.h).
#include "engines/reference/norm_common.h"

#include <algorithm>
#include <cmath>

namespace opgraph::reference::norm {

Dims stats_dims(Axes axes, const Dims& x, const Dims& scale) {
  Dims s = x;
  for (std::size_t i = 0; i < x.size(); ++i) {
    bool normalized = false;
    switch (axes) {
      case Axes::LAYER:
      case Axes::ADA_LAYER: normalized = i >= 1 && scale[i] != 1; break;
      case Axes::INSTANCE: normalized = i >= 2; break;
      case Axes::BATCH: normalized = i != 1; break;
    }
    if (normalized) s[i] = 1;
  }
  return s;
}

NormIndex make_index(const Dims& x, const Dims& stats, const Dims& scale) {
  NormIndex ix;
  ix.stats = stats;
  std::int64_t n = 1, groups = 1;
  for (auto d : x) n *= d;
  for (auto d : stats) groups *= d;
  ix.groups = groups;
  ix.group_size = groups ? n / groups : 0;
  ix.stat_of.reserve(static_cast<std::size_t>(n));
  ix.scale_of.reserve(static_cast<std::size_t>(n));
  for_each_index(x, [&](std::span<const std::int64_t> idx) {
    std::int64_t so = 0, sc = 0;
    for (std::size_t k = 0; k < x.size(); ++k) {
      so = so * stats[k] + (stats[k] == 1 ? 0 : idx[k]);
      sc = sc * scale[k] + (scale[k] == 1 ? 0 : idx[k]);
    }
    ix.stat_of.push_back(so);
    ix.scale_of.push_back(sc);
  });
  return ix;
}

void group_stats(const Array& x, const NormIndex& ix, double eps, bool rms, std::vector<double>* mean,
                 std::vector<double>* inv) {
  const auto groups = static_cast<std::size_t>(ix.groups);
  mean->assign(groups, 0.0);
  inv->assign(groups, 0.0);
  const double n = static_cast<double>(std::max<std::int64_t>(ix.group_size, 1));
  if (!rms) {
    for (std::int64_t i = 0; i < x.numel(); ++i) (*mean)[static_cast<std::size_t>(ix.stat_of[i])] += x[i];
    for (auto& m : *mean) m /= n;
  }
  std::vector<double> sq(groups, 0.0);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    auto g = static_cast<std::size_t>(ix.stat_of[i]);
    double d = x[i] - (*mean)[g];
    sq[g] += d * d;
  }
  for (std::size_t g = 0; g < groups; ++g) (*inv)[g] = 1.0 / std::sqrt(sq[g] / n + eps);
}

void norm_backward(const Array& dy, const Array& x, const Array& scale, const NormIndex& ix,
                   const std::vector<double>& mean, const std::vector<double>& inv, bool rms,
                   const std::vector<double>& extra_g, const std::vector<double>& extra_gx, double count_factor,
                   Array* dx, Array* dscale, Array* dbias) {
  const std::size_t groups = inv.size();
  std::vector<double> sum_g(groups, 0.0), sum_gx(groups, 0.0);
  auto xhat = [&](std::int64_t i) {
    auto g = static_cast<std::size_t>(ix.stat_of[i]);
    return (x[i] - (rms ? 0.0 : mean[g])) * inv[g];
  };
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    auto g = static_cast<std::size_t>(ix.stat_of[i]);
    double gi = dy[i] * scale[ix.scale_of[i]];
    sum_g[g] += gi;
    sum_gx[g] += gi * xhat(i);
    if (dscale) (*dscale)[ix.scale_of[i]] += dy[i] * xhat(i);
    if (dbias) (*dbias)[ix.scale_of[i]] += dy[i];
  }
  for (std::size_t g = 0; g < groups; ++g) {
    if (!extra_g.empty()) sum_g[g] += extra_g[g];
    if (!extra_gx.empty()) sum_gx[g] += extra_gx[g];
  }
  if (!dx) return;
  const double n = static_cast<double>(std::max<std::int64_t>(ix.group_size, 1)) * count_factor;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    auto g = static_cast<std::size_t>(ix.stat_of[i]);
    double gi = dy[i] * scale[ix.scale_of[i]];
    double centered = rms ? gi : gi - sum_g[g] / n;
    (*dx)[i] = inv[g] * (centered - xhat(i) * sum_gx[g] / n);
  }
}

}  // namespace opgraph::reference::norm
