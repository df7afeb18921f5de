// ir/ops/groups.h — the op groups the registry concatenates. Each group file
// holds its OpSpec records and the builders that name them.
#pragma once

#include <span>

#include "opgraph/op_spec.h"

namespace opgraph::ops {

std::span<const OpSpec> pointwise_specs();
std::span<const OpSpec> matmul_specs();
std::span<const OpSpec> tensor_op_specs();
std::span<const OpSpec> norm_specs();
std::span<const OpSpec> conv_specs();
std::span<const OpSpec> sdpa_specs();
std::span<const OpSpec> linear_attention_specs();

}  // namespace opgraph::ops
