// engines/reference/norm_common.h — float64 cores shared by the norm group's reference
// kernels (norm.cpp: per-sample norms and rope; norm_batch.cpp: the batchnorm family).
//
// A norm partitions X's elements into groups (one per stats entry): the stats dims are
// X's dims with the normalized axes collapsed to 1 (include/opgraph/builders/norm.h).
// Every element i of X has a stats entry stat_of[i] and a SCALE entry scale_of[i]
// (SCALE broadcast over its extent-1 axes). All indices are row-major flat indices.
#pragma once

#include <vector>

#include "engines/reference/ref_kernel.h"

namespace opgraph::reference::norm {

enum class Axes { LAYER, ADA_LAYER, INSTANCE, BATCH };  // rmsnorm normalizes as LAYER

// X's dims with the kind's normalized axes collapsed (mirrors the IR's rule).
Dims stats_dims(Axes axes, const Dims& x, const Dims& scale);

struct NormIndex {
  Dims stats;
  std::vector<std::int64_t> stat_of;   // per element of X
  std::vector<std::int64_t> scale_of;  // per element of X
  std::int64_t groups = 0;             // stats entries (product of stats dims)
  std::int64_t group_size = 0;         // elements of X per stats entry (0 for an empty X)
};
NormIndex make_index(const Dims& x, const Dims& stats, const Dims& scale);

// Per-group mean (zero for rms) and inverse standard deviation 1 / sqrt(var + eps)
// (rms: 1 / sqrt(mean(x^2) + eps)); two-pass in float64.
void group_stats(const Array& x, const NormIndex& ix, double eps, bool rms, std::vector<double>* mean,
                 std::vector<double>* inv);

// Gradients of Y = x_hat * SCALE + BIAS with x_hat = (X - mean) * inv (rms: X * inv):
//   g = DY * SCALE;  DX = inv * (g - mean_group(g) - x_hat * mean_group(g * x_hat))   (rms: no mean_group(g) term)
//   DSCALE[s] = sum of DY * x_hat over the elements using SCALE entry s; DBIAS[s] = sum of DY.
// `extra_g` / `extra_gx` (may be empty) add per-group sums of g and g * x_hat from other
// devices, whose groups hold (count_factor - 1) * group_size further elements.
// dx / dscale / dbias may be null (not wanted).
void norm_backward(const Array& dy, const Array& x, const Array& scale, const NormIndex& ix,
                   const std::vector<double>& mean, const std::vector<double>& inv, bool rms,
                   const std::vector<double>& extra_g, const std::vector<double>& extra_gx, double count_factor,
                   Array* dx, Array* dscale, Array* dbias);

// The batch-statistics kernels (norm_batch.cpp), listed in norm.cpp's table.
Status genstats(KernelContext& c);
Status bn_finalize(KernelContext& c);
Status batchnorm(KernelContext& c);
Status batchnorm_inference(KernelContext& c);
Status batchnorm_backward(KernelContext& c);
Status dbn_weight(KernelContext& c);

}  // namespace opgraph::reference::norm
