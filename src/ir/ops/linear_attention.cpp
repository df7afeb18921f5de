// ir/ops/linear_attention.cpp — the linear_attention op group: records and builders.
#include "ir/infer_context.h"
#include "ir/ops/groups.h"

namespace opgraph::ops {

std::span<const OpSpec> linear_attention_specs() { return {}; }

}  // namespace opgraph::ops
