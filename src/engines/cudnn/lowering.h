// engines/cudnn/lowering.h — the IR lowered to cuDNN backend descriptors, as DATA.
//
// lower() reads a frozen OpGraph and returns a LoweringPlan: the list of backend
// descriptors to create, in creation order, each with the attributes to set.
// It makes NO cuDNN call (it needs only cudnn_graph.h's enum values), so the
// lowering of every op is testable on a machine without cuDNN or a GPU; the
// separate step in materialize.h turns the plan into live descriptors.
//
// Rules the plan follows:
//  * uids come from the IR (every tensor's uid, pushed explicitly; never assigned here);
//  * every tensor is padded with leading unit axes to the graph's common rank
//    (at least 3 when the graph has a matmul): cuDNN aligns operands axis by
//    axis, numpy broadcasting aligns from the right, so leading 1s keep meaning;
//  * dims and strides are the IR's; `strides_from_user` records whether the user
//    set them (Tensor::stride_set_by_user) or IR inference did (row-major or
//    the op's layout rule) — either way they are what the caller's buffers follow;
//  * an op without a lowering, or an engine-only op (OpSpec::backend_lowerable
//    false), is GRAPH_NOT_SUPPORTED naming the op and the node.
#pragma once

#include <cudnn_graph.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "opgraph/status.h"
#include "opgraph/tensor.h"

namespace opgraph {
class OpGraph;
}

namespace opgraph::engines::cudnn {

// One backend attribute: the values as data. INT64/INT32/BOOLEAN and every
// enum-typed attribute read `ints`; FLOAT/DOUBLE read `reals`;
// BACKEND_DESCRIPTOR reads `refs` (indices of EARLIER records of the plan).
struct AttrRecord {
  cudnnBackendAttributeName_t name{};
  cudnnBackendAttributeType_t type{};
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
  std::vector<int> refs;
};

struct DescriptorRecord {
  cudnnBackendDescriptorType_t type{};
  std::string label;  // "tensor 'x' (uid 3)", "node 'mm' (matmul)" — for errors
  std::string op;     // the IR op the record serves ("" for tensors and the op graph)
  std::vector<AttrRecord> attrs;
  // The attribute named `name`, or nullptr.
  const AttrRecord* find(cudnnBackendAttributeName_t name) const;
};

// What the plan knows about one IR tensor.
struct TensorRecord {
  std::int64_t uid = 0;
  int record = -1;                    // index of its TENSOR descriptor record
  std::vector<std::int64_t> dims;     // padded to the plan's rank (elements)
  std::vector<std::int64_t> strides;  // elements
  bool is_virtual = false;
  bool by_value = false;
  bool dims_from_user = false;
  bool strides_from_user = false;
  // By-value scalars: the value's bytes in the tensor's data type (the backend
  // reads a host pointer to them at execute).
  std::array<unsigned char, 8> scalar_bytes{};
};

struct LoweringPlan {
  std::vector<DescriptorRecord> records;  // creation order; refs point backwards
  std::vector<int> operations;            // the operation records, in graph order
  int operation_graph = -1;               // the OPERATIONGRAPH record (OPS set; HANDLE added when materialised)
  std::vector<TensorRecord> tensors;      // one per IR tensor, graph order
  int rank = 0;                           // the common rank every tensor is padded to
  // Non-virtual tensors the caller binds (ascending uid), and by-value ones the plan binds itself.
  std::vector<std::int64_t> caller_uids;
  std::vector<std::int64_t> by_value_uids;
  const TensorRecord* tensor(std::int64_t uid) const;
};

// The op names lower() handles (the others decline).
const std::vector<std::string>& lowered_ops();

// Lowers `graph` (validated; uids assigned). GRAPH_NOT_SUPPORTED names the op
// and node it cannot lower; nothing else is returned for a valid graph.
Result<LoweringPlan> lower(const OpGraph& graph);

// cuDNN's data type for ours (FP8_E8M0 and FP4_E2M1 included); nullopt-like -1 for NOT_SET.
int to_cudnn_data_type(DataType t) noexcept;

}  // namespace opgraph::engines::cudnn
