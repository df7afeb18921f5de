// engines/reference/array.cpp — the dense row-major float64 Array of ref_kernel.h.
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

Array::Array(Dims d, double fill) : dims(std::move(d)) {
  std::int64_t n = 1;
  for (auto x : dims) n *= x;
  v.assign(static_cast<std::size_t>(n), fill);
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
