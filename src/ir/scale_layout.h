// ir/scale_layout.h — the F8_128x4 storage of block-scale tensors: the tiled
// ("swizzled") layout cuBLASLt and cuDNN read and write block scales in (MXFP8,
// MXFP4, NVFP4), shared by the IR rules that accept such a tensor and by the
// reference executor that reads and writes its bytes.
//
// Sources (facts only, no text copied): cuDNN frontend, "MXFP8 scale factor 128x4
// layout" (https://nvidia.github.io/cudnn-frontend/mxfp8-scale-factor-128x4-layout/);
// nvmath-python's get_block_scale_offset, the offset in cuBLASLt's interleaved
// scale layout (https://docs.nvidia.com/cuda/nvmath-python/latest/host-apis/linalg/
// generated/nvmath.linalg.advanced.helpers.matmul.get_block_scale_offset.html);
// Transformer Engine's swizzle.h (https://nvidia.github.io/TransformerEngine/api/c/
// swizzle.html: 128x4 padding for row-wise scales, 4x128 for column-wise ones).
//
// The layout. Of the tensor's last two axes, the COLUMN axis is the blocked one
// (one scale per block of data along it; the contraction axis of a matmul) and the
// ROW axis is the other. Rows are padded to a multiple of 128 and columns to a
// multiple of 4, so the [rows, cols] matrix splits into 128 x 4 tiles of 512
// elements (bytes, for the one-byte scale types). Tiles are stored one after the
// other, column tiles fastest: tile (row / 128, col / 4) starts at element
//     ((row / 128) * (cols / 4) + col / 4) * 512.
// Inside a tile the 128 rows are four groups of 32; row r of the tile and column c
// land at
//     (r % 32) * 16 + (r / 32) * 4 + c,
// i.e. a [32][4][4] array indexed (r % 32, r / 32, c). Padding entries hold
// whatever the writer put there (the reference writes the all-zero bit pattern).
//
// Which axis is the column axis is read from the strides, as cuDNN does: the
// plain layout the reordering applies to has the blocked (column) axis contiguous
// (stride 1) and the row axis packed right outside it (stride = cols). So an
// F8_128x4 tensor's last two strides are {cols, 1} when the blocked axis is the
// last one, {1, cols} when it is the second to last. Axes before the last two are
// batch axes: each batch index selects one whole swizzled matrix at the offset its
// strides give.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/infer_context.h"

namespace opgraph {

inline constexpr std::int64_t kSwizzleRows = 128;  // rows per tile
inline constexpr std::int64_t kSwizzleCols = 4;    // columns per tile
inline constexpr std::int64_t kSwizzleTile = kSwizzleRows * kSwizzleCols;

struct Swizzle128x4 {
  std::size_t row_axis = 0;  // the non-blocked axis of the last two (extent % 128 == 0)
  std::size_t col_axis = 0;  // the blocked axis, stride 1 (extent % 4 == 0)
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// The F8_128x4 geometry of `dims` with `strides` (elements), or nullopt with the
// broken rule in *why: rank >= 2; of the last two axes one has stride 1 (the column
// axis) and the other stride equal to the column extent; rows % 128 == 0; cols % 4 == 0.
std::optional<Swizzle128x4> swizzle_128x4_of(const std::vector<std::int64_t>& dims,
                                             const std::vector<std::int64_t>& strides, std::string* why);

// Element offset of logical (row, col) inside one swizzled [rows, cols] matrix
// with `cols` columns (a multiple of 4); see the layout above.
constexpr std::int64_t swizzle_128x4_offset(std::int64_t row, std::int64_t col, std::int64_t cols) {
  const std::int64_t tile = (row / kSwizzleRows) * (cols / kSwizzleCols) + col / kSwizzleCols;
  const std::int64_t r = row % kSwizzleRows;
  return tile * kSwizzleTile + (r % 32) * 16 + (r / 32) * 4 + col % kSwizzleCols;
}

// Element offset of the full logical index `idx` of a tensor with `strides` and
// F8_128x4 geometry `s`: batch axes through their strides, the last two swizzled.
std::int64_t swizzle_128x4_element(const Swizzle128x4& s, const std::vector<std::int64_t>& strides,
                                   const std::int64_t* idx);

// For op infer hooks: the tensor bound to `port` (input, or output when `output`)
// is F8_128x4 with `blocked_axis` as its column axis. Fails naming op, node, port,
// tensor and the rule "f8_128x4_layout".
Status check_swizzle_128x4(const InferContext& c, ops::PortRef port, std::size_t blocked_axis,
                           bool output = false);

}  // namespace opgraph
