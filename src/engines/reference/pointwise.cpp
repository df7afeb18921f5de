// engines/reference/pointwise.cpp — reference kernels of the pointwise op group.
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

std::span<const KernelRecord> pointwise_kernels() { return {}; }

}  // namespace opgraph::reference
