// ir/ops/tensor_ops.cpp — the tensor_ops op group: records and builders.
#include "ir/infer_context.h"
#include "ir/ops/groups.h"

namespace opgraph::ops {

std::span<const OpSpec> tensor_op_specs() { return {}; }

}  // namespace opgraph::ops
