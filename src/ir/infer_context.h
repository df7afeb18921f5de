// ir/infer_context.h — what an op's infer() hook sees: its node, typed accessors
// for ports and attributes, and error helpers that name op, node, port, tensor
// and rule in one sentence.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opgraph/node.h"
#include "opgraph/op_graph.h"
#include "opgraph/ops.h"

namespace opgraph {

using Dims = std::vector<std::int64_t>;

class InferContext {
 public:
  InferContext(const GraphContext& g, Node& n) : graph_(g), node_(n) {}

  const Node& node() const noexcept { return node_; }
  const GraphContext& graph_context() const noexcept { return graph_; }

  // Ports: a port enum of opgraph/ops.h (ops::Matmul::In::A), a shared name
  // (ops::in::X) or a string; see Node::input.
  TensorPtr in(ops::PortRef port) const { return node_.input(port); }
  const std::vector<TensorPtr>& ins(ops::PortRef port) const { return node_.inputs_of(port); }
  TensorPtr out(ops::PortRef port) const { return node_.output(port); }
  bool has(ops::PortRef port) const { return in(port) != nullptr; }
  const Dims& dims(ops::PortRef port) const;       // input's dims (empty if unbound)
  DataType dtype(ops::PortRef port) const;          // input's data type

  // --- errors (GRAPH_NOT_SUPPORTED unless stated) ---
  Status fail(ops::PortRef port, const std::string& rule) const;          // names port + tensor
  Status fail_attr(std::string_view attr, const std::string& rule) const;     // names attribute
  Status fail_op(const std::string& rule) const;                              // names op + node only
  Status fail_code(ErrorCode code, ops::PortRef port, const std::string& rule) const;

  // --- common rules ---
  Status require(ops::PortRef port) const;                                // bound (ATTRIBUTE_NOT_SET)
  Status require_rank(ops::PortRef port, std::int64_t rank) const;
  Status require_rank_between(ops::PortRef port, std::int64_t lo, std::int64_t hi) const;
  Status require_dtype_in(ops::PortRef port, std::initializer_list<DataType> allowed) const;
  Status require_floating(ops::PortRef port) const;
  Status require_integer_index(ops::PortRef port) const;                  // INT32 or INT64
  Status require_same_dims(ops::PortRef port, ops::PortRef other) const;
  Status require_dim(ops::PortRef port, std::int64_t axis, std::int64_t expected,
                     const std::string& what) const;
  // The port's element count equals `n` (scalars and per-batch vectors of any rank).
  Status require_numel(ops::PortRef port, std::int64_t n, const std::string& what) const;

  // Sets an output's inferred dims (user-set dims must agree) and, when the user
  // set none, packed strides and `dtype` (NOT_SET leaves the generic fill to decide).
  Status set_output(ops::PortRef port, Dims dims, DataType dtype = DataType::NOT_SET);
  // For outputs whose dims only the user can decide (reduction, conv dgrad/wgrad):
  // the user must have set them; returns them in `dims`.
  Status require_user_output_dims(ops::PortRef port, Dims* dims = nullptr);

  // Numpy-style broadcast of two shapes (right-aligned, 1 stretches); nullopt if incompatible.
  static std::optional<Dims> broadcast(const Dims& a, const Dims& b);
  static std::string dims_str(const Dims& d);

 private:
  std::string where(std::string_view port) const;
  const GraphContext& graph_;
  Node& node_;
};

}  // namespace opgraph
