// ir/ops/output_layout.cpp — output strides that follow an input's layout order (see output_layout.h).
#include "ir/ops/output_layout.h"

#include <algorithm>
#include <numeric>

namespace opgraph::ops {

Status set_output_like(InferContext& c, std::string_view port, const Dims& dims, std::string_view ref_port,
                       DataType dtype) {
  OPGRAPH_CHECK(c.set_output(port, dims, dtype));
  TensorPtr t = c.out(port);
  TensorPtr ref = c.in(ref_port);
  if (!t || !ref || t->stride_set_by_user() || ref->get_stride().size() != dims.size()) return Status::ok();
  // Axis order of the reference layout: outermost (largest stride) first, ties keep axis order.
  const Dims& rs = ref->get_stride();
  std::vector<std::size_t> order(dims.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rs[a] > rs[b]; });
  Dims st(dims.size(), 1);
  std::int64_t running = 1;
  for (std::size_t k = dims.size(); k-- > 0;) {
    st[order[k]] = running;
    // An oversized tensor keeps set_output's strides; validate() refuses it after inference.
    if (__builtin_mul_overflow(running, std::max<std::int64_t>(dims[order[k]], 1), &running)) return Status::ok();
  }
  Tensor::Internal::infer_stride(*t, st);
  return Status::ok();
}

}  // namespace opgraph::ops
