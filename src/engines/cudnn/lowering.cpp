// engines/cudnn/lowering.cpp — lower(): matmul, pointwise (all 50 modes with
// their parameters), reduction, the channels-last decision and the operation
// graph. The Lowerer's helpers live in lowering_lowerer.cpp; the norms in
// lowering_norm.cpp / lowering_bn.cpp, convolutions in lowering_conv.cpp, the
// tensor ops in lowering_tensor_ops.cpp, attention in lowering_sdpa*.cpp. No cuDNN call happens here (see lowering.h).
#include "engines/cudnn/lowering.h"

#include <algorithm>
#include <stdexcept>

#include "engines/cudnn/lowering_internal.h"
#include "exec/declared_layout.h"
#include "ir/ops/matmul_common.h"

namespace opgraph::engines::cudnn {
namespace {

using detail::Lowerer;

struct PwRow {
  ops::PointwiseMode name;
  cudnnPointwiseMode_t mode;
};
// Our PointwiseMode values (cudnn-frontend's names) → cuDNN's enum.
const PwRow kPointwise[] = {
    {ops::PointwiseMode::ADD, CUDNN_POINTWISE_ADD},
    {ops::PointwiseMode::MUL, CUDNN_POINTWISE_MUL},
    {ops::PointwiseMode::SQRT, CUDNN_POINTWISE_SQRT},
    {ops::PointwiseMode::MAX, CUDNN_POINTWISE_MAX},
    {ops::PointwiseMode::MIN, CUDNN_POINTWISE_MIN},
    {ops::PointwiseMode::RELU_FWD, CUDNN_POINTWISE_RELU_FWD},
    {ops::PointwiseMode::TANH_FWD, CUDNN_POINTWISE_TANH_FWD},
    {ops::PointwiseMode::SIGMOID_FWD, CUDNN_POINTWISE_SIGMOID_FWD},
    {ops::PointwiseMode::ELU_FWD, CUDNN_POINTWISE_ELU_FWD},
    {ops::PointwiseMode::GELU_FWD, CUDNN_POINTWISE_GELU_FWD},
    {ops::PointwiseMode::SOFTPLUS_FWD, CUDNN_POINTWISE_SOFTPLUS_FWD},
    {ops::PointwiseMode::SWISH_FWD, CUDNN_POINTWISE_SWISH_FWD},
    {ops::PointwiseMode::RELU_BWD, CUDNN_POINTWISE_RELU_BWD},
    {ops::PointwiseMode::TANH_BWD, CUDNN_POINTWISE_TANH_BWD},
    {ops::PointwiseMode::SIGMOID_BWD, CUDNN_POINTWISE_SIGMOID_BWD},
    {ops::PointwiseMode::ELU_BWD, CUDNN_POINTWISE_ELU_BWD},
    {ops::PointwiseMode::GELU_BWD, CUDNN_POINTWISE_GELU_BWD},
    {ops::PointwiseMode::SOFTPLUS_BWD, CUDNN_POINTWISE_SOFTPLUS_BWD},
    {ops::PointwiseMode::SWISH_BWD, CUDNN_POINTWISE_SWISH_BWD},
    {ops::PointwiseMode::ERF, CUDNN_POINTWISE_ERF},
    {ops::PointwiseMode::IDENTITY, CUDNN_POINTWISE_IDENTITY},
    {ops::PointwiseMode::GELU_APPROX_TANH_BWD, CUDNN_POINTWISE_GELU_APPROX_TANH_BWD},
    {ops::PointwiseMode::GELU_APPROX_TANH_FWD, CUDNN_POINTWISE_GELU_APPROX_TANH_FWD},
    {ops::PointwiseMode::GEN_INDEX, CUDNN_POINTWISE_GEN_INDEX},
    {ops::PointwiseMode::BINARY_SELECT, CUDNN_POINTWISE_BINARY_SELECT},
    {ops::PointwiseMode::EXP, CUDNN_POINTWISE_EXP},
    {ops::PointwiseMode::LOG, CUDNN_POINTWISE_LOG},
    {ops::PointwiseMode::NEG, CUDNN_POINTWISE_NEG},
    {ops::PointwiseMode::MOD, CUDNN_POINTWISE_MOD},
    {ops::PointwiseMode::POW, CUDNN_POINTWISE_POW},
    {ops::PointwiseMode::ABS, CUDNN_POINTWISE_ABS},
    {ops::PointwiseMode::CEIL, CUDNN_POINTWISE_CEIL},
    {ops::PointwiseMode::COS, CUDNN_POINTWISE_COS},
    {ops::PointwiseMode::FLOOR, CUDNN_POINTWISE_FLOOR},
    {ops::PointwiseMode::RSQRT, CUDNN_POINTWISE_RSQRT},
    {ops::PointwiseMode::SIN, CUDNN_POINTWISE_SIN},
    {ops::PointwiseMode::LOGICAL_NOT, CUDNN_POINTWISE_LOGICAL_NOT},
    {ops::PointwiseMode::TAN, CUDNN_POINTWISE_TAN},
    {ops::PointwiseMode::SUB, CUDNN_POINTWISE_SUB},
    {ops::PointwiseMode::ADD_SQUARE, CUDNN_POINTWISE_ADD_SQUARE},
    {ops::PointwiseMode::DIV, CUDNN_POINTWISE_DIV},
    {ops::PointwiseMode::CMP_EQ, CUDNN_POINTWISE_CMP_EQ},
    {ops::PointwiseMode::CMP_NEQ, CUDNN_POINTWISE_CMP_NEQ},
    {ops::PointwiseMode::CMP_GT, CUDNN_POINTWISE_CMP_GT},
    {ops::PointwiseMode::CMP_GE, CUDNN_POINTWISE_CMP_GE},
    {ops::PointwiseMode::CMP_LT, CUDNN_POINTWISE_CMP_LT},
    {ops::PointwiseMode::CMP_LE, CUDNN_POINTWISE_CMP_LE},
    {ops::PointwiseMode::LOGICAL_AND, CUDNN_POINTWISE_LOGICAL_AND},
    {ops::PointwiseMode::LOGICAL_OR, CUDNN_POINTWISE_LOGICAL_OR},
    {ops::PointwiseMode::RECIPROCAL, CUDNN_POINTWISE_RECIPROCAL},
};

using RM = ops::ReductionMode;
constexpr RM kReductionNames[] = {RM::ADD, RM::MUL, RM::MIN, RM::MAX, RM::AMAX, RM::AVG, RM::NORM1, RM::NORM2, RM::MUL_NO_ZEROS};
constexpr cudnnReduceTensorOp_t kReductionOps[] = {
    CUDNN_REDUCE_TENSOR_ADD, CUDNN_REDUCE_TENSOR_MUL,   CUDNN_REDUCE_TENSOR_MIN,   CUDNN_REDUCE_TENSOR_MAX,
    CUDNN_REDUCE_TENSOR_AMAX, CUDNN_REDUCE_TENSOR_AVG, CUDNN_REDUCE_TENSOR_NORM1, CUDNN_REDUCE_TENSOR_NORM2,
    CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS};

bool is_backward_mode(std::string_view m) { return m.size() > 4 && m.substr(m.size() - 4) == "_BWD"; }

// True when every stride of an axis longer than 1 is the row-major packed one.
bool row_major_packed(const Tensor& t) {
  const auto& d = t.get_dim();
  const auto s = t.get_stride().size() == d.size() ? t.get_stride() : Tensor::packed_strides(d);
  std::int64_t expect = 1;
  for (std::size_t k = d.size(); k-- > 0;) {
    if (d[k] == 1) continue;
    if (s[k] != expect) return false;
    expect *= d[k];
  }
  return true;
}

// Only pointwise operations without an axis, and every tensor row-major packed (see lowering.h).
bool nchw_pointwise_graph(const OpGraph& g) {
  for (const auto& n : g.nodes())
    if (op_index(n->spec()) != ops::Pointwise::kIndex || n->attr_is_set("axis")) return false;
  for (const auto& t : g.tensors())
    if (!row_major_packed(*t)) return false;
  return true;
}

// cuDNN reads a GEMM override descriptor as a tensor broadcast over C's batch axes: C's rank
// (leading unit axes added, as every tensor of the plan), unit M and N axes, each batch axis 1
// or C's. The IR also admits one element per batch entry in any shape ([b * h] for a [b, h]
// batch), which cuDNN would read another way: such an override declines here.
Status check_override_form(const Node& n, ops::Matmul::In port) {
  const TensorPtr o = n.input(port), c = n.output(ops::Matmul::Out::C);
  if (!o || !c) return Status::ok();
  const std::vector<std::int64_t>& od = o->get_dim();
  const std::vector<std::int64_t>& cd = c->get_dim();
  if (od.size() <= cd.size() && cd.size() >= 2) {
    std::vector<std::int64_t> padded(cd.size() - od.size(), 1);  // leading unit axes, as cuDNN pads
    padded.insert(padded.end(), od.begin(), od.end());
    if (ops::override_broadcasts(padded, std::vector<std::int64_t>(cd.begin(), cd.end() - 2))) return Status::ok();
  }
  return Lowerer::decline(n, std::string(ops::name(port)) + " '" + o->get_name() + "' " + int_list(od.data(), static_cast<int>(od.size())) +
                                 " holds one extent per batch entry in a shape cuDNN does not read so: cuDNN takes an "
                                 "override of C's rank with unit M and N axes and each batch axis 1 or C's " +
                                 int_list(cd.data(), static_cast<int>(cd.size())));
}

Status lower_matmul(Lowerer& l, const Node& n) {
  for (auto port : {ops::Matmul::In::M_override, ops::Matmul::In::N_override, ops::Matmul::In::K_override})
    OPGRAPH_CHECK(check_override_form(n, port));
  int desc = l.add(CUDNN_BACKEND_MATMUL_DESCRIPTOR, Lowerer::node_label(n) + " matmul descriptor", "matmul");
  l.set_int(desc, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, l.compute_type(n));
  if (n.attr_is_set("padding"))
    l.set_real(desc, CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, ops::Matmul::padding(n));
  int op = l.add(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, Lowerer::node_label(n), "matmul");
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, n, ops::Matmul::In::A));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, n, ops::Matmul::In::B));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, n, ops::Matmul::Out::C));
  l.set_refs(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, {desc});
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, n, ops::Matmul::In::M_override));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, n, ops::Matmul::In::N_override));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, n, ops::Matmul::In::K_override));
  l.plan().operations.push_back(op);
  return Status::ok();
}

Status lower_pointwise(Lowerer& l, const Node& n) {
  const std::optional<ops::PointwiseMode> m = ops::Pointwise::mode(n);
  if (!m) return Lowerer::decline(n, "pointwise node without a mode");
  const std::string_view mode = ops::to_string(*m);
  auto row = std::find_if(std::begin(kPointwise), std::end(kPointwise), [&](const PwRow& r) { return r.name == *m; });
  if (row == std::end(kPointwise))
    return Lowerer::decline(n, "pointwise mode '" + std::string(mode) + "' has no cuDNN mode");
  std::int64_t prec = l.compute_type(n);
  // Parameters travel as FLOAT unless the math precision is DOUBLE (cuDNN's rule).
  auto real_type = prec == CUDNN_DATA_DOUBLE ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  int desc = l.add(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, Lowerer::node_label(n) + " pointwise descriptor", "pointwise");
  l.set_int(desc, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, row->mode);
  l.set_int(desc, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, prec);
  const std::pair<std::string_view, cudnnBackendAttributeName_t> params[] = {
      {"relu_lower_clip", CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP},
      {"relu_upper_clip", CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP},
      {"relu_lower_clip_slope", CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE},
      {"swish_beta", CUDNN_ATTR_POINTWISE_SWISH_BETA},
      {"elu_alpha", CUDNN_ATTR_POINTWISE_ELU_ALPHA},
      {"softplus_beta", CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA}};
  for (const auto& [key, attr] : params)
    if (n.attr_is_set(key)) l.set_real(desc, attr, real_type, n.get_float(key));
  if (n.attr_is_set("axis")) {
    // The IR's axis counts in the tensor's own rank; the plan pads leading axes.
    auto out = n.output(ops::Pointwise::Out::OUT_0);
    std::int64_t axis = ops::Pointwise::axis(n).value_or(0) + (l.plan().rank - (out ? out->rank() : l.plan().rank));
    l.set_int(desc, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
  }
  int op = l.add(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, Lowerer::node_label(n), "pointwise");
  l.set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, {desc});
  if (is_backward_mode(mode)) {  // (dy, x) -> dx
    OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, n, ops::Pointwise::In::IN_0));
    OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, n, ops::Pointwise::In::IN_1));
    OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, n, ops::Pointwise::Out::OUT_0));
  } else {
    OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, n, ops::Pointwise::In::IN_0));
    OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, n, ops::Pointwise::In::IN_1));
    OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, n, ops::Pointwise::In::IN_2));
    OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, n, ops::Pointwise::Out::OUT_0));
  }
  l.plan().operations.push_back(op);
  return Status::ok();
}

Status lower_reduction(Lowerer& l, const Node& n) {
  const std::optional<RM> mode = ops::Reduction::mode(n);
  if (!mode) return Lowerer::decline(n, "reduction node without a mode");
  auto it = std::find(std::begin(kReductionNames), std::end(kReductionNames), *mode);
  if (it == std::end(kReductionNames))
    return Lowerer::decline(n, "reduction mode '" + std::string(ops::to_string(*mode)) + "' has no cuDNN operator");
  int desc = l.add(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, Lowerer::node_label(n) + " reduction descriptor", "reduction");
  l.set_int(desc, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE,
            kReductionOps[it - std::begin(kReductionNames)]);
  l.set_int(desc, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, l.compute_type(n));
  if (ops::attr::is_deterministic(n))
    l.set_int(desc, CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, CUDNN_TYPE_BOOLEAN, 1);
  int op = l.add(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, Lowerer::node_label(n), "reduction");
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, n, ops::Reduction::In::X));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, n, ops::Reduction::Out::Y));
  l.set_refs(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, {desc});
  l.plan().operations.push_back(op);
  return Status::ok();
}

constexpr std::string_view kNotLoweredYet = "not lowered to the cuDNN backend yet";

// This file's registrations, and the backend-lowerable ops without a cuDNN operation.
const detail::LoweringRecord kCore[] = {
    {ops::Matmul::kIndex, lower_matmul, {}},
    {ops::Pointwise::kIndex, lower_pointwise, {}},
    {ops::Reduction::kIndex, lower_reduction, {}},
    {ops::MoeGroupedMatmulBwd::kIndex, nullptr, kNotLoweredYet},
    {ops::Slice::kIndex, nullptr, kNotLoweredYet},
    {ops::DiagonalBandMask::kIndex, nullptr, kNotLoweredYet},
    {ops::Rope::kIndex, nullptr, kNotLoweredYet},
    {ops::RopeBackward::kIndex, nullptr, kNotLoweredYet},
};

}  // namespace

std::span<const detail::LoweringRecord> detail::core_lowerings() { return kCore; }

const AttrRecord* DescriptorRecord::find(cudnnBackendAttributeName_t name) const {
  for (const auto& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

const TensorRecord* LoweringPlan::tensor(std::int64_t uid) const {
  for (const auto& t : tensors)
    if (t.uid == uid) return &t;
  return nullptr;
}

int to_cudnn_data_type(DataType t) noexcept {
  switch (t) {
    case DataType::FLOAT: return CUDNN_DATA_FLOAT;
    case DataType::DOUBLE: return CUDNN_DATA_DOUBLE;
    case DataType::HALF: return CUDNN_DATA_HALF;
    case DataType::BFLOAT16: return CUDNN_DATA_BFLOAT16;
    case DataType::INT8: return CUDNN_DATA_INT8;
    case DataType::UINT8: return CUDNN_DATA_UINT8;
    case DataType::INT32: return CUDNN_DATA_INT32;
    case DataType::INT64: return CUDNN_DATA_INT64;
    case DataType::BOOLEAN: return CUDNN_DATA_BOOLEAN;
    case DataType::FP8_E4M3: return CUDNN_DATA_FP8_E4M3;
    case DataType::FP8_E5M2: return CUDNN_DATA_FP8_E5M2;
    case DataType::FP8_E8M0: return CUDNN_DATA_FP8_E8M0;
    case DataType::FP4_E2M1: return CUDNN_DATA_FP4_E2M1;
    case DataType::NOT_SET: break;
  }
  return -1;
}

std::string LoweringPlan::operations_summary() const {
  std::string out;
  std::size_t shown = 0;
  for (int op : operations) {
    const std::string& label = records[static_cast<std::size_t>(op)].label;
    const std::string node = label.substr(0, label.find(')') + 1);  // "op 'x' (node 'n')"
    if (out.find(node) != std::string::npos) continue;             // a composite's operations share it
    if (shown == 3) return out + ", +more";
    out += (out.empty() ? "" : ", ") + node;
    ++shown;
  }
  return out;
}

std::string cudnn_version_string(std::int64_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

namespace detail {

const LoweringRecord* find_lowering(const OpSpec& op) {
  static const std::vector<const LoweringRecord*> kByRecord = [] {
    using Table = std::span<const LoweringRecord> (*)();
    static constexpr Table kTables[] = {core_lowerings, norm_lowerings, bn_lowerings, conv_lowerings,
                                        tensor_op_lowerings, sdpa_lowerings};
    std::vector<const LoweringRecord*> v(all_op_specs().size(), nullptr);
    for (Table table : kTables)
      for (const LoweringRecord& r : table()) {
        if (r.op >= v.size()) throw std::logic_error("cudnn lowering registered for an op index outside the registry");
        if (v[r.op]) throw std::logic_error("op '" + std::string(all_op_specs()[r.op]->name) + "' has two cudnn lowerings");
        v[r.op] = &r;
      }
    return v;
  }();
  return kByRecord[op_index(op)];
}

}  // namespace detail

const std::vector<std::string>& lowered_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const OpSpec* s : all_op_specs())
      if (const detail::LoweringRecord* r = detail::find_lowering(*s); r && r->fn) v.emplace_back(s->name);
    return v;
  }();
  return ops;
}

Result<LoweringPlan> lower(const OpGraph& g, const LoweringOptions& options) {
  LoweringPlan plan;
  if (g.nodes().empty()) return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "cudnn lowering: the graph has no node"};
  if (options.dynamic_shapes && options.cudnn_version < kDynamicShapesMinVersion)
    return Status{ErrorCode::GRAPH_NOT_SUPPORTED,
                  "cudnn lowering: dynamic shapes (CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED and the kernel "
                  "cache) need cuDNN >= " + cudnn_version_string(kDynamicShapesMinVersion) + "; the loaded one is " +
                      (options.cudnn_version > 0 ? cudnn_version_string(options.cudnn_version) : std::string("unknown"))};
  // Refuse first (cheap and names the op), then size the common rank.
  const Node* first_conv = nullptr;
  for (const auto& n : g.nodes()) {
    if (!n->spec().backend_lowerable)
      return Lowerer::decline(*n, "engine-only op: cuDNN has no operation for it");
    const detail::LoweringRecord* r = detail::find_lowering(n->spec());
    if (!r || !r->fn) return Lowerer::decline(*n, std::string(r ? r->missing : kNotLoweredYet));
    if (detail::is_conv(n->spec())) {
      if (first_conv)
        return Lowerer::decline(*n, "cuDNN's engines take one convolution per operation graph (" +
                                        Lowerer::node_label(*first_conv) + " is the first): build one graph each");
      first_conv = n.get();
    }
  }
  int rank = kMinRank;
  for (const auto& t : g.tensors()) rank = std::max<int>(rank, static_cast<int>(t->rank()));
  plan.rank = rank;
  if (rank >= 4 && nchw_pointwise_graph(g)) {
    plan.axis_permutation = {0, rank - 1};
    for (int a = 1; a < rank - 1; ++a) plan.axis_permutation.push_back(a);
  }
  Lowerer l(g, plan, options);
  for (const auto& n : g.nodes()) {
    // The node's tensors first: every reference points at an earlier record.
    for (const auto* side : {&n->inputs(), &n->outputs()})
      for (const auto& port : *side)
        for (const auto& t : port)
          if (t) {
            auto r = l.tensor(t);
            if (r.is_bad()) return r.status();
          }
    OPGRAPH_CHECK(detail::find_lowering(n->spec())->fn(l, *n));
  }
  int og = l.add(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph '" + g.context().name + "'");
  l.set_refs(og, CUDNN_ATTR_OPERATIONGRAPH_OPS, plan.operations);
  if (options.dynamic_shapes) l.set_int(og, CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED, CUDNN_TYPE_BOOLEAN, 1);
  plan.operation_graph = og;
  for (const auto& t : plan.tensors) {
    bool scratch = std::any_of(plan.scratch.begin(), plan.scratch.end(),
                               [&](const ScratchTensor& s) { return s.uid == t.uid; });
    if (t.by_value) plan.by_value_uids.push_back(t.uid);
    else if (!t.is_virtual && !scratch) plan.caller_uids.push_back(t.uid);
  }
  std::sort(plan.caller_uids.begin(), plan.caller_uids.end());
  std::sort(plan.by_value_uids.begin(), plan.by_value_uids.end());
  return plan;
}

}  // namespace opgraph::engines::cudnn
