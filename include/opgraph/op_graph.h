// opgraph/op_graph.h — the graph IR: tensors, nodes, validation, freeze, JSON.
//
// An OpGraph is engine-agnostic and fully introspectable. Its life:
//   build (tensor(), op builders) → validate() → [planning freezes it] → inspect.
// Invariants (see docs/architecture.md):
//   * uid ownership: the graph owns the uid namespace. A user uid is kept; two
//     user tensors with one uid are refused at validate(); an auto-assigned
//     tensor whose uid a user uid lands on is renumbered.
//   * whole-surface freeze: after freeze() every mutation path (builders, graph
//     and tensor setters, node binding) throws FrozenError; getters keep working.
//   * canonical JSON: serialize() is a pure function of the graph's content,
//     deserialize(serialize(g)) serializes identically, key() hashes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "opgraph/builders/conv.h"
#include "opgraph/builders/linear_attention.h"
#include "opgraph/builders/matmul.h"
#include "opgraph/builders/norm.h"
#include "opgraph/builders/pointwise.h"
#include "opgraph/builders/sdpa.h"
#include "opgraph/builders/tensor_ops.h"
#include "opgraph/node.h"
#include "opgraph/status.h"
#include "opgraph/tensor.h"

namespace opgraph {

struct GraphContext {
  std::string name;
  DataType io_data_type = DataType::NOT_SET;            // fills unset non-virtual tensor types
  DataType intermediate_data_type = DataType::NOT_SET;  // fills unset virtual tensor types
  DataType compute_data_type = DataType::NOT_SET;       // fills unset node compute types
};

class OpGraph : public PointwiseBuilders,
                public MatmulBuilders,
                public TensorOpBuilders,
                public NormBuilders,
                public ConvBuilders,
                public SdpaBuilders,
                public LinearAttentionBuilders {
 public:
  OpGraph() = default;
  OpGraph(OpGraph&&) = default;
  OpGraph& operator=(OpGraph&&) = default;
  OpGraph(const OpGraph&) = delete;
  OpGraph& operator=(const OpGraph&) = delete;
  ~OpGraph() override = default;

  // --- context ---
  OpGraph& set_name(std::string name);
  OpGraph& set_io_data_type(DataType t);
  OpGraph& set_intermediate_data_type(DataType t);
  OpGraph& set_compute_data_type(DataType t);
  const GraphContext& context() const noexcept { return ctx_; }

  // --- tensors ---
  // A new graph tensor with a copy of `attrs` (uid and user flags included).
  TensorPtr tensor(const Tensor& attrs);
  // Shorthand: dims (packed strides unless given), data type, name.
  TensorPtr tensor(std::vector<std::int64_t> dim, DataType t = DataType::NOT_SET, std::string name = {},
                   std::vector<std::int64_t> stride = {});
  // A pass-by-value scalar of shape [1] (cudnn-frontend's tensor(float) overloads).
  TensorPtr tensor_scalar(double value, DataType t = DataType::FLOAT, ScalarKind kind = ScalarKind::RUNTIME_PARAM);
  TensorPtr tensor_scalar_int(std::int64_t value, DataType t = DataType::INT64,
                              ScalarKind kind = ScalarKind::RUNTIME_PARAM);
  // A copy of another tensor's attributes with the uid cleared.
  TensorPtr tensor_like(const TensorPtr& like, std::string name = {});

  // --- lifecycle ---
  // Shape/dtype inference and every op's semantic rules, in node order. An
  // invalid graph gets GRAPH_NOT_SUPPORTED (missing attribute: ATTRIBUTE_NOT_SET)
  // naming the op, node, port, tensor and rule.
  Status validate();
  bool is_validated() const noexcept { return validated_; }
  // Gives every tensor a uid (see the invariants above). Called by validate().
  Status assign_uids();
  void freeze();
  bool is_frozen() const noexcept { return frozen_; }

  // --- introspection ---
  const std::vector<TensorPtr>& tensors() const noexcept { return tensors_; }
  const std::vector<NodePtr>& nodes() const noexcept { return nodes_; }
  TensorPtr tensor_by_uid(std::int64_t uid) const;
  // The node whose output `t` is (nullptr for a graph input). O(1) once the
  // graph is frozen (freeze() builds the map, which nothing can change after);
  // a scan of the nodes before.
  const Node* producer_of(const Tensor* t) const;

  // --- serialization ---
  Result<std::string> serialize();                 // assigns uids first
  static Result<OpGraph> deserialize(std::string_view json_text);
  Result<std::uint64_t> key();                     // a 64-bit hash of what serialize() writes (ir/graph_hash.h)

 protected:
  std::vector<TensorPtr> add_node(std::string_view op, std::vector<PortArg> inputs,
                                  const Attributes& attrs) override;
  // Moves another graph's content into this one (used by derived graph classes).
  void adopt(OpGraph&& other);

 private:
  friend struct GraphJson;
  void check_mutable(std::string_view what) const;
  void register_tensor(const TensorPtr& t);
  std::string unique_node_name(std::string_view op);

  GraphContext ctx_;
  std::vector<TensorPtr> tensors_;
  std::vector<NodePtr> nodes_;
  std::unordered_set<const Tensor*> registered_;            // tensors_ as a set: registration in O(1)
  std::unordered_map<const Tensor*, const Node*> producer_;  // built by freeze(): output -> its node
  bool validated_ = false;
  bool frozen_ = false;
  std::int64_t next_auto_name_ = 0;
};

}  // namespace opgraph
