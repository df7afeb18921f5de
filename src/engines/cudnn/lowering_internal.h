// engines/cudnn/lowering_internal.h — the lowering's working state, shared by the
// per-op-group lowering files (lowering.cpp: tensors, matmul, pointwise,
// reduction; lowering_norm.cpp: the norms; lowering_conv.cpp: convolutions). Not part of the engine's interface.
#pragma once

#include <map>
#include <string>

#include "engines/cudnn/lowering.h"
#include "opgraph/node.h"
#include "opgraph/op_graph.h"

namespace opgraph::engines::cudnn::detail {

class Lowerer {
 public:
  Lowerer(const OpGraph& g, LoweringPlan& plan) : g_(g), plan_(plan) {}

  // Appends a record; returns its index.
  int add(cudnnBackendDescriptorType_t type, std::string label, std::string op = {});
  DescriptorRecord& rec(int i) { return plan_.records[static_cast<std::size_t>(i)]; }

  // The TENSOR record of `t` (created on first use: dims, strides, uid, ...).
  Result<int> tensor(const TensorPtr& t);

  // Attribute setters on record `i`.
  void set_ints(int i, cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t ty, std::vector<std::int64_t> v);
  void set_int(int i, cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t ty, std::int64_t v) {
    set_ints(i, n, ty, {v});
  }
  void set_real(int i, cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t ty, double v);
  void set_refs(int i, cudnnBackendAttributeName_t n, std::vector<int> refs);
  // Binds the tensor at `port` of `node` (input or output) to attribute n of record i;
  // an unbound optional port sets nothing.
  Status bind_in(int i, cudnnBackendAttributeName_t n, const Node& node, std::string_view port);
  Status bind_out(int i, cudnnBackendAttributeName_t n, const Node& node, std::string_view port);

  // The compute type of `node` (node, else graph context, else FLOAT) as cuDNN's.
  std::int64_t compute_type(const Node& node) const;
  // GRAPH_NOT_SUPPORTED "cudnn lowering: op 'x' (node 'n'): <why>".
  static Status decline(const Node& node, const std::string& why);
  static std::string node_label(const Node& node);

  const OpGraph& graph() const { return g_; }
  LoweringPlan& plan() { return plan_; }

 private:
  const OpGraph& g_;
  LoweringPlan& plan_;
  std::map<const Tensor*, int> tensor_records_;
};

// Per-group lowerings: append the op's records and its operation index to the plan.
Status lower_norm_forward(Lowerer& l, const Node& node);
Status lower_norm_backward(Lowerer& l, const Node& node);
bool is_norm_forward(std::string_view op);
bool is_norm_backward(std::string_view op);
Status lower_conv(Lowerer& l, const Node& node);  // lowering_conv.cpp
bool is_conv(std::string_view op);

}  // namespace opgraph::engines::cudnn::detail
