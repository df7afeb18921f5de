// engines/cudnn/lowering_bn.cpp — the batchnorm building blocks cuDNN has
// operations for: genstats (OPERATION_GEN_STATS), bn_finalize
// (OPERATION_BN_FINALIZE_STATISTICS, training mode), dbn_weight
// (OPERATION_BN_BWD_WEIGHTS); and batchnorm_inference as the pointwise
// composite cudnn-frontend uses: Y = ((X - MEAN) * INV_VARIANCE) * SCALE + BIAS,
// four POINTWISE operations through three virtual tensors of X's layout.
// Port -> attribute tables are data; an unbound optional port sets nothing.
#include <algorithm>

#include "engines/cudnn/lowering_internal.h"

namespace opgraph::engines::cudnn::detail {
namespace {

struct PortAttr {
  std::string_view port;
  cudnnBackendAttributeName_t attr;
  bool output = false;
};

const PortAttr kGenstats[] = {{"X", CUDNN_ATTR_OPERATION_GENSTATS_XDESC},
                              {"SUM", CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, true},
                              {"SQ_SUM", CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, true}};

const PortAttr kFinalize[] = {
    {"SUM", CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC},
    {"SQ_SUM", CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC},
    {"SCALE", CUDNN_ATTR_OPERATION_BN_FINALIZE_SCALE_DESC},
    {"BIAS", CUDNN_ATTR_OPERATION_BN_FINALIZE_BIAS_DESC},
    {"EPSILON", CUDNN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC},
    {"ACCUM_COUNT", CUDNN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC},
    {"PREV_RUNNING_MEAN", CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC},
    {"PREV_RUNNING_VAR", CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC},
    {"MOMENTUM", CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC},
    {"EQ_SCALE", CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC, true},
    {"EQ_BIAS", CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC, true},
    {"MEAN", CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_MEAN_DESC, true},
    {"INV_VARIANCE", CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC, true},
    {"NEXT_RUNNING_MEAN", CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC, true},
    {"NEXT_RUNNING_VAR", CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC, true}};

const PortAttr kDbnWeight[] = {{"DY", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC},
                               {"X", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC},
                               {"SCALE", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC},
                               {"MEAN", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC},
                               {"INV_VARIANCE", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC},
                               {"DSCALE", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC, true},
                               {"DBIAS", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC, true},
                               {"EQ_BIAS", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS, true},
                               {"EQ_SCALE_DY", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC, true},
                               {"EQ_SCALE_X", CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC, true}};

template <std::size_t N>
Status bind_all(Lowerer& l, int op, const Node& n, const PortAttr (&table)[N]) {
  for (const auto& [port, attr, output] : table)
    OPGRAPH_CHECK(output ? l.bind_out(op, attr, n, port) : l.bind_in(op, attr, n, port));
  return Status::ok();
}

Status lower_inference_composite(Lowerer& l, const Node& n) {
  TensorPtr x = n.input(ops::in::X);
  auto rec_of = [&](std::string_view port) { return l.tensor(n.input(port)); };
  auto rx = l.tensor(x), rm = rec_of("MEAN"), rv = rec_of("INV_VARIANCE"), rs = rec_of("SCALE"), rb = rec_of("BIAS");
  auto ry = l.tensor(n.output(ops::out::Y));
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
    {ops::BatchnormInference::kIndex, lower_inference_composite, {}},
};

}  // namespace

std::span<const LoweringRecord> bn_lowerings() { return kLowerings; }

}  // namespace opgraph::engines::cudnn::detail
