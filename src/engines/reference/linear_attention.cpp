// engines/reference/linear_attention.cpp — reference kernels of the linear_attention op group.
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

std::span<const KernelRecord> linear_attention_kernels() { return {}; }

}  // namespace opgraph::reference
