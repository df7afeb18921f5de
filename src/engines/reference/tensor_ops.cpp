// engines/reference/tensor_ops.cpp — reference kernels of the tensor_ops op group.
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

std::span<const KernelRecord> tensor_op_kernels() { return {}; }

}  // namespace opgraph::reference
