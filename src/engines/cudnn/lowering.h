// engines/cudnn/lowering.h — the IR lowered to cuDNN backend descriptors, as DATA.
//
// lower() reads a frozen OpGraph and returns a LoweringPlan: the list of backend
// descriptors to create, in creation order, each with the attributes to set.
// It makes NO cuDNN call (it needs only cudnn_graph.h's enum values), so the
// lowering of every op is testable on a machine without cuDNN or a GPU; the
// separate step, materialise() in backend.h, turns the plan into live descriptors.
//
// Rules the plan follows:
//  * uids come from the IR (every tensor's uid, pushed explicitly; never assigned here);
//  * every tensor is padded with leading unit axes to the graph's common rank
//    (at least 3, kMinRank): cuDNN aligns operands axis by axis, numpy
//    broadcasting aligns from the right, so leading 1s keep meaning. cuDNN 9.14
//    ran 2-D unary / backward pointwise graphs on the H200 and wrote every
//    element wrong (2026-11-30), while 3-D ones were right: no graph goes down
//    below rank 3;
//  * a pure-pointwise graph of rank >= 4 whose tensors are all row-major packed
//    (NCHW-like) goes down with every tensor's axes permuted by
//    [0, r-1, 1, ..., r-2]: cuDNN 9.14's pointwise engines take 4-D tensors
//    only NHWC-ordered ("isNSpatialC_ordered_fullyPacked", H200 log) and
//    listed no engine for NCHW ones; element-wise ops commute with one common
//    permutation of every operand's axes, broadcasting included;
//  * composite lowerings (batchnorm_inference = 4 pointwise operations) add
//    virtual tensors of their own; they take uids above the graph's largest
//    and never reach the variant pack;
//  * an op whose backend operation needs a newer cuDNN records the version in
//    min_cudnn_version; the engine declines on an older libcudnn naming it;
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
  std::vector<std::int64_t> dims;     // padded to the plan's rank, then permuted (elements)
  std::vector<std::int64_t> strides;  // elements
  bool is_virtual = false;
  bool by_value = false;
  bool dims_from_user = false;
  bool strides_from_user = false;
  // By-value scalars: the value's bytes in the tensor's data type (the backend
  // reads a host pointer to them at execute).
  std::array<unsigned char, 8> scalar_bytes{};
};

// A non-virtual tensor the lowering itself introduced (e.g. the SDPA backward's
// row sums and fp32 dQ accumulator): the plan places it in the execute
// workspace, after the engine's own bytes, at `offset` (bytes, 256-aligned).
// `init`: its constant bytes (e.g. the ALiBi slopes; read only): the plan
// copies them once, at build, into a device buffer it owns and binds that
// instead of the workspace bytes; empty = no initialisation.
struct ScratchTensor {
  std::int64_t uid = 0;
  std::int64_t bytes = 0;
  std::int64_t offset = 0;
  std::vector<unsigned char> init;
};

// What the lowering may read about the library that will run the plan.
struct LoweringOptions {
  // cudnnGetVersion() of the loaded libcudnn (e.g. 91400); 0 = unknown, which
  // turns every version-gated native operation off (composites only).
  std::int64_t cudnn_version = 0;
  // The planning target's compute capability, major * 10 + minor (90 for an
  // H100/H200); 0 = unknown. The deterministic SDPA backward is lowered for
  // Hopper (9.x) only, where cudnn-frontend's is the dP-workspace composite.
  int sm_version = 0;
  // Also lower the SDPA variants whose cuDNN plans FAILED their H200 check
  // (bench/results/2026-11-30-cudnn-sdpa-h200.txt, run 3): the forward's
  // Max / Sum_exp outputs came back unwritten, a backward given SINK_TOKEN was
  // refused at execute (BAD_PARAM_NULL_POINTER), and cuDNN lists no engine for
  // the DSINK_TOKEN backward. Off (the engine's setting): those decline with
  // rule `failed_on_h200`. On: only the record tests, which check the structure.
  bool include_failed_variants = false;
  // What has not been checked on the H200 (OPGRAPH_CUDNN_INCLUDE_UNVERIFIED=1,
  // planning_options; docs/environment.md). No lowering reads it since 2026-12-02
  // (transpose, its last user, lowers by default: the flexible-SDPA composites that
  // hold it ran and passed on the H200 with cuDNN 9.19), and the engine gates
  // nothing on it either: execute-time shape overrides of a graph that holds
  // attention, which it once gated, are served by default with a kernel cache per
  // shape (override_policy, dynamic_shapes.h; verified on the H200, cuDNN 9.19).
  // Still read from the variable and set by the tests, for what may need it again.
  bool include_unverified = false;
  // Lower for cuDNN's dynamic shapes: the operation graph record carries
  // CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED = true, so that execution
  // plans finalised on it may share a kernel cache (an execute-time shape override
  // of a built plan, cudnn_engine.cpp). Needs cuDNN >= kDynamicShapesMinVersion:
  // on an older (or unknown) version lower() declines naming it.
  bool dynamic_shapes = false;
};

// The oldest cuDNN with dynamic-shape operation graphs and the kernel cache
// (CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED,
// CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR, CUDNN_ATTR_EXECUTION_PLAN_KERNEL_CACHE): 9.4.0.
inline constexpr std::int64_t kDynamicShapesMinVersion = 90400;
// The oldest cuDNN whose kernel cache takes the operation graph it serves
// (CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH): 9.5.0. Below it the cache is finalised without one.
inline constexpr std::int64_t kKernelCacheGraphMinVersion = 90500;

struct LoweringPlan {
  std::vector<DescriptorRecord> records;  // creation order; refs point backwards
  std::vector<int> operations;            // the operation records, in graph order
  int operation_graph = -1;               // the OPERATIONGRAPH record (OPS set; HANDLE added when materialised)
  std::vector<TensorRecord> tensors;      // one per IR tensor, graph order
  int rank = 0;                           // the common rank every tensor is padded to
  std::vector<int> axis_permutation;      // applied to every tensor's padded axes; empty = identity
  // The oldest cuDNN that has every operation of the plan (CUDNN_VERSION form,
  // 90700 = 9.7.0) and the op that needs it ("" when the loader's minimum does).
  std::int64_t min_cudnn_version = 0;
  std::string min_version_reason;
  // Non-virtual tensors the caller binds (ascending uid), and by-value ones the plan binds itself.
  std::vector<std::int64_t> caller_uids;
  std::vector<std::int64_t> by_value_uids;
  // Non-virtual tensors the lowering introduced, placed in the workspace (not the caller's).
  std::vector<ScratchTensor> scratch;
  std::int64_t scratch_bytes = 0;  // total, a multiple of 256
  const TensorRecord* tensor(std::int64_t uid) const;
  // "op 'a' (node 'n0'), op 'b' (node 'n1')" (the first three operations, then "+N more"),
  // for errors that concern the whole operation graph.
  std::string operations_summary() const;
};

// The op names lower() handles (the others decline).
const std::vector<std::string>& lowered_ops();

// The lowest common rank of a plan (see the rules above).
inline constexpr int kMinRank = 3;

// "9.15.0" for 91500.
std::string cudnn_version_string(std::int64_t v);

// Lowers `graph` (validated; uids assigned) for the library `options` describes.
// GRAPH_NOT_SUPPORTED names the op and node it cannot lower (and, for SDPA, the
// attribute and rule); nothing else is returned for a valid graph. Tensors the
// lowering introduces (composites) get uids above every uid of the graph.
Result<LoweringPlan> lower(const OpGraph& graph, const LoweringOptions& options = {});

// cuDNN's data type for ours (FP8_E8M0 and FP4_E2M1 included); nullopt-like -1 for NOT_SET.
int to_cudnn_data_type(DataType t) noexcept;

}  // namespace opgraph::engines::cudnn
