// tools/cli_layout.h — what `opgraph run` would allocate, known before it
// allocates anything.
//
// Every extent, stride and byte count from the graph file passes through checked
// arithmetic: a product or sum that leaves int64 is an error naming the tensor,
// never a wrapped value (a stride of (2^64 + 5) / 7 over 8 elements once
// "spanned" 6 elements, so a 24-byte buffer seemed to cover it). The span and byte
// counts are the library's own (opgraph/layout.h: span_elements,
// slot_bytes), so the tool sizes a buffer exactly as execute checks it. Units are
// stated per field: elements or bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opgraph/op_graph.h"

namespace opgraph::cli {

// a + b and a * b (non-negative operands), stuck at INT64_MAX instead of wrapping:
// for totals that are compared with a cap, where "more than 2^63 - 1" is enough.
std::int64_t saturating_add(std::int64_t a, std::int64_t b);
std::int64_t saturating_mul(std::int64_t a, std::int64_t b);

// One host buffer `opgraph run` gives the plan: a non-virtual tensor that is not
// passed by value.
struct TensorSpan {
  TensorPtr tensor;
  std::int64_t elements = 0;  // elements its declared dims/strides span
  std::int64_t bytes = 0;     // bytes of those elements in its dtype
};

struct BufferLayout {
  std::vector<TensorSpan> buffers;     // in g.tensors() order
  std::int64_t buffer_bytes = 0;       // sum of buffers[i].bytes (saturating)
  // The reference engine keeps a float64 copy of every tensor it reads or writes
  // (virtual ones too): 8 bytes per element, for the length of one execute.
  std::int64_t reference_bytes = 0;
};

// The layout of every buffer of validated `g`. INVALID_VALUE naming the tensor
// (dims, strides) when its span or bytes overflow, or when a stride is negative
// (`run` lays every buffer out from offset 0).
Result<BufferLayout> layout_buffers(const OpGraph& g);

// Host bytes a run allocates: `copies` of every buffer (2 when the reference
// runs beside the plan on its own copy), the workspace, the reference's float64
// copies. Device copies, when a plan runs on a GPU, mirror the buffers (no more
// than this). Saturating.
std::int64_t run_bytes(const BufferLayout& layout, int copies, std::int64_t workspace_bytes);

// INVALID_VALUE when run_bytes(...) > cap_bytes: the total, its parts and the
// largest tensor (name, dims, dtype, bytes), so the caller knows what to shrink.
Status check_cap(const BufferLayout& layout, int copies, std::int64_t workspace_bytes, std::int64_t cap_bytes);

// The default of `opgraph run --max-bytes`: 1 GiB.
inline constexpr std::int64_t kDefaultMaxBytes = std::int64_t{1} << 30;

}  // namespace opgraph::cli
