// engines/cudnn/lowering_internal.h — the lowering's working state, shared by the
// per-op-group lowering files (lowering_lowerer.cpp: the helpers below;
// lowering.cpp: matmul, pointwise, reduction; lowering_norm.cpp: the norms; lowering_bn.cpp: genstats,
// bn_finalize, dbn_weight, batchnorm_inference; lowering_conv.cpp:
// convolutions; lowering_tensor_ops.cpp: reshape, concatenate, rng, resample,
// block scale, paged cache load, MoE); lowering_sdpa*.cpp: attention. Not part of the engine's interface.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>

#include "engines/cudnn/lowering.h"
#include "opgraph/node.h"
#include "opgraph/op_graph.h"
#include "opgraph/ops.h"

namespace opgraph::engines::cudnn::detail {

class Lowerer {
 public:
  Lowerer(const OpGraph& g, LoweringPlan& plan, const LoweringOptions& options = {})
      : g_(g), plan_(plan), options_(options) {}

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
  Status bind_in(int i, cudnnBackendAttributeName_t n, const Node& node, const ops::PortRef& port);
  Status bind_out(int i, cudnnBackendAttributeName_t n, const Node& node, const ops::PortRef& port);

  // A virtual tensor of the lowering's own (composite lowerings): `like`'s
  // padded dims and strides, the graph's intermediate type (else FLOAT), a uid
  // above every IR uid. Not listed in LoweringPlan::tensors.
  Result<int> virtual_like(const TensorPtr& like, const std::string& name);
  // One pointwise operation (descriptor + operation, math precision of `node`)
  // on tensor records x [, b] -> y; appended to the plan's operations.
  void pointwise(const Node& node, cudnnPointwiseMode_t mode, int x, int b, int y, const std::string& what);
  // Records that `node` needs cuDNN >= v (CUDNN_VERSION form).
  void require_version(const Node& node, std::int64_t v);
  // An axis of a tensor of rank `tensor_rank` (negative counts from the end)
  // in the plan's padded rank.
  std::int64_t plan_axis(std::int64_t axis, std::int64_t tensor_rank) const;

  // The compute type of `node` (node, else graph context, else FLOAT) as cuDNN's.
  std::int64_t compute_type(const Node& node) const;
  // GRAPH_NOT_SUPPORTED "cudnn lowering: op 'x' (node 'n'): <why>".
  static Status decline(const Node& node, const std::string& why);
  static std::string node_label(const Node& node);

  const OpGraph& graph() const { return g_; }
  LoweringPlan& plan() { return plan_; }
  const LoweringOptions& options() const { return options_; }

  // A tensor the lowering introduces (no IR tensor behind it), with a fresh uid
  // above every uid of the graph (lowering_sdpa.cpp). `scratch` (non-virtual)
  // places it in the workspace; `scalar` makes it a by-value scalar of `dt`.
  struct NewTensor {
    std::vector<std::int64_t> dims, strides;  // the plan's rank
    DataType dt = DataType::FLOAT;
    bool is_virtual = true;
    std::optional<ScalarValue> scalar;
    std::string name;
    int ragged_record = -1;  // the TENSOR record of its ragged offsets, if any
  };
  Result<int> new_tensor(const NewTensor& t);
  // Rewrites the dims/strides of the TENSOR record `record` (e.g. K seen as K^T).
  void retarget(int record, std::vector<std::int64_t> dims, std::vector<std::int64_t> strides);
  // The uid of a TENSOR record.
  std::int64_t uid_of(int record) const;
  // The dims / strides of a TENSOR record (the plan's rank).
  std::vector<std::int64_t> record_dims(int record) const;
  std::vector<std::int64_t> record_strides(int record) const;
  // Makes IR tensor `t` lower to the existing TENSOR record `record` (a transpose folded into its input's record).
  void alias(const TensorPtr& t, int record) { tensor_records_[t.get()] = record; }

 private:
  const OpGraph& g_;
  LoweringPlan& plan_;
  LoweringOptions options_;
  std::map<const Tensor*, int> tensor_records_;
  std::int64_t next_uid_ = -1;  // composite virtuals; -1 until first use
};

// Lowerings are registered per op record: each group file lists its ops'
// lowerings under their record (ops::<Op>::kIndex); lower() dispatches through
// find_lowering. A backend-lowerable op cuDNN has no operation for (yet) is
// registered without a function and with the reason it declines; an
// ENGINE_ONLY op is not registered (tests/cudnn/test_cudnn_lowering_registry.cpp
// walks the registry).
using LowerFn = Status (*)(Lowerer& l, const Node& node);
struct LoweringRecord {
  std::size_t op;             // ops::<Op>::kIndex
  LowerFn fn;                 // appends the op's records and its operation index to the plan
  std::string_view missing;   // fn == nullptr: why the op declines
};
std::span<const LoweringRecord> core_lowerings();         // lowering.cpp: matmul, pointwise, reduction, unlowered ops
std::span<const LoweringRecord> norm_lowerings();         // lowering_norm.cpp
std::span<const LoweringRecord> bn_lowerings();           // lowering_bn.cpp
std::span<const LoweringRecord> conv_lowerings();         // lowering_conv.cpp
std::span<const LoweringRecord> tensor_op_lowerings();    // lowering_tensor_ops.cpp
std::span<const LoweringRecord> sdpa_lowerings();         // lowering_sdpa*.cpp: the six SDPA ops
// The registration of an op record (nullptr: none, an ENGINE_ONLY op). Two for
// one record throw std::logic_error on first use.
const LoweringRecord* find_lowering(const OpSpec& op);
bool is_conv(const OpSpec& op);
// The by-value scalar encoding of lowering.cpp (false: no host encoding for `t`).
bool scalar_bytes(const ScalarValue& v, DataType t, std::array<unsigned char, 8>& out);

}  // namespace opgraph::engines::cudnn::detail
