// engines/reference/sdpa.cpp — reference kernels of the sdpa op group.
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

std::span<const KernelRecord> sdpa_kernels() { return {}; }

}  // namespace opgraph::reference
