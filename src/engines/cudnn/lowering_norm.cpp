// engines/cudnn/lowering_norm.cpp — the norms cuDNN's NORM_FORWARD / NORM_BACKWARD
// operations cover: layernorm, rmsnorm, batchnorm (training), instancenorm,
// adalayernorm, forward and backward (batchnorm_inference is a pointwise
// composite: lowering_bn.cpp). Port → attribute tables
// are data; the mode and phase come from the op name and its forward_phase.
#include <algorithm>
#include <stdexcept>

#include "engines/cudnn/lowering_internal.h"

namespace opgraph::engines::cudnn::detail {
namespace {

struct NormRow {
  std::size_t op;  // ops::<Op>::kIndex
  cudnnBackendNormMode_t mode;
};
const NormRow kForward[] = {{ops::Layernorm::kIndex, CUDNN_LAYER_NORM},
                            {ops::Rmsnorm::kIndex, CUDNN_RMS_NORM},
                            {ops::Batchnorm::kIndex, CUDNN_BATCH_NORM},
                            {ops::Instancenorm::kIndex, CUDNN_INSTANCE_NORM},
                            {ops::Adalayernorm::kIndex, CUDNN_ADA_LAYER_NORM}};
const NormRow kBackward[] = {{ops::LayernormBackward::kIndex, CUDNN_LAYER_NORM},
                             {ops::RmsnormBackward::kIndex, CUDNN_RMS_NORM},
                             {ops::BatchnormBackward::kIndex, CUDNN_BATCH_NORM},
                             {ops::InstancenormBackward::kIndex, CUDNN_INSTANCE_NORM},
                             {ops::AdalayernormBackward::kIndex, CUDNN_ADA_LAYER_NORM}};

const NormRow& row_of(std::span<const NormRow> rows, const Node& n) {
  const std::size_t op = op_index(n.spec());
  for (const NormRow& r : rows)
    if (r.op == op) return r;
  throw std::logic_error("cudnn norm lowering registered for op '" + std::string(n.op()) + "' without a mode row");
}

// Shared port names: the forward / backward tables serve every norm, and a port
// an op does not have is simply unbound.
struct InAttr {
  ops::InName port;
  cudnnBackendAttributeName_t attr;
};
struct OutAttr {
  ops::OutName port;
  cudnnBackendAttributeName_t attr;
};
// Input ports (by op-independent name) → NORM_FWD attributes. Ports an op does not have are simply unbound.
const InAttr kForwardIn[] = {{ops::in::X, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC},
                               {ops::in::SCALE, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC},
                               {ops::in::BIAS, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC},
                               {ops::in::EPSILON, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC},
                               {ops::in::MOMENTUM, CUDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC},
                               {ops::in::PREV_RUNNING_MEAN, CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC},
                               {ops::in::PREV_RUNNING_VAR, CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC}};
const OutAttr kForwardOut[] = {{ops::out::Y, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC},
                                {ops::out::MEAN, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC},
                                {ops::out::INV_VARIANCE, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC},
                                {ops::out::NEXT_RUNNING_MEAN, CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC},
                                {ops::out::NEXT_RUNNING_VAR, CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC}};
const InAttr kBackwardIn[] = {{ops::in::DY, CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC},
                                {ops::in::X, CUDNN_ATTR_OPERATION_NORM_BWD_XDESC},
                                {ops::in::SCALE, CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC},
                                {ops::in::MEAN, CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC},
                                {ops::in::INV_VARIANCE, CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC},
                                {ops::in::EPSILON, CUDNN_ATTR_OPERATION_NORM_BWD_EPSILON_DESC}};
const OutAttr kBackwardOut[] = {{ops::out::DX, CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC},
                                 {ops::out::DSCALE, CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC},
                                 {ops::out::DBIAS, CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC}};

bool has_port(const Node& n, ops::InName port) {
  for (const auto& p : n.spec().inputs)
    if (p.name == port.name) return true;
  return false;
}

Status bind_peer_stats(Lowerer& l, int op, const Node& n, cudnnBackendAttributeName_t attr) {
  if (!has_port(n, ops::in::PEER_STATS)) return Status::ok();
  std::vector<int> refs;
  for (const auto& t : n.inputs_of(ops::in::PEER_STATS)) {
    if (!t) continue;
    auto r = l.tensor(t);
    if (r.is_bad()) return r.status();
    refs.push_back(r.value());
  }
  if (!refs.empty()) l.set_refs(op, attr, std::move(refs));
  return Status::ok();
}

Status lower_norm_forward(Lowerer& l, const Node& n) {
  const NormRow* row = &row_of(kForward, n);
  // The IR's reading of the phase (the record's conditional outputs use the same
  // accessor): TRAINING only when set so; batchnorm has no phase and always trains.
  const bool has_phase = n.spec().find_attr("forward_phase") != nullptr;
  const bool inference = has_phase && ops::attr::forward_phase(n) != ops::ForwardPhase::TRAINING;
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
  const NormRow* row = &row_of(kBackward, n);
  int op = l.add(CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR, Lowerer::node_label(n), std::string(n.op()));
  l.set_int(op, CUDNN_ATTR_OPERATION_NORM_BWD_MODE, CUDNN_TYPE_NORM_MODE, row->mode);
  for (const auto& [port, attr] : kBackwardIn)
    if (has_port(n, port)) OPGRAPH_CHECK(l.bind_in(op, attr, n, port));
  for (const auto& [port, attr] : kBackwardOut) OPGRAPH_CHECK(l.bind_out(op, attr, n, port));
  OPGRAPH_CHECK(bind_peer_stats(l, op, n, CUDNN_ATTR_OPERATION_NORM_BWD_PEER_STAT_DESCS));
  l.plan().operations.push_back(op);
  return Status::ok();
}

const LoweringRecord kLowerings[] = {
    {ops::Layernorm::kIndex, lower_norm_forward, {}},
    {ops::Rmsnorm::kIndex, lower_norm_forward, {}},
    {ops::Batchnorm::kIndex, lower_norm_forward, {}},
    {ops::Instancenorm::kIndex, lower_norm_forward, {}},
    {ops::Adalayernorm::kIndex, lower_norm_forward, {}},
    {ops::LayernormBackward::kIndex, lower_norm_backward, {}},
    {ops::RmsnormBackward::kIndex, lower_norm_backward, {}},
    {ops::BatchnormBackward::kIndex, lower_norm_backward, {}},
    {ops::InstancenormBackward::kIndex, lower_norm_backward, {}},
    {ops::AdalayernormBackward::kIndex, lower_norm_backward, {}},
};
}  // namespace

std::span<const LoweringRecord> norm_lowerings() { return kLowerings; }

}  // namespace opgraph::engines::cudnn::detail
