// ir/ops/norm.cpp — the norm op group: records and builders.
#include "ir/infer_context.h"
#include "ir/ops/groups.h"

namespace opgraph::ops {

std::span<const OpSpec> norm_specs() { return {}; }

}  // namespace opgraph::ops
