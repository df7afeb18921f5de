// engines/reference/tensor_ops.cpp — reference kernels of the tensor-ops core records
// (semantics atop src/ir/ops/tensor_ops.cpp): reduction, rng, reshape, transpose, slice,
// concatenate; and the group's kernel table.
//
// reduction accumulates in float64 over X's axes whose Y extent is 1: ADD, MUL, MIN,
//   MAX, AMAX (max |x|), AVG (sum / count), NORM1 (sum |x|), NORM2 (sqrt of sum x²),
//   MUL_NO_ZEROS (product of the non-zero x; 1 when every x is zero). is_deterministic
//   changes nothing here: the reference is always deterministic.
// rng draws element i (row-major logical index of Y) from the Philox stream of
//   (seed, offset) as documented in rng.h: UNIFORM min + (max - min) * uniform(i),
//   NORMAL mean + sd * normal(i), BERNOULLI bernoulli(i, p). A negative Seed/Offset
//   value is reinterpreted as its 64-bit two's complement.
// reshape copies in row-major logical order (Y's strides are the executor's business);
// transpose, slice and concatenate move elements as their records say.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engines/reference/rng.h"
#include "engines/reference/tensor_ops_common.h"

namespace opgraph::reference {
namespace {

Status reduction(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  Array& y = c.out(ops::out::Y);
  using RM = ops::ReductionMode;
  const std::optional<RM> m = ops::Reduction::mode(c.node());
  if (!m) return c.fail("reduction without a mode", ErrorCode::INTERNAL_ERROR);  // validate() refuses it
  const RM mode = *m;
  double init = 0.0;
  if (mode == RM::MUL || mode == RM::MUL_NO_ZEROS) init = 1.0;
  else if (mode == RM::MIN) init = std::numeric_limits<double>::infinity();
  else if (mode == RM::MAX) init = -std::numeric_limits<double>::infinity();
  std::fill(y.v.begin(), y.v.end(), init);
  std::vector<std::int64_t> yi(y.dims.size());
  std::int64_t flat = 0;
  for_each_index(x.dims, [&](std::span<const std::int64_t> idx) {
    for (std::size_t k = 0; k < yi.size(); ++k) yi[k] = y.dims[k] == 1 ? 0 : idx[k];
    double& acc = y[y.offset(yi)];
    const double v = x[flat++];
    if (mode == RM::ADD || mode == RM::AVG) acc += v;
    else if (mode == RM::MUL) acc *= v;
    else if (mode == RM::MUL_NO_ZEROS) acc *= v != 0.0 ? v : 1.0;
    else if (mode == RM::MIN) acc = std::fmin(acc, v);
    else if (mode == RM::MAX) acc = std::fmax(acc, v);
    else if (mode == RM::AMAX) acc = std::fmax(acc, std::fabs(v));
    else if (mode == RM::NORM1) acc += std::fabs(v);
    else if (mode == RM::NORM2) acc += v * v;
  });
  if (mode == RM::AVG) {
    const double count = static_cast<double>(x.numel()) / static_cast<double>(std::max<std::int64_t>(y.numel(), 1));
    for (auto& v : y.v) v /= count;
  } else if (mode == RM::NORM2) {
    for (auto& v : y.v) v = std::sqrt(v);
  }
  return Status::ok();
}

Status rng(KernelContext& c) {
  const Node& n = c.node();
  const auto seed = static_cast<std::uint64_t>(c.has(ops::in::Seed) ? as_index(c.in(ops::in::Seed)[0]) : ops::attr::seed(n).value_or(0));
  const auto offset = static_cast<std::uint64_t>(c.has(ops::in::Offset) ? as_index(c.in(ops::in::Offset)[0]) : 0);
  using D = ops::Distribution;
  const std::optional<D> d = ops::Rng::distribution(n);
  if (!d) return c.fail("rng without a distribution", ErrorCode::INTERNAL_ERROR);  // validate() refuses it
  const D dist = *d;
  Array& y = c.out(ops::out::Y);
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    const auto k = static_cast<std::uint64_t>(i);
    if (dist == D::UNIFORM) {
      const double lo = ops::attr::uniform_dist_minimum(n), hi = ops::attr::uniform_dist_maximum(n);
      y[i] = lo + (hi - lo) * rng_uniform(seed, offset, k);
    } else if (dist == D::NORMAL) {
      y[i] = ops::attr::normal_dist_mean(n) +
             ops::attr::normal_dist_standard_deviation(n) * rng_normal(seed, offset, k);
    } else {
      y[i] = rng_bernoulli(seed, offset, k, ops::attr::bernoulli_probability(n).value_or(0.0));
    }
  }
  return Status::ok();
}

Status reshape(KernelContext& c) {
  c.out(ops::out::Y).v = c.in(ops::in::X).v;
  return Status::ok();
}

Status transpose(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  Array& y = c.out(ops::out::Y);
  const Dims perm = ops::attr::permutation(c.node()).value_or(std::vector<std::int64_t>{});
  std::vector<std::int64_t> xi(x.dims.size());
  std::int64_t flat = 0;
  for_each_index(y.dims, [&](std::span<const std::int64_t> idx) {
    for (std::size_t k = 0; k < perm.size(); ++k) xi[static_cast<std::size_t>(perm[k])] = idx[k];
    y[flat++] = x[x.offset(xi)];
  });
  return Status::ok();
}

Status slice(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  Array& y = c.out(ops::out::Y);
  const Dims s = ops::attr::slices(c.node()).value_or(std::vector<std::int64_t>{});
  const Dims st = c.node().attr_is_set("strides") ? ops::attr::strides(c.node()).value_or(std::vector<std::int64_t>{}) : Dims(x.dims.size(), 1);
  std::vector<std::int64_t> xi(x.dims.size());
  std::int64_t flat = 0;
  for_each_index(y.dims, [&](std::span<const std::int64_t> idx) {
    for (std::size_t k = 0; k < xi.size(); ++k) xi[k] = s[2 * k] + idx[k] * st[k];
    y[flat++] = x[x.offset(xi)];
  });
  return Status::ok();
}

Status concatenate(KernelContext& c) {
  auto xs = c.ins(ops::in::X);
  Array& y = c.out(ops::out::Y);
  std::int64_t axis = ops::Concatenate::axis(c.node()).value_or(0);
  if (axis < 0) axis += y.rank();
  std::int64_t base = 0;
  std::vector<std::int64_t> yi(y.dims.size());
  for (const Array* x : xs) {
    std::int64_t flat = 0;
    for_each_index(x->dims, [&](std::span<const std::int64_t> idx) {
      std::copy(idx.begin(), idx.end(), yi.begin());
      yi[static_cast<std::size_t>(axis)] += base;
      y[y.offset(yi)] = (*x)[flat++];
    });
    base += x->dims[static_cast<std::size_t>(axis)];
  }
  return Status::ok();
}

const KernelRecord kKernels[] = {
    {ops::Reduction::kIndex, reduction}, {ops::Rng::kIndex, rng},     {ops::Reshape::kIndex, reshape},
    {ops::Transpose::kIndex, transpose}, {ops::Slice::kIndex, slice}, {ops::Concatenate::kIndex, concatenate},
};

}  // namespace

std::span<const KernelRecord> tensor_op_core_kernels() { return kKernels; }

std::span<const KernelRecord> tensor_op_kernels() {
  static const std::vector<KernelRecord> kAll = [] {
    std::vector<KernelRecord> v;
    for (auto part : {tensor_op_core_kernels(), tensor_op_window_kernels(), tensor_op_block_scale_kernels()})
      v.insert(v.end(), part.begin(), part.end());
    return v;
  }();
  return kAll;
}

}  // namespace opgraph::reference
