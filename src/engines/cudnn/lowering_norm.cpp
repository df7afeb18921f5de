// engines/cudnn/lowering_norm.cpp — the norms cuDNN's NORM_FORWARD / NORM_BACKWARD
// operations cover: layernorm, rmsnorm, batchnorm (training), instancenorm,
// adalayernorm, forward and backward (batchnorm_inference is a pointwise
// composite: lowering_bn.cpp). Port → attribute tables
// are data; the mode and phase come from the op name and its forward_phase.
#include <algorithm>

#include "engines/cudnn/lowering_internal.h"

namespace opgraph::engines::cudnn::detail {
namespace {

struct NormRow {
  std::string_view op;
  cudnnBackendNormMode_t mode;
};
const NormRow kForward[] = {{"layernorm", CUDNN_LAYER_NORM},       {"rmsnorm", CUDNN_RMS_NORM},
                            {"batchnorm", CUDNN_BATCH_NORM},
                            {"instancenorm", CUDNN_INSTANCE_NORM}, {"adalayernorm", CUDNN_ADA_LAYER_NORM}};
const NormRow kBackward[] = {{"layernorm_backward", CUDNN_LAYER_NORM},
                             {"rmsnorm_backward", CUDNN_RMS_NORM},
                             {"batchnorm_backward", CUDNN_BATCH_NORM},
                             {"instancenorm_backward", CUDNN_INSTANCE_NORM},
                             {"adalayernorm_backward", CUDNN_ADA_LAYER_NORM}};

struct PortAttr {
  std::string_view port;
  cudnnBackendAttributeName_t attr;
};
// Input ports (by op-independent name) → NORM_FWD attributes. Ports an op does not have are simply unbound.
const PortAttr kForwardIn[] = {{"X", CUDNN_ATTR_OPERATION_NORM_FWD_XDESC},
                               {"SCALE", CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC},
                               {"BIAS", CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC},
                               {"EPSILON", CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC},
                               {"MOMENTUM", CUDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC},
                               {"PREV_RUNNING_MEAN", CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC},
                               {"PREV_RUNNING_VAR", CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC}};
const PortAttr kForwardOut[] = {{"Y", CUDNN_ATTR_OPERATION_NORM_FWD_YDESC},
                                {"MEAN", CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC},
                                {"INV_VARIANCE", CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC},
                                {"NEXT_RUNNING_MEAN", CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC},
                                {"NEXT_RUNNING_VAR", CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC}};
const PortAttr kBackwardIn[] = {{"DY", CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC},
                                {"X", CUDNN_ATTR_OPERATION_NORM_BWD_XDESC},
                                {"SCALE", CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC},
                                {"MEAN", CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC},
                                {"INV_VARIANCE", CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC},
                                {"EPSILON", CUDNN_ATTR_OPERATION_NORM_BWD_EPSILON_DESC}};
const PortAttr kBackwardOut[] = {{"DX", CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC},
                                 {"DSCALE", CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC},
                                 {"DBIAS", CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC}};

bool has_port(const Node& n, std::string_view port) {
  for (const auto& p : n.spec().inputs)
    if (p.name == port) return true;
  return false;
}

Status bind_peer_stats(Lowerer& l, int op, const Node& n, cudnnBackendAttributeName_t attr) {
  if (!has_port(n, "PEER_STATS")) return Status::ok();
  std::vector<int> refs;
  for (const auto& t : n.inputs_of("PEER_STATS")) {
    if (!t) continue;
    auto r = l.tensor(t);
    if (r.is_bad()) return r.status();
    refs.push_back(r.value());
  }
  if (!refs.empty()) l.set_refs(op, attr, std::move(refs));
  return Status::ok();
}

}  // namespace

bool is_norm_forward(std::string_view op) {
  return std::any_of(std::begin(kForward), std::end(kForward), [&](const NormRow& r) { return r.op == op; });
}
bool is_norm_backward(std::string_view op) {
  return std::any_of(std::begin(kBackward), std::end(kBackward), [&](const NormRow& r) { return r.op == op; });
}

Status lower_norm_forward(Lowerer& l, const Node& n) {
  auto row = std::find_if(std::begin(kForward), std::end(kForward), [&](const NormRow& r) { return r.op == n.op(); });
  bool inference = n.op() != "batchnorm" && n.get_string("forward_phase", "TRAINING") == "INFERENCE";
  int op = l.add(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, Lowerer::node_label(n), std::string(n.op()));
  l.set_int(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, row->mode);
  l.set_int(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE,
            inference ? CUDNN_NORM_FWD_INFERENCE : CUDNN_NORM_FWD_TRAINING);
  for (const auto& [port, attr] : kForwardIn)
    if (has_port(n, port)) OPGRAPH_CHECK(l.bind_in(op, attr, n, port));
  for (const auto& [port, attr] : kForwardOut) OPGRAPH_CHECK(l.bind_out(op, attr, n, port));
  OPGRAPH_CHECK(bind_peer_stats(l, op, n, CUDNN_ATTR_OPERATION_NORM_FWD_PEER_STAT_DESCS));
  l.plan().operations.push_back(op);
  return Status::ok();
}

Status lower_norm_backward(Lowerer& l, const Node& n) {
  auto row = std::find_if(std::begin(kBackward), std::end(kBackward), [&](const NormRow& r) { return r.op == n.op(); });
  int op = l.add(CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR, Lowerer::node_label(n), std::string(n.op()));
  l.set_int(op, CUDNN_ATTR_OPERATION_NORM_BWD_MODE, CUDNN_TYPE_NORM_MODE, row->mode);
  for (const auto& [port, attr] : kBackwardIn)
    if (has_port(n, port)) OPGRAPH_CHECK(l.bind_in(op, attr, n, port));
  for (const auto& [port, attr] : kBackwardOut) OPGRAPH_CHECK(l.bind_out(op, attr, n, port));
  OPGRAPH_CHECK(bind_peer_stats(l, op, n, CUDNN_ATTR_OPERATION_NORM_BWD_PEER_STAT_DESCS));
  l.plan().operations.push_back(op);
  return Status::ok();
}

}  // namespace opgraph::engines::cudnn::detail
