// engines/cudnn/dynamic_shapes.cpp — see dynamic_shapes.h.
#include "engines/cudnn/dynamic_shapes.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "opgraph/op_graph.h"

namespace opgraph::engines::cudnn {
namespace {

std::string list(const std::vector<std::int64_t>& v) { return int_list(v.data(), static_cast<int>(v.size())); }

// The attributes a lowering at other extents may change: a tensor's extents and
// strides, and the operation graph's dynamic-shape flag (a static graph's built
// plan is lowered without it; one planned dynamic, with it).
bool may_differ(const DescriptorRecord& r, const AttrRecord& a) {
  if (a.name == CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED) return true;
  return r.type == CUDNN_BACKEND_TENSOR_DESCRIPTOR &&
         (a.name == CUDNN_ATTR_TENSOR_DIMENSIONS || a.name == CUDNN_ATTR_TENSOR_STRIDES);
}

std::vector<const AttrRecord*> fixed_attrs(const DescriptorRecord& r) {
  std::vector<const AttrRecord*> out;
  for (const auto& a : r.attrs)
    if (!may_differ(r, a)) out.push_back(&a);
  return out;
}

bool same_attr(const AttrRecord& a, const AttrRecord& b) {
  return a.name == b.name && a.type == b.type && a.ints == b.ints && a.reals == b.reals && a.refs == b.refs;
}

std::string desc(const DescriptorRecord& r) { return "descriptor '" + r.label + "'"; }

// "op 'x' (node 'n')" of an operation record's label.
std::string op_node(const DescriptorRecord& r) { return r.label.substr(0, r.label.find(')') + 1); }

bool is_sdpa_op(const std::string& op) {
  for (const char* name : {"sdpa", "sdpa_backward", "sdpa_fp8", "sdpa_fp8_backward", "sdpa_mxfp8", "sdpa_mxfp8_backward"})
    if (op == name) return true;
  return false;
}

// The attributes through which an operation writes a tensor (the others that
// reference a tensor record read one). The operations attention is built of:
// matmul, pointwise (its backward modes write DX), reduction, reshape, paged load.
bool writes(cudnnBackendAttributeName_t a) {
  switch (a) {
    case CUDNN_ATTR_OPERATION_MATMUL_CDESC:
    case CUDNN_ATTR_OPERATION_POINTWISE_YDESC:
    case CUDNN_ATTR_OPERATION_POINTWISE_DXDESC:
    case CUDNN_ATTR_OPERATION_REDUCTION_YDESC:
    case CUDNN_ATTR_OPERATION_RESHAPE_YDESC:
    case CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC:
      return true;
    default:
      return false;
  }
}

// The data flow of a lowering's operations over its tensor records.
struct Flow {
  const LoweringPlan& lp;
  std::vector<int> producer;  // per record: the operation record writing it (a tensor), else -1

  explicit Flow(const LoweringPlan& p) : lp(p), producer(p.records.size(), -1) {
    for (int op : lp.operations)
      for (const AttrRecord& a : rec(op).attrs)
        if (writes(a.name))
          for (int t : a.refs) producer[static_cast<std::size_t>(t)] = op;
  }
  const DescriptorRecord& rec(int i) const { return lp.records[static_cast<std::size_t>(i)]; }
  bool is_tensor(int i) const { return rec(i).type == CUDNN_BACKEND_TENSOR_DESCRIPTOR; }
  bool is_virtual(int i) const {
    const AttrRecord* v = rec(i).find(CUDNN_ATTR_TENSOR_IS_VIRTUAL);
    return v && !v->ints.empty() && v->ints[0] != 0;
  }
  bool is_matmul(int op) const { return rec(op).type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR; }
  bool is_exp(int op) const {
    if (rec(op).type != CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR) return false;
    const AttrRecord* d = rec(op).find(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR);
    if (!d || d->refs.empty()) return false;
    const AttrRecord* m = rec(d->refs[0]).find(CUDNN_ATTR_POINTWISE_MODE);
    return m && !m->ints.empty() && m->ints[0] == CUDNN_POINTWISE_EXP;
  }
  // The operations upstream of the tensors `from` through virtual tensors only
  // (each operation whose virtual output one of them is, then its inputs' writers).
  std::vector<int> upstream(std::vector<int> from) const {
    std::vector<int> ops;
    std::vector<bool> seen(lp.records.size(), false);
    while (!from.empty()) {
      const int t = from.back();
      from.pop_back();
      if (seen[static_cast<std::size_t>(t)]) continue;
      seen[static_cast<std::size_t>(t)] = true;
      const int op = producer[static_cast<std::size_t>(t)];
      if (op < 0 || !is_virtual(t) || std::find(ops.begin(), ops.end(), op) != ops.end()) continue;
      ops.push_back(op);
      for (int in : reads(op)) from.push_back(in);
    }
    return ops;
  }
  // The tensor records `op` reads.
  std::vector<int> reads(int op) const {
    std::vector<int> out;
    for (const AttrRecord& a : rec(op).attrs)
      if (!writes(a.name))
        for (int t : a.refs)
          if (is_tensor(t)) out.push_back(t);
    return out;
  }
  std::vector<int> operands(int matmul) const {
    std::vector<int> out;
    for (auto name : {CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_ATTR_OPERATION_MATMUL_BDESC})
      if (const AttrRecord* a = rec(matmul).find(name))
        out.insert(out.end(), a->refs.begin(), a->refs.end());
    return out;
  }
};

}  // namespace

std::string dynamic_shapes_unavailable(std::int64_t cudnn_version) {
  if (cudnn_version >= kDynamicShapesMinVersion) return {};
  return "cuDNN's dynamic shapes (an operation graph with CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED and "
         "the kernel cache) need cuDNN >= " + cudnn_version_string(kDynamicShapesMinVersion) + "; the loaded libcudnn is " +
         (cudnn_version > 0 ? cudnn_version_string(cudnn_version) : std::string("of unknown version"));
}

LoweringOptions planning_options(std::int64_t cudnn_version, int sm_version, bool planned_dynamic) {
  LoweringOptions o;
  o.cudnn_version = cudnn_version;
  o.sm_version = sm_version;
  // OPGRAPH_CUDNN_INCLUDE_UNVERIFIED=1: what has not been checked on the H200
  // (LoweringOptions::include_unverified, docs/environment.md). Nothing in the
  // engine reads it since 2026-12-02 (attention graphs' overrides get a kernel
  // cache per shape by default); kept for what may need it again.
  const char* unverified = std::getenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
  o.include_unverified = unverified && std::string_view(unverified) == "1";
  o.dynamic_shapes = planned_dynamic;
  return o;
}

std::string sdpa_pattern(const LoweringPlan& lp) {
  for (int op : lp.operations)
    if (is_sdpa_op(lp.records[static_cast<std::size_t>(op)].op)) return op_node(lp.records[static_cast<std::size_t>(op)]);
  const Flow f(lp);
  for (int second : lp.operations) {
    if (!f.is_matmul(second)) continue;
    for (int e : f.upstream(f.operands(second))) {
      if (!f.is_exp(e)) continue;
      for (int first : f.upstream(f.reads(e)))
        if (f.is_matmul(first) && first != second)
          return "the matmul of " + op_node(f.rec(first)) + " through the exp of " + op_node(f.rec(e)) +
                 " into the matmul of " + op_node(f.rec(second));
    }
  }
  return {};
}

OverridePolicy override_policy(const LoweringPlan& built) {
  OverridePolicy p;
  p.attention = sdpa_pattern(built);
  // Sharing the plan's kernel cache across an SDPA graph's shapes gave wrong O and
  // Stats on cuDNN 9.19; a fresh cache per shape gave right ones (H200, 2026-12-02).
  p.fresh_kernel_cache = !p.attention.empty();
  return p;
}

bool lowered_dynamic(const LoweringPlan& lp) noexcept {
  if (lp.operation_graph < 0 || static_cast<std::size_t>(lp.operation_graph) >= lp.records.size()) return false;
  const AttrRecord* a =
      lp.records[static_cast<std::size_t>(lp.operation_graph)].find(CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED);
  return a && !a->ints.empty() && a->ints[0] != 0;
}

void shape_key(std::span<const OperandBuffer> ops, std::vector<std::int64_t>& out) {
  out.clear();
  for (std::size_t p = 0; p < ops.size(); ++p) {
    const OperandBuffer& b = ops[p];
    if (!b.overridden) continue;
    out.push_back(static_cast<std::int64_t>(p));
    out.push_back(b.rank);
    for (int k = 0; k < b.rank; ++k) out.push_back(b.dims[static_cast<std::size_t>(k)]);
    for (int k = 0; k < b.rank; ++k) out.push_back(b.strides[static_cast<std::size_t>(k)]);
  }
}

bool same_shape(std::span<const std::int64_t> key, std::span<const OperandBuffer> ops) noexcept {
  std::size_t at = 0;
  for (std::size_t p = 0; p < ops.size(); ++p) {
    const OperandBuffer& b = ops[p];
    if (!b.overridden) continue;
    const auto n = static_cast<std::size_t>(b.rank < 0 ? 0 : b.rank);
    if (at + 2 + 2 * n > key.size() || key[at] != static_cast<std::int64_t>(p) || key[at + 1] != b.rank) return false;
    at += 2;
    for (std::size_t k = 0; k < n; ++k)
      if (key[at + k] != b.dims[k] || key[at + n + k] != b.strides[k]) return false;
    at += 2 * n;
  }
  return at == key.size();
}

Result<OpGraph> graph_at_extents(std::string_view json, const DeclaredLayout& layout,
                                 std::span<const OperandBuffer> ops) {
  auto parsed = OpGraph::deserialize(json);
  if (parsed.is_bad())
    return Status{ErrorCode::INTERNAL_ERROR, "the plan's graph JSON does not parse: " + parsed.status().message()};
  OpGraph copy = std::move(parsed.value());
  for (std::size_t p = 0; p < layout.size() && p < ops.size(); ++p) {
    const OperandBuffer& b = ops[p];
    if (!b.overridden) continue;
    const DeclaredSlot& s = layout.slot(p);
    if (s.dtype == DataType::FP4_E2M1)
      return Status{ErrorCode::GRAPH_NOT_SUPPORTED, operand_label(s) + ": overrides of fp4 tensors are not taken (their "
                                                                       "storage slots are not their elements)"};
    TensorPtr t = copy.tensor_by_uid(s.uid);
    if (!t) return Status{ErrorCode::INTERNAL_ERROR, "uid " + std::to_string(s.uid) + " is not in the graph's copy"};
    t->set_dim({b.dims.begin(), b.dims.begin() + b.rank});
    t->set_stride({b.strides.begin(), b.strides.begin() + b.rank});
  }
  if (Status v = copy.validate(); v.is_bad())
    return Status{ErrorCode::INVALID_VARIANT_PACK,
                  "the graph does not validate at the overridden extents (override every operand an axis spans, "
                  "consistently): " + v.message()};
  for (std::size_t p = 0; p < layout.size() && p < ops.size(); ++p) {
    const OperandBuffer& b = ops[p];
    const DeclaredSlot& s = layout.slot(p);
    const TensorPtr t = copy.tensor_by_uid(s.uid);
    if (!t) return Status{ErrorCode::INTERNAL_ERROR, "uid " + std::to_string(s.uid) + " is not in the graph's copy"};
    const auto& d = t->get_dim();
    const std::int64_t* want = b.overridden ? b.dims.data() : s.dims.data();
    if (static_cast<int>(d.size()) != s.rank || !std::equal(d.begin(), d.end(), want))
      return Status{ErrorCode::INVALID_VARIANT_PACK,
                    operand_label(s) + ": at the overridden extents its extents are " + list(d) + ", not its buffer's (" +
                        (b.overridden ? "its override" : "its declaration") + "); override it to " + list(d)};
  }
  return copy;
}

std::string lowering_difference(const LoweringPlan& built, const LoweringPlan& shaped) {
  if (built.records.size() != shaped.records.size() || built.operations != shaped.operations ||
      built.operation_graph != shaped.operation_graph) {
    std::string first;
    const std::size_t n = std::min(built.records.size(), shaped.records.size());
    for (std::size_t i = 0; i < n && first.empty(); ++i)
      if (built.records[i].type != shaped.records[i].type || built.records[i].label != shaped.records[i].label)
        first = " (the first that differs: " + desc(built.records[i]) + ", now " + desc(shaped.records[i]) + ")";
    return "the lowering at these extents is another operation graph: " + std::to_string(shaped.records.size()) +
           " descriptors and " + std::to_string(shaped.operations.size()) + " operations, the built one " +
           std::to_string(built.records.size()) + " and " + std::to_string(built.operations.size()) + first +
           ": the lowering chose its operations from the declared extents";
  }
  if (built.rank != shaped.rank || built.axis_permutation != shaped.axis_permutation)
    return "the lowering at these extents pads or permutes the tensors' axes otherwise than the built one";
  for (std::size_t i = 0; i < built.records.size(); ++i) {
    const DescriptorRecord& a = built.records[i];
    const DescriptorRecord& b = shaped.records[i];
    if (a.type != b.type || a.label != b.label)
      return desc(b) + " takes the place of " + desc(a) + " in the lowering at these extents";
    const auto fa = fixed_attrs(a), fb = fixed_attrs(b);
    for (std::size_t k = 0; k < std::max(fa.size(), fb.size()); ++k) {
      if (k < fa.size() && k < fb.size() && same_attr(*fa[k], *fb[k])) continue;
      const AttrRecord* which = k < fb.size() ? fb[k] : fa[k];
      return desc(a) + ": attribute " + std::to_string(static_cast<int>(which->name)) +
             " differs at these extents (the lowering computes it from the extents; cuDNN's dynamic shapes change "
             "tensor extents and strides only)";
    }
  }
  if (built.caller_uids != shaped.caller_uids)
    return "the caller's tensors differ at these extents (uids " + list(shaped.caller_uids) + ", built " +
           list(built.caller_uids) + ")";
  if (built.by_value_uids != shaped.by_value_uids)
    return "the by-value scalars differ at these extents (uids " + list(shaped.by_value_uids) + ", built " +
           list(built.by_value_uids) + ")";
  for (std::int64_t uid : built.by_value_uids) {
    const TensorRecord* x = built.tensor(uid);
    const TensorRecord* y = shaped.tensor(uid);
    if (!x || !y || x->scalar_bytes != y->scalar_bytes)
      return "by-value scalar uid " + std::to_string(uid) +
             " has another value at these extents (the lowering computes it from the extents)";
  }
  if (built.scratch.size() != shaped.scratch.size())
    return "the lowering at these extents places " + std::to_string(shaped.scratch.size()) +
           " scratch tensors in the workspace, the built one " + std::to_string(built.scratch.size());
  for (std::size_t i = 0; i < built.scratch.size(); ++i) {
    if (built.scratch[i].uid != shaped.scratch[i].uid)
      return "scratch tensor uid " + std::to_string(shaped.scratch[i].uid) + " takes the place of uid " +
             std::to_string(built.scratch[i].uid) + " at these extents";
    if (built.scratch[i].init != shaped.scratch[i].init)
      return "the constant bytes of scratch tensor uid " + std::to_string(built.scratch[i].uid) +
             " differ at these extents (e.g. ALiBi slopes, one per head: the lowering computes them from the "
             "extents, and the plan uploaded the declared ones)";
  }
  return {};
}

WorkspaceLayout workspace_layout(std::int64_t engine_bytes, const LoweringPlan& lp) {
  WorkspaceLayout w;
  w.scratch_at = (engine_bytes + 255) / 256 * 256;
  w.total = lp.scratch.empty() ? engine_bytes : w.scratch_at + lp.scratch_bytes;
  return w;
}

Status override_declined(const DeclaredLayout& layout, std::span<const OperandBuffer> ops, std::string_view why) {
  std::string who;
  int more = 0;
  for (std::size_t p = 0; p < layout.size() && p < ops.size(); ++p) {
    const OperandBuffer& b = ops[p];
    if (!b.overridden) continue;
    if (!who.empty()) {
      ++more;
      continue;
    }
    who = operand_label(layout.slot(p)) + " to " + int_list(b.dims.data(), b.rank) + " (strides " +
          int_list(b.strides.data(), b.rank) + ")";
  }
  if (who.empty()) who = "(no overridden operand)";
  if (more > 0) who += " (+" + std::to_string(more) + " more overridden)";
  return {ErrorCode::GRAPH_NOT_SUPPORTED, "engine cudnn: execute-time shape override of " + who + " declined: " +
                                              std::string(why) + "; nothing was launched"};
}

}  // namespace opgraph::engines::cudnn
