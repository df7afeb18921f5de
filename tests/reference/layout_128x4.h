// tests/reference/layout_128x4.h — the F8_128x4 block-scale layout written out a
// second time for tests, from the documented formula and independently of
// src/ir/scale_layout.*, so a test can say where each logical scale must land.
//
// Documented layout (cuDNN frontend, "MXFP8 scale factor 128x4 layout",
// https://nvidia.github.io/cudnn-frontend/mxfp8-scale-factor-128x4-layout/): the
// [rows, cols] scale matrix (rows padded to 128, cols = the blocked axis padded to
// 4) is cut into 128 x 4 tiles of 512 elements, stored row tile by row tile with the
// column tiles of one row tile adjacent; inside a tile, row r and column c sit at
// 32-row group (r / 32) and lane (r % 32): element (r % 32) * 16 + (r / 32) * 4 + c.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engines/reference/ref_kernel.h"

namespace opgraph::layout_128x4 {

using reference::Array;
using reference::Dims;

// Element index of logical (row, col) of one matrix with `cols` columns.
inline std::int64_t element(std::int64_t row, std::int64_t col, std::int64_t cols) {
  const std::int64_t row_tile = row / 128, col_tile = col / 4, r = row % 128, c = col % 4;
  const std::int64_t tile_start = (row_tile * (cols / 4) + col_tile) * 512;
  return tile_start + (r % 32) * 16 + (r / 32) * 4 + c;
}

// Strides of a scale tensor of `dims` whose blocked axis (one of the last two) is
// contiguous, as cuDNN's F8_128x4 convention wants; batch axes packed outside.
inline Dims strides(const Dims& dims, std::size_t blocked_axis) {
  const std::size_t n = dims.size(), other = blocked_axis == n - 1 ? n - 2 : n - 1;
  Dims s(n, 0);
  s[blocked_axis] = 1;
  s[other] = dims[blocked_axis];
  std::int64_t outer = dims[n - 1] * dims[n - 2];
  for (std::size_t k = n - 2; k-- > 0;) {
    s[k] = outer;
    outer *= dims[k];
  }
  return s;
}

// The buffer as flat elements, given what the harness holds for it (the value at
// every index, stored at sum(index * stride)); `span` elements long.
inline std::vector<double> storage(const Array& held, const Dims& st, std::int64_t span) {
  std::vector<double> flat(static_cast<std::size_t>(span), -12345.0);
  std::int64_t i = 0;
  reference::for_each_index(held.dims, [&](std::span<const std::int64_t> idx) {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) off += idx[k] * st[k];
    flat[static_cast<std::size_t>(off)] = held[i++];
  });
  return flat;
}

// Buffer offset of the logical index `idx` of a tensor of `dims` / `st` with blocked axis `blocked_axis`.
inline std::int64_t offset(std::span<const std::int64_t> idx, const Dims& dims, const Dims& st,
                           std::size_t blocked_axis) {
  const std::size_t n = dims.size(), other = blocked_axis == n - 1 ? n - 2 : n - 1;
  std::int64_t off = 0;
  for (std::size_t k = 0; k + 2 < n; ++k) off += idx[k] * st[k];
  return off + element(idx[other], idx[blocked_axis], dims[blocked_axis]);
}

// The logical scales of a tensor whose buffer the harness holds as `held`.
inline Array logical(const Array& held, const Dims& st, std::size_t blocked_axis) {
  std::int64_t span = 1;
  for (std::size_t k = 0; k < held.dims.size(); ++k) span += (held.dims[k] - 1) * st[k];
  const std::vector<double> flat = storage(held, st, span);
  Array out(held.dims);
  std::int64_t i = 0;
  reference::for_each_index(held.dims, [&](std::span<const std::int64_t> idx) {
    out[i++] = flat[static_cast<std::size_t>(offset(idx, held.dims, st, blocked_axis))];
  });
  return out;
}

}  // namespace opgraph::layout_128x4
