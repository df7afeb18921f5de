// ir/ops/pointwise.cpp — the pointwise op group: records and builders.
#include "ir/infer_context.h"
#include "ir/ops/groups.h"

namespace opgraph::ops {

std::span<const OpSpec> pointwise_specs() { return {}; }

}  // namespace opgraph::ops
