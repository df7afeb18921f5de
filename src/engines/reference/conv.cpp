// engines/reference/conv.cpp — reference kernels of the conv op group.
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

std::span<const KernelRecord> conv_kernels() { return {}; }

}  // namespace opgraph::reference
