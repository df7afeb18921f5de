// engines/reference/array.cpp — the dense row-major float64 Array of ref_kernel.h.
#include "engines/reference/ref_kernel.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace opgraph::reference {

std::optional<std::int64_t> checked_numel(std::span<const std::int64_t> dims) noexcept {
  std::int64_t n = 1;
  for (auto x : dims)
    if (x < 0 || __builtin_mul_overflow(n, x, &n)) return std::nullopt;
  return n;
}

std::optional<std::int64_t> to_index(double x) noexcept {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  if (!(x > -kLimit && x < kLimit)) return std::nullopt;  // NaN fails too
  return static_cast<std::int64_t>(x);
}

Array::Array(Dims d, double fill) : dims(std::move(d)) {
  const auto n = checked_numel(dims);
  if (!n || static_cast<std::uint64_t>(*n) > v.max_size())
    throw std::length_error("reference: an array of dims with a negative extent or more elements than fit (" +
                            std::to_string(dims.size()) + " axes)");
  v.assign(static_cast<std::size_t>(*n), fill);
}

std::int64_t Array::offset(std::span<const std::int64_t> idx) const {
  std::int64_t off = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) off = off * dims[k] + idx[k];
  return off;
}

double Array::broadcast_at(std::span<const std::int64_t> out_idx) const {
  const std::size_t r = dims.size();
  const std::size_t lead = out_idx.size() - r;  // precondition: out rank >= rank
  std::int64_t off = 0;
  for (std::size_t k = 0; k < r; ++k) off = off * dims[k] + (dims[k] == 1 ? 0 : out_idx[lead + k]);
  return v[static_cast<std::size_t>(off)];
}

}  // namespace opgraph::reference
