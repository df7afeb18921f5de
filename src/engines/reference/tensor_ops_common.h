// engines/reference/tensor_ops_common.h — the reference tensor-ops group's kernel
// tables (one per source file) and the index helper they share.
#pragma once

#include <cstdint>
#include <span>

#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

std::span<const KernelRecord> tensor_op_core_kernels();        // tensor_ops.cpp
std::span<const KernelRecord> tensor_op_window_kernels();      // tensor_ops_window.cpp
std::span<const KernelRecord> tensor_op_block_scale_kernels(); // tensor_ops_block_scale.cpp

// An index tensor's element as an integer (the executor delivers exact integers,
// truncated toward zero). Caller data: a value past +-2^61 saturates there and NaN
// reads 0, so the conversion is always defined and the difference of two (a band
// shift, SEQ_LEN_KV - SEQ_LEN_Q) stays in int64; a saturated value is outside any
// extent it is checked against.
inline std::int64_t as_index(double v) {
  constexpr std::int64_t kLimit = std::int64_t{1} << 61;
  if (v != v) return 0;
  if (v >= static_cast<double>(kLimit)) return kLimit;
  if (v <= -static_cast<double>(kLimit)) return -kLimit;
  return static_cast<std::int64_t>(v);
}

}  // namespace opgraph::reference
