// engines/reference/tensor_ops_common.h — the reference tensor-ops group's kernel
// tables (one per source file) and the index helper they share.
#pragma once

#include <span>

#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

std::span<const KernelRecord> tensor_op_core_kernels();        // tensor_ops.cpp
std::span<const KernelRecord> tensor_op_window_kernels();      // tensor_ops_window.cpp
std::span<const KernelRecord> tensor_op_block_scale_kernels(); // tensor_ops_block_scale.cpp

// An index tensor's element as an integer (the executor delivers exact integers).
inline std::int64_t as_index(double v) { return static_cast<std::int64_t>(v); }

}  // namespace opgraph::reference
