// engines/reference/kernels.cpp — find_kernel: one lookup over the seven group tables.
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

KernelFn find_kernel(std::string_view op) {
  using Table = std::span<const KernelRecord> (*)();
  static constexpr Table kTables[] = {pointwise_kernels, matmul_kernels, tensor_op_kernels, norm_kernels,
                                      conv_kernels,      sdpa_kernels,   linear_attention_kernels};
  for (Table table : kTables)
    for (const KernelRecord& r : table())
      if (r.op == op) return r.fn;
  return nullptr;
}

}  // namespace opgraph::reference
