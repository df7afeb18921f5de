// ir/ops/output_layout.h — outputs whose strides follow an input's layout (norm and
// conv groups): an NHWC (channels-last) X gives NHWC Y and stats, as cudnn-frontend
// derives output strides from X's stride order.
#pragma once

#include <string_view>

#include "ir/infer_context.h"

namespace opgraph::ops {

// set_output(port, dims, dtype), then, unless the user set the output's strides, packed
// strides in `ref_port`'s axis order (outermost = largest stride; ties keep axis order).
// `dims` must have the reference's rank for the order to apply (otherwise packed row-major).
Status set_output_like(InferContext& c, std::string_view port, const Dims& dims, std::string_view ref_port,
                       DataType dtype = DataType::NOT_SET);

}  // namespace opgraph::ops
