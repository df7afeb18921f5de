// ir/ops/conv.cpp — the conv op group: records and builders.
#include "ir/infer_context.h"
#include "ir/ops/groups.h"

namespace opgraph::ops {

std::span<const OpSpec> conv_specs() { return {}; }

}  // namespace opgraph::ops
