// engines/reference/matmul.cpp — reference kernels of the matmul op group.
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

std::span<const KernelRecord> matmul_kernels() { return {}; }

}  // namespace opgraph::reference
