// engines/cudnn/lowering_bn.cpp — the batchnorm building blocks cuDNN has
// operations for: genstats (OPERATION_GEN_STATS), bn_finalize
// (OPERATION_BN_FINALIZE_STATISTICS, training mode), dbn_weight
// (OPERATION_BN_BWD_WEIGHTS); and batchnorm_inference, two ways:
//  * alone (or beside anything but a batchnorm_backward): the pointwise composite
//    Y = ((X - MEAN) * INV_VARIANCE) * SCALE + BIAS, four POINTWISE operations
//    through three virtual tensors of X's layout (on the H200, 2026-11-30, a lone
//    NORM_FORWARD inference graph listed no engine and this composite ran);
//  * in a graph that also holds a batchnorm_backward (BN inference -> dReLU -> dBN,
//    cudnn-frontend's test_bn_infer_drelu_dbn): ONE NORM_FORWARD operation in the
//    INFERENCE phase (X, MEAN, INV_VARIANCE, SCALE, BIAS -> Y), as cudnn-frontend
//    (1.18 on) lowers batchnorm_inference; the composite form of that graph found
//    no cuDNN engine on the H200 (2026-12-02) while cudnn-frontend's ran.
// Port -> attribute tables are data; an unbound optional port sets nothing.
#include <algorithm>

#include "engines/cudnn/lowering_internal.h"

namespace opgraph::engines::cudnn::detail {
namespace {

// A port of the op's record (input or output) and the attribute it binds to.
struct PortAttr {
  ops::PortRef port;
  cudnnBackendAttributeName_t attr;
};

const PortAttr kGenstats[] = {{ops::Genstats::In::X, CUDNN_ATTR_OPERATION_GENSTATS_XDESC},
                              {ops::Genstats::Out::SUM, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC},
                              {ops::Genstats::Out::SQ_SUM, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC}};

const PortAttr kFinalize[] = {
    {ops::BnFinalize::In::SUM, CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC},
    {ops::BnFinalize::In::SQ_SUM, CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC},
    {ops::BnFinalize::In::SCALE, CUDNN_ATTR_OPERATION_BN_FINALIZE_SCALE_DESC},
    {ops::BnFinalize::In::BIAS, CUDNN_ATTR_OPERATION_BN_FINALIZE_BIAS_DESC},
    {ops::BnFinalize::In::EPSILON, CUDNN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC},
    {ops::BnFinalize::In::ACCUM_COUNT, CUDNN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC},
    {ops::BnFinalize::In::PREV_RUNNING_MEAN, CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC},
    {ops::BnFinalize::In::PREV_RUNNING_VAR, CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC},
    {ops::BnFinalize::In::MOMENTUM, CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC},
    {ops::BnFinalize::Out::EQ_SCALE, CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC},
    {ops::BnFinalize::Out::EQ_BIAS, CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC},
    {ops::BnFinalize::Out::MEAN, CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_MEAN_DESC},
    {ops::BnFinalize::Out::INV_VARIANCE, CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC},
    {ops::BnFinalize::Out::NEXT_RUNNING_MEAN, CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC},
    {ops::BnFinalize::Out::NEXT_RUNNING_VAR, CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC}};

const PortAttr kDbnWeight[] = {{ops::DbnWeight::In::DY, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC},
                               {ops::DbnWeight::In::X, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC},
                               {ops::DbnWeight::In::SCALE, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC},
                               {ops::DbnWeight::In::MEAN, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC},
                               {ops::DbnWeight::In::INV_VARIANCE, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC},
                               {ops::DbnWeight::Out::DSCALE, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC},
                               {ops::DbnWeight::Out::DBIAS, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC},
                               {ops::DbnWeight::Out::EQ_BIAS, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS},
                               {ops::DbnWeight::Out::EQ_SCALE_DY, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC},
                               {ops::DbnWeight::Out::EQ_SCALE_X, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC}};

template <std::size_t N>
Status bind_all(Lowerer& l, int op, const Node& n, const PortAttr (&table)[N]) {
  for (const PortAttr& p : table)
    OPGRAPH_CHECK(p.port.input ? l.bind_in(op, p.attr, n, p.port) : l.bind_out(op, p.attr, n, p.port));
  return Status::ok();
}

// Whether the graph holds a batchnorm_backward (the fused dBN pattern).
bool beside_batchnorm_backward(const OpGraph& g) {
  for (const auto& node : g.nodes())
    if (op_index(node->spec()) == ops::BatchnormBackward::kIndex) return true;
  return false;
}

Status lower_inference_norm_forward(Lowerer& l, const Node& n) {
  using In = ops::BatchnormInference::In;
  int op = l.add(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, Lowerer::node_label(n), std::string(n.op()));
  l.set_int(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, CUDNN_BATCH_NORM);
  l.set_int(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, CUDNN_NORM_FWD_INFERENCE);
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, n, In::X));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, n, In::MEAN));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, n, In::INV_VARIANCE));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, n, In::SCALE));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, n, In::BIAS));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, n, ops::BatchnormInference::Out::Y));
  l.plan().operations.push_back(op);
  return Status::ok();
}

Status lower_batchnorm_inference(Lowerer& l, const Node& n) {
  if (beside_batchnorm_backward(l.graph())) return lower_inference_norm_forward(l, n);
  using In = ops::BatchnormInference::In;
  TensorPtr x = n.input(In::X);
  auto rec_of = [&](In port) { return l.tensor(n.input(port)); };
  auto rx = l.tensor(x), rm = rec_of(In::MEAN), rv = rec_of(In::INV_VARIANCE), rs = rec_of(In::SCALE), rb = rec_of(In::BIAS);
  auto ry = l.tensor(n.output(ops::BatchnormInference::Out::Y));
  for (const auto* r : {&rx, &rm, &rv, &rs, &rb, &ry})
    if (r->is_bad()) return r->status();
  const std::string base = n.name();
  auto centred = l.virtual_like(x, base + ".centred");
  auto normed = l.virtual_like(x, base + ".normed");
  auto scaled = l.virtual_like(x, base + ".scaled");
  for (const auto* r : {&centred, &normed, &scaled})
    if (r->is_bad()) return r->status();
  l.pointwise(n, CUDNN_POINTWISE_SUB, rx.value(), rm.value(), centred.value(), "X - MEAN");
  l.pointwise(n, CUDNN_POINTWISE_MUL, centred.value(), rv.value(), normed.value(), "* INV_VARIANCE");
  l.pointwise(n, CUDNN_POINTWISE_MUL, normed.value(), rs.value(), scaled.value(), "* SCALE");
  l.pointwise(n, CUDNN_POINTWISE_ADD, scaled.value(), rb.value(), ry.value(), "+ BIAS");
  return Status::ok();
}

Status lower_genstats(Lowerer& l, const Node& n) {
  int op = l.add(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR, Lowerer::node_label(n), std::string(n.op()));
  l.set_int(op, CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, CUDNN_GENSTATS_SUM_SQSUM);
  l.set_int(op, CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, l.compute_type(n));
  OPGRAPH_CHECK(bind_all(l, op, n, kGenstats));
  l.plan().operations.push_back(op);
  return Status::ok();
}

Status lower_bn_finalize(Lowerer& l, const Node& n) {
  int op = l.add(CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR, Lowerer::node_label(n), std::string(n.op()));
  l.set_int(op, CUDNN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE, CUDNN_TYPE_BN_FINALIZE_STATS_MODE,
            CUDNN_BN_FINALIZE_STATISTICS_TRAINING);
  l.set_int(op, CUDNN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, l.compute_type(n));
  OPGRAPH_CHECK(bind_all(l, op, n, kFinalize));
  l.plan().operations.push_back(op);
  return Status::ok();
}

Status lower_dbn_weight(Lowerer& l, const Node& n) {
  int op = l.add(CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR, Lowerer::node_label(n), std::string(n.op()));
  l.set_int(op, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, l.compute_type(n));
  OPGRAPH_CHECK(bind_all(l, op, n, kDbnWeight));
  l.plan().operations.push_back(op);
  return Status::ok();
}

const LoweringRecord kLowerings[] = {
    {ops::Genstats::kIndex, lower_genstats, {}},
    {ops::BnFinalize::kIndex, lower_bn_finalize, {}},
    {ops::DbnWeight::kIndex, lower_dbn_weight, {}},
    {ops::BatchnormInference::kIndex, lower_batchnorm_inference, {}},
};

}  // namespace

std::span<const LoweringRecord> bn_lowerings() { return kLowerings; }

}  // namespace opgraph::engines::cudnn::detail
