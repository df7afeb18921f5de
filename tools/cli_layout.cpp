// tools/cli_layout.cpp — checked layout arithmetic and the cap (see cli_layout.h).
#include "cli_layout.h"

#include <algorithm>
#include <limits>

#include "cli_common.h"
#include "opgraph/layout.h"

namespace opgraph::cli {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// "tensor 'X' (uid 3) [8] strides [..]", the name cut to a sane length.
std::string describe(const Tensor& t) {
  return "tensor '" + clip(t.get_name()) + "' (uid " + std::to_string(t.get_uid()) + ") dims " +
         dims_to_string(t.get_dim()) + " strides " + dims_to_string(t.get_stride());
}

}  // namespace

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kMax : r;
}

std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kMax : r;
}

Result<BufferLayout> layout_buffers(const OpGraph& g) {
  BufferLayout out;
  for (const auto& t : g.tensors()) {
    if (t->get_is_pass_by_value()) continue;
    const auto& dims = t->get_dim();
    const auto& strides = t->get_stride();
    std::int64_t count = 1;  // every tensor's elements: the reference's float64 copy
    for (std::int64_t d : dims)
      if (d < 0 || __builtin_mul_overflow(count, d, &count))
        return Status{ErrorCode::INVALID_VALUE, describe(*t) + ": the element count overflows int64"};
    out.reference_bytes = saturating_add(out.reference_bytes, saturating_mul(count, 8));
    if (t->get_is_virtual()) continue;
    if (strides.size() != dims.size())
      return Status{ErrorCode::INVALID_VALUE, describe(*t) + ": stride rank differs from dim rank"};
    for (std::int64_t s : strides)
      if (s < 0)
        return Status{ErrorCode::INVALID_VALUE,
                      describe(*t) + ": a negative stride (opgraph run lays every buffer out from offset 0)"};
    const int rank = static_cast<int>(dims.size());
    auto elements = span_elements(rank, dims.data(), strides.data());
    if (!elements)
      return Status{ErrorCode::INVALID_VALUE,
                    describe(*t) + ": the elements it spans, 1 + sum((dim - 1) * stride), overflow int64"};
    const DataType stored = t->get_data_type() == DataType::NOT_SET ? DataType::DOUBLE : t->get_data_type();
    auto bytes = slot_bytes(*elements, bits_of(stored));  // element geometry: fp4 is 4 bits, two per byte
    if (!bytes)
      return Status{ErrorCode::INVALID_VALUE, describe(*t) + ": its " + std::to_string(*elements) + " elements of " +
                                                  std::string(to_string(t->get_data_type())) +
                                                  " overflow an int64 byte count"};
    out.buffers.push_back(TensorSpan{t, *elements, *bytes});
    out.buffer_bytes = saturating_add(out.buffer_bytes, *bytes);
  }
  return out;
}

std::int64_t run_bytes(const BufferLayout& layout, int copies, std::int64_t workspace_bytes) {
  const std::int64_t buffers = saturating_mul(layout.buffer_bytes, copies);
  return saturating_add(saturating_add(buffers, std::max<std::int64_t>(workspace_bytes, 0)), layout.reference_bytes);
}

Status check_cap(const BufferLayout& layout, int copies, std::int64_t workspace_bytes, std::int64_t cap_bytes) {
  const std::int64_t total = run_bytes(layout, copies, workspace_bytes);
  if (total <= cap_bytes) return Status::ok();
  auto amount = [](std::int64_t b) { return b == kMax ? "at least " + std::to_string(kMax) : std::to_string(b); };
  std::string msg = "the run would allocate " + amount(total) + " bytes, over --max-bytes " + std::to_string(cap_bytes) +
                    " (buffers " + amount(layout.buffer_bytes) + (copies > 1 ? " x " + std::to_string(copies) : "") +
                    ", the reference's float64 copies " + amount(layout.reference_bytes) + ", workspace " +
                    std::to_string(std::max<std::int64_t>(workspace_bytes, 0)) + ")";
  const TensorSpan* largest = nullptr;
  for (const auto& b : layout.buffers)
    if (!largest || b.bytes > largest->bytes) largest = &b;
  if (largest) {
    const Tensor& t = *largest->tensor;
    msg += "; the largest is tensor '" + clip(t.get_name()) + "' " + dims_to_string(t.get_dim()) + " " +
           std::string(to_string(t.get_data_type())) + ", " + std::to_string(largest->bytes) + " bytes";
  }
  return Status{ErrorCode::INVALID_VALUE, msg + "; raise --max-bytes to run it"};
}

}  // namespace opgraph::cli
