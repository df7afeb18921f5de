// engines/reference/norm.cpp — reference kernels of the norm op group.
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

std::span<const KernelRecord> norm_kernels() { return {}; }

}  // namespace opgraph::reference
