// ir/ops/tensor_ops_common.h — small rules the tensor-ops records share: axis
// normalisation, per-axis integer lists, scalar index tensors and the default
// output type of ops whose inputs carry no floating type to inherit.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ir/infer_context.h"
#include "opgraph/op_spec.h"

namespace opgraph::ops {

// `axis` in [-rank, rank) → [0, rank); fails naming the attribute otherwise.
Status normalize_axis(const InferContext& c, std::string_view attr, std::int64_t axis, std::int64_t rank,
                      std::int64_t* out);

// An INT_LIST attribute with `count` entries, each >= `min_value` (when set).
Status check_int_list(const InferContext& c, std::string_view attr, std::size_t count, std::int64_t min_value);

// A bound port holding one INT32/INT64 element (a scalar index, seed or bound).
Status require_index_scalar(const InferContext& c, std::string_view port);

// ATTRIBUTE_NOT_SET naming the attribute (fail_attr's sentence, that code).
Status missing_attr(const InferContext& c, std::string_view attr, const std::string& rule);

// The type an output gets when the graph context has none for it: FLOAT; else
// NOT_SET (the context fills it).
DataType float_unless_context(const InferContext& c, std::string_view out_port);

// Sets an output's strides to `stride` unless the user set them (then they must agree).
Status set_output_stride(InferContext& c, std::string_view out_port, const Dims& stride);

// The tensor-ops group's records, one span per source file.
std::span<const OpSpec> tensor_op_core_specs();
std::span<const OpSpec> tensor_op_window_specs();
std::span<const OpSpec> tensor_op_block_scale_specs();

}  // namespace opgraph::ops
