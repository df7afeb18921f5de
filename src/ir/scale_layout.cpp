// ir/scale_layout.cpp — geometry and rules of F8_128x4 (128x4-tiled) block-scale
// tensors; the layout and its sources are described in scale_layout.h.
#include "ir/scale_layout.h"

namespace opgraph {
namespace {

std::string dims_str(const std::vector<std::int64_t>& d) { return InferContext::dims_str(d); }

}  // namespace

std::optional<Swizzle128x4> swizzle_128x4_of(const std::vector<std::int64_t>& dims,
                                             const std::vector<std::int64_t>& strides, std::string* why) {
  auto refuse = [&](std::string rule) -> std::optional<Swizzle128x4> {
    if (why) *why = std::move(rule);
    return std::nullopt;
  };
  const std::size_t r = dims.size();
  if (r < 2) return refuse("an F8_128x4 tensor needs rank >= 2, got dims " + dims_str(dims));
  if (strides.size() != r) return refuse("an F8_128x4 tensor needs one stride per axis");
  const std::size_t a = r - 2, b = r - 1;
  Swizzle128x4 s;
  if (strides[b] == 1 && strides[a] == dims[b]) {
    s.row_axis = a;
    s.col_axis = b;
  } else if (strides[a] == 1 && strides[b] == dims[a]) {
    s.row_axis = b;
    s.col_axis = a;
  } else {
    return refuse("an F8_128x4 tensor's last two axes must be packed with the blocked (column) axis contiguous: "
                  "strides {cols, 1} or {1, cols}, got dims " + dims_str(dims) + " strides " + dims_str(strides));
  }
  s.rows = dims[s.row_axis];
  s.cols = dims[s.col_axis];
  if (s.rows % kSwizzleRows != 0 || s.cols % kSwizzleCols != 0)
    return refuse("an F8_128x4 tensor holds whole 128 x 4 tiles: its row axis " + std::to_string(s.row_axis) +
                  " (extent " + std::to_string(s.rows) + ") must be a multiple of 128 and its contiguous column axis " +
                  std::to_string(s.col_axis) + " (extent " + std::to_string(s.cols) + ") a multiple of 4");
  return s;
}

std::int64_t swizzle_128x4_element(const Swizzle128x4& s, const std::vector<std::int64_t>& strides,
                                   const std::int64_t* idx) {
  std::int64_t off = 0;
  for (std::size_t k = 0; k + 2 < strides.size(); ++k) off += idx[k] * strides[k];
  return off + swizzle_128x4_offset(idx[s.row_axis], idx[s.col_axis], s.cols);
}

Status check_swizzle_128x4(const InferContext& c, ops::PortRef port, std::size_t blocked_axis, bool output) {
  TensorPtr t = output ? c.out(port) : c.in(port);
  if (!t || t->get_reordering_type() != TensorReordering::F8_128x4) return Status::ok();
  const std::vector<std::int64_t> strides =
      t->get_stride().size() == t->get_dim().size() ? t->get_stride() : Tensor::packed_strides(t->get_dim());
  std::string why;
  auto s = swizzle_128x4_of(t->get_dim(), strides, &why);
  if (!s) return c.fail(port, "rule f8_128x4_layout: " + why);
  if (s->col_axis != blocked_axis)
    return c.fail(port, "rule f8_128x4_layout: the blocked axis " + std::to_string(blocked_axis) +
                            " must be the contiguous (stride 1) column axis of the 128x4 tiles, got strides " +
                            dims_str(strides) + " (axis " + std::to_string(s->col_axis) + " is contiguous)");
  return Status::ok();
}

}  // namespace opgraph
