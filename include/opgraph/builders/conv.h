// opgraph/builders/conv.h — builders of the conv op group (records in src/ir/ops/conv.cpp).
//
// Layout: logical axis order is NCHW (N, C, spatial...) for X, Y, DX, DY and
// KCRS (K, C/groups, filter spatial...) for W and DW, with 1, 2 or 3 spatial axes;
// any physical layout (channels-last included) is expressed by the tensors' strides.
// Units: elements.
//
// Attributes (INT_LIST, one entry per spatial axis):
//   padding       sets pre- and post-padding together (cudnn-frontend's set_padding);
//   pre_padding   padding before each spatial axis (overrides padding);
//   post_padding  padding after each spatial axis (overrides padding);
//   stride        >= 1 (default all 1);  dilation >= 1 (default all 1);
//   convolution_mode ENUM {CONVOLUTION, CROSS_CORRELATION} (default CROSS_CORRELATION;
//   CONVOLUTION flips the filter spatially).
// Groups are not an attribute: groups = C(X) / C(W) (X's channels over the filter's
// per-group channels, as cuDNN infers them); C(X) must be a multiple of C(W) and K of groups.
// Output extent per spatial axis: (in + pre + post - dilation * (f - 1) - 1) / stride + 1 (floor), >= 1.
// Types: conv_fprop's X and W are both floating point or both INT8 (integer convolution, as
// cuDNN's int8 configs: exact sums, INT32 accumulation; Y's type is the graph's, e.g. INT32;
// rule conv_operand_types); conv_dgrad and conv_wgrad take floating point only.
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class ConvBuilders : public virtual NodeSink {
 public:
  // Y [N, K, out...] = conv(X [N, C, in...], W [K, C/groups, f...]); Y's dims are inferred.
  TensorPtr conv_fprop(TensorPtr x, TensorPtr w, const Attributes& attrs = {});
  // DX [N, C, in...] from DY [N, K, out...] and W. The caller sets DX's dims (set_dim) before
  // validate(); they must be consistent with the conv arithmetic.
  TensorPtr conv_dgrad(TensorPtr dy, TensorPtr w, const Attributes& attrs = {});
  // DW [K, C/groups, f...] from DY [N, K, out...] and X. The caller sets DW's dims before validate().
  TensorPtr conv_wgrad(TensorPtr dy, TensorPtr x, const Attributes& attrs = {});
};

}  // namespace opgraph
