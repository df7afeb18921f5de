// ir/ops/output_layout.h — output strides that follow an input's layout class.
//
// The rule (docs/architecture.md, "Output layout contract"): an output whose strides
// the user did not set gets DENSE strides in the axis order of a reference input, so
// a channels-last (NHWC-strided) input gives a channels-last output through conv,
// norm, reduction and every pointwise epilogue after them, and a packed NCHW input
// gives packed NCHW. User-set strides always win. cudnn-frontend derives these
// outputs from an input's strides too (node/pointwise.h, batchnorm.h, layernorm.h,
// concatenate.h, graph_helpers.h generate_stride_order_preserving_format); where its
// default differs (conv, reduction, resample: channels-last whatever the input) the
// record that calls these helpers says so.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "ir/infer_context.h"

namespace opgraph::ops {

// The axis order of `ref`'s layout, outermost (largest stride) first. Ties: an axis of
// extent 1 sits inside an equal-strided axis of larger extent (dense strides give an
// extent-1 axis the stride of the axis just outside it, so [N,1,H,W] channels-last,
// strides {HW,1,W,1}, reads as N,H,W,C); otherwise ties keep axis order.
std::vector<std::size_t> layout_order(const Tensor& ref);

// Dense strides for `dims` in axis order `order` (outermost first); false on overflow.
bool dense_strides_in_order(const Dims& dims, const std::vector<std::size_t>& order, Dims* out);

// Gives output `port` (dims already set) dense strides in `ref`'s axis order, unless
// the user set its strides, `ref` is null, or the ranks differ (then it keeps what it
// has: set_output's packed row-major). An oversized tensor keeps its strides too;
// validate() refuses it after inference.
void follow_layout(InferContext& c, std::string_view port, const Tensor* ref);

// set_output(port, dims, dtype), then follow_layout of input `ref_port`.
Status set_output_like(InferContext& c, std::string_view port, const Dims& dims, std::string_view ref_port,
                       DataType dtype = DataType::NOT_SET);

// The reference of an elementwise output of `dims` among the bound inputs `ports`
// (in port order; a list port contributes its first tensor): the first input whose
// dims equal `dims` (cudnn-frontend PointwiseNode::infer_properties_node); else the
// input of `dims`' rank with the most axes of extent > 1 (first wins a tie), so a
// broadcast [N,1,H,W] + [1,C,1,1] follows the activation; else null.
const Tensor* elementwise_reference(const InferContext& c, const Dims& dims,
                                    std::initializer_list<std::string_view> ports);

}  // namespace opgraph::ops
