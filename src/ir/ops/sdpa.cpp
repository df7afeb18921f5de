// ir/ops/sdpa.cpp — the sdpa op group: records and builders.
#include "ir/infer_context.h"
#include "ir/ops/groups.h"

namespace opgraph::ops {

std::span<const OpSpec> sdpa_specs() { return {}; }

}  // namespace opgraph::ops
