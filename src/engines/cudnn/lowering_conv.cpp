// engines/cudnn/lowering_conv.cpp — conv_fprop / conv_dgrad / conv_wgrad as
// OPERATION_CONVOLUTION_{FORWARD, BACKWARD_DATA, BACKWARD_FILTER} with one
// CONVOLUTION descriptor each. Geometry attributes default as the IR's do:
// paddings 0 ("padding" sets pre and post), strides and dilations 1, one
// value per spatial axis (rank - 2). alpha = 1, beta = 0.
#include "engines/cudnn/lowering_internal.h"

namespace opgraph::engines::cudnn::detail {
namespace {

using List = std::vector<std::int64_t>;

List list_or(const std::optional<List>& v, std::size_t count, std::int64_t dflt) {
  return v ? *v : List(count, dflt);
}

// `padding` (both sides) of whichever of the three records the node is.
std::optional<List> conv_padding(const Node& n) {
  switch (op_index(n.spec())) {
    case ops::ConvFprop::kIndex: return ops::ConvFprop::padding(n);
    case ops::ConvDgrad::kIndex: return ops::ConvDgrad::padding(n);
    default: return ops::ConvWgrad::padding(n);
  }
}

struct ConvRow {
  std::size_t op;  // ops::<Op>::kIndex
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t alpha, beta, desc;
  ops::InName in0, in1;  // conv_fprop X, W; conv_dgrad DY, W; conv_wgrad DY, X
  ops::OutName out;
  cudnnBackendAttributeName_t a0, a1, ao;
};
const ConvRow kConv[] = {
    {ops::ConvFprop::kIndex, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, ops::in::X, ops::in::W, ops::out::Y,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y},
    {ops::ConvDgrad::kIndex, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, ops::in::DY, ops::in::W, ops::out::DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX},
    {ops::ConvWgrad::kIndex, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, ops::in::DY, ops::in::X, ops::out::DW,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW},
};

const ConvRow* row_of(const OpSpec& spec) {
  const std::size_t op = op_index(spec);
  for (const auto& r : kConv)
    if (r.op == op) return &r;
  return nullptr;
}

Status lower_conv(Lowerer& l, const Node& n) {
  const ConvRow* row = row_of(n.spec());
  auto out = n.output(row->out);
  std::size_t spatial = out && out->rank() > 2 ? static_cast<std::size_t>(out->rank() - 2) : 0;
  if (spatial == 0) return Lowerer::decline(n, "a convolution needs at least one spatial axis");
  std::optional<List> pre_v = ops::attr::pre_padding(n), post_v = ops::attr::post_padding(n);
  if (!pre_v) pre_v = conv_padding(n);
  if (!post_v) post_v = conv_padding(n);
  const List pre = list_or(pre_v, spatial, 0), post = list_or(post_v, spatial, 0);
  std::int64_t prec = l.compute_type(n);
  int desc = l.add(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, Lowerer::node_label(n) + " convolution descriptor",
                   std::string(n.op()));
  l.set_int(desc, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, prec);
  l.set_int(desc, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE,
            ops::attr::convolution_mode(n) == ops::ConvolutionMode::CONVOLUTION ? CUDNN_CONVOLUTION
                                                                                : CUDNN_CROSS_CORRELATION);
  l.set_int(desc, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(spatial));
  l.set_ints(desc, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pre);
  l.set_ints(desc, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, post);
  l.set_ints(desc, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, list_or(ops::attr::stride(n), spatial, 1));
  l.set_ints(desc, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, list_or(ops::attr::dilation(n), spatial, 1));
  int op = l.add(row->type, Lowerer::node_label(n), std::string(n.op()));
  OPGRAPH_CHECK(l.bind_in(op, row->a0, n, row->in0));
  OPGRAPH_CHECK(l.bind_in(op, row->a1, n, row->in1));
  OPGRAPH_CHECK(l.bind_out(op, row->ao, n, row->out));
  l.set_refs(op, row->desc, {desc});
  auto real_type = prec == CUDNN_DATA_DOUBLE ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  l.set_real(op, row->alpha, real_type, 1.0);
  l.set_real(op, row->beta, real_type, 0.0);
  l.plan().operations.push_back(op);
  return Status::ok();
}

const LoweringRecord kLowerings[] = {
    {ops::ConvFprop::kIndex, lower_conv, {}},
    {ops::ConvDgrad::kIndex, lower_conv, {}},
    {ops::ConvWgrad::kIndex, lower_conv, {}},
};

}  // namespace

bool is_conv(const OpSpec& op) { return row_of(op) != nullptr; }

std::span<const LoweringRecord> conv_lowerings() { return kLowerings; }

}  // namespace opgraph::engines::cudnn::detail
