// ir/ops/output_layout.cpp — output strides that follow an input's layout class (see output_layout.h).
#include "ir/ops/output_layout.h"

#include <algorithm>
#include <numeric>

namespace opgraph::ops {

std::vector<std::size_t> layout_order(const Tensor& ref) {
  const Dims& rs = ref.get_stride();
  const Dims& rd = ref.get_dim();
  std::vector<std::size_t> order(rs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto wide = [&](std::size_t a) { return a < rd.size() && rd[a] != 1; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (rs[a] != rs[b]) return rs[a] > rs[b];
    return wide(a) && !wide(b);  // the extent-1 axis goes inside; equal kinds keep axis order
  });
  return order;
}

bool dense_strides_in_order(const Dims& dims, const std::vector<std::size_t>& order, Dims* out) {
  Dims st(dims.size(), 1);
  std::int64_t running = 1;
  for (std::size_t k = order.size(); k-- > 0;) {
    st[order[k]] = running;
    if (__builtin_mul_overflow(running, std::max<std::int64_t>(dims[order[k]], 1), &running)) return false;
  }
  *out = std::move(st);
  return true;
}

void follow_layout(InferContext& c, std::string_view port, const Tensor* ref) {
  TensorPtr t = c.out(port);
  if (!t || !ref || t->stride_set_by_user()) return;
  const Dims& dims = t->get_dim();
  if (ref->get_stride().size() != dims.size() || ref->get_dim().size() != dims.size()) return;
  Dims st;
  if (dense_strides_in_order(dims, layout_order(*ref), &st)) Tensor::Internal::infer_stride(*t, st);
}

Status set_output_like(InferContext& c, std::string_view port, const Dims& dims, std::string_view ref_port,
                       DataType dtype) {
  OPGRAPH_CHECK(c.set_output(port, dims, dtype));
  follow_layout(c, port, c.in(ref_port).get());
  return Status::ok();
}

const Tensor* elementwise_reference(const InferContext& c, const Dims& dims,
                                    std::initializer_list<std::string_view> ports) {
  const Tensor* best = nullptr;
  std::ptrdiff_t best_wide = -1;
  for (auto p : ports) {
    const Tensor* t = c.in(p).get();
    if (!t) continue;
    if (t->get_dim() == dims) return t;
    if (t->get_dim().size() != dims.size()) continue;
    auto wide = std::count_if(t->get_dim().begin(), t->get_dim().end(), [](std::int64_t d) { return d != 1; });
    if (wide > best_wide) {
      best = t;
      best_wide = wide;
    }
  }
  return best;
}

}  // namespace opgraph::ops
