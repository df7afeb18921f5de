// ir/ops/pointwise.cpp — the pointwise table: one row per PointwiseMode_t value, and
// the ONE "pointwise" record whose validation reads that row.
//
// Rules checked at validate() (in this order, the first failure is returned):
//   1. arity: IN_0..IN_{arity-1} bound (ATTRIBUTE_NOT_SET otherwise), the rest unbound;
//   2. mode-specific attributes: axis only for GEN_INDEX (and required there,
//      ATTRIBUTE_NOT_SET), relu_* only for RELU_FWD/RELU_BWD, swish_beta for SWISH_*,
//      elu_alpha for ELU_*, softplus_beta for SOFTPLUS_*; relu_lower_clip <=
//      relu_upper_clip; softplus_beta > 0;
//   3. types: logical modes take BOOLEAN or integer inputs (an integer is true where it is
//      not zero, as cuDNN reads cudnn-frontend's INT32 masks); BINARY_SELECT's IN_2 is BOOLEAN
//      or an integer type (selects IN_0 where it is not zero, as cuDNN reads an INT32 mask);
//      backward modes take floating dy and x; other modes refuse BOOLEAN data inputs
//      (except IDENTITY, BINARY_SELECT, CMP_EQ, CMP_NEQ);
//   4. shapes: the inputs broadcast together (numpy rules); OUT_0 gets the broadcast,
//      and (unless the user set them) dense strides in the layout order of the first
//      input of OUT_0's dims, as cudnn-frontend's PointwiseNode::infer_properties_node
//      (node/pointwise.h) takes the strides of the first input of the output's dims —
//      so a channels-last conv output keeps its class through bias, scale and relu
//      epilogues (ops/output_layout.h; no such input: the fullest one of OUT_0's rank);
//   5. OUT_0's type: BOOLEAN for comparisons and logical modes, or an integer type the user
//      sets (it holds 1 / 0, as cuDNN writes a comparison into an INT32 mask; a floating
//      type is refused), INT32 for GEN_INDEX unless set (BOOLEAN refused), and a BOOLEAN OUT_0 is
//      refused for arithmetic modes.
#include <cmath>

#include "ir/infer_context.h"
#include "ir/ops/groups.h"
#include "ir/ops/output_layout.h"
#include "opgraph/builders/pointwise.h"

namespace opgraph {
namespace {

using M = PointwiseMode;
constexpr PointwiseTraits kPlain{};
constexpr PointwiseTraits kRelu{.uses_relu_clip = true};
constexpr PointwiseTraits kSwish{.uses_swish_beta = true};
constexpr PointwiseTraits kElu{.uses_elu_alpha = true};
constexpr PointwiseTraits kSoftplus{.uses_softplus_beta = true};
constexpr PointwiseTraits kBwd{.is_backward = true};
constexpr PointwiseTraits kReluBwd{.is_backward = true, .uses_relu_clip = true};
constexpr PointwiseTraits kSwishBwd{.is_backward = true, .uses_swish_beta = true};
constexpr PointwiseTraits kEluBwd{.is_backward = true, .uses_elu_alpha = true};
constexpr PointwiseTraits kSoftplusBwd{.is_backward = true, .uses_softplus_beta = true};
constexpr PointwiseTraits kCmp{.is_comparison = true};
constexpr PointwiseTraits kCmpEq{.is_comparison = true, .accepts_bool = true};
constexpr PointwiseTraits kLogical{.is_logical = true, .accepts_bool = true};
constexpr PointwiseTraits kSelect{.is_select = true, .accepts_bool = true};
constexpr PointwiseTraits kIdentity{.accepts_bool = true};
// MUL takes a BOOLEAN operand as a 0/1 mask (cuDNN does; cudnn-frontend's tests mask with it).
constexpr PointwiseTraits kMul{.accepts_bool = true};
constexpr PointwiseTraits kGenIndex{.accepts_bool = true, .uses_axis = true};

// Row i describes PointwiseMode(i); arity from cudnn's get_pointwise_mode_port_count minus the output.
const PointwiseModeInfo kModes[] = {
    {M::ADD, "ADD", 2, M::ADD, kPlain},
    {M::MUL, "MUL", 2, M::MUL, kMul},
    {M::SQRT, "SQRT", 1, M::SQRT, kPlain},
    {M::MAX, "MAX", 2, M::MAX, kPlain},
    {M::MIN, "MIN", 2, M::MIN, kPlain},
    {M::RELU_FWD, "RELU_FWD", 1, M::RELU_FWD, kRelu},
    {M::TANH_FWD, "TANH_FWD", 1, M::TANH_FWD, kPlain},
    {M::SIGMOID_FWD, "SIGMOID_FWD", 1, M::SIGMOID_FWD, kPlain},
    {M::ELU_FWD, "ELU_FWD", 1, M::ELU_FWD, kElu},
    {M::GELU_FWD, "GELU_FWD", 1, M::GELU_FWD, kPlain},
    {M::SOFTPLUS_FWD, "SOFTPLUS_FWD", 1, M::SOFTPLUS_FWD, kSoftplus},
    {M::SWISH_FWD, "SWISH_FWD", 1, M::SWISH_FWD, kSwish},
    {M::RELU_BWD, "RELU_BWD", 2, M::RELU_FWD, kReluBwd},
    {M::TANH_BWD, "TANH_BWD", 2, M::TANH_FWD, kBwd},
    {M::SIGMOID_BWD, "SIGMOID_BWD", 2, M::SIGMOID_FWD, kBwd},
    {M::ELU_BWD, "ELU_BWD", 2, M::ELU_FWD, kEluBwd},
    {M::GELU_BWD, "GELU_BWD", 2, M::GELU_FWD, kBwd},
    {M::SOFTPLUS_BWD, "SOFTPLUS_BWD", 2, M::SOFTPLUS_FWD, kSoftplusBwd},
    {M::SWISH_BWD, "SWISH_BWD", 2, M::SWISH_FWD, kSwishBwd},
    {M::ERF, "ERF", 1, M::ERF, kPlain},
    {M::IDENTITY, "IDENTITY", 1, M::IDENTITY, kIdentity},
    {M::GELU_APPROX_TANH_BWD, "GELU_APPROX_TANH_BWD", 2, M::GELU_APPROX_TANH_FWD, kBwd},
    {M::GELU_APPROX_TANH_FWD, "GELU_APPROX_TANH_FWD", 1, M::GELU_APPROX_TANH_FWD, kPlain},
    {M::GEN_INDEX, "GEN_INDEX", 1, M::GEN_INDEX, kGenIndex},
    {M::BINARY_SELECT, "BINARY_SELECT", 3, M::BINARY_SELECT, kSelect},
    {M::EXP, "EXP", 1, M::EXP, kPlain},
    {M::LOG, "LOG", 1, M::LOG, kPlain},
    {M::NEG, "NEG", 1, M::NEG, kPlain},
    {M::MOD, "MOD", 2, M::MOD, kPlain},
    {M::POW, "POW", 2, M::POW, kPlain},
    {M::ABS, "ABS", 1, M::ABS, kPlain},
    {M::CEIL, "CEIL", 1, M::CEIL, kPlain},
    {M::COS, "COS", 1, M::COS, kPlain},
    {M::FLOOR, "FLOOR", 1, M::FLOOR, kPlain},
    {M::RSQRT, "RSQRT", 1, M::RSQRT, kPlain},
    {M::SIN, "SIN", 1, M::SIN, kPlain},
    {M::LOGICAL_NOT, "LOGICAL_NOT", 1, M::LOGICAL_NOT, kLogical},
    {M::TAN, "TAN", 1, M::TAN, kPlain},
    {M::SUB, "SUB", 2, M::SUB, kPlain},
    {M::ADD_SQUARE, "ADD_SQUARE", 2, M::ADD_SQUARE, kPlain},
    {M::DIV, "DIV", 2, M::DIV, kPlain},
    {M::CMP_EQ, "CMP_EQ", 2, M::CMP_EQ, kCmpEq},
    {M::CMP_NEQ, "CMP_NEQ", 2, M::CMP_NEQ, kCmpEq},
    {M::CMP_GT, "CMP_GT", 2, M::CMP_GT, kCmp},
    {M::CMP_GE, "CMP_GE", 2, M::CMP_GE, kCmp},
    {M::CMP_LT, "CMP_LT", 2, M::CMP_LT, kCmp},
    {M::CMP_LE, "CMP_LE", 2, M::CMP_LE, kCmp},
    {M::LOGICAL_AND, "LOGICAL_AND", 2, M::LOGICAL_AND, kLogical},
    {M::LOGICAL_OR, "LOGICAL_OR", 2, M::LOGICAL_OR, kLogical},
    {M::RECIPROCAL, "RECIPROCAL", 1, M::RECIPROCAL, kPlain},
};
static_assert(std::size(kModes) == 50, "cudnn-frontend's PointwiseMode_t has 50 modes besides NOT_SET");

constexpr const char* kInPorts[] = {"IN_0", "IN_1", "IN_2"};

std::vector<std::string_view> mode_domain() {
  std::vector<std::string_view> v;
  for (const auto& m : kModes) v.push_back(m.name);
  return v;
}

// Which modes an attribute applies to, for the "applies only to" rule.
struct ModeAttr {
  std::string_view attr;
  bool PointwiseTraits::*applies;
  std::string_view modes;
};
const ModeAttr kModeAttrs[] = {
    {"axis", &PointwiseTraits::uses_axis, "GEN_INDEX"},
    {"relu_lower_clip", &PointwiseTraits::uses_relu_clip, "RELU_FWD, RELU_BWD"},
    {"relu_upper_clip", &PointwiseTraits::uses_relu_clip, "RELU_FWD, RELU_BWD"},
    {"relu_lower_clip_slope", &PointwiseTraits::uses_relu_clip, "RELU_FWD, RELU_BWD"},
    {"swish_beta", &PointwiseTraits::uses_swish_beta, "SWISH_FWD, SWISH_BWD"},
    {"elu_alpha", &PointwiseTraits::uses_elu_alpha, "ELU_FWD, ELU_BWD"},
    {"softplus_beta", &PointwiseTraits::uses_softplus_beta, "SOFTPLUS_FWD, SOFTPLUS_BWD"},
};

std::string type_name(DataType t) { return std::string(to_string(t)); }

Status check_attrs(InferContext& c, const PointwiseModeInfo& m) {
  const Node& n = c.node();
  std::string mode(m.name);
  for (const auto& a : kModeAttrs)
    if (n.attr_is_set(a.attr) && !(m.traits.*a.applies))
      return c.fail_attr(a.attr, "applies only to modes {" + std::string(a.modes) + "}, not " + mode);
  if (m.traits.uses_axis) {
    if (!n.attr_is_set("axis"))
      return {ErrorCode::ATTRIBUTE_NOT_SET, c.fail_attr("axis", "GEN_INDEX needs the axis to index along").message()};
  }
  if (m.traits.uses_relu_clip && n.attr_is_set("relu_upper_clip")) {
    double lo = ops::attr::relu_lower_clip(n), hi = ops::attr::relu_upper_clip(n).value_or(0.0);
    if (!(lo <= hi))
      return c.fail_attr("relu_upper_clip", "must be >= relu_lower_clip (" + std::to_string(lo) + "), got " +
                                                std::to_string(hi));
  }
  if (m.traits.uses_softplus_beta && !(ops::attr::softplus_beta(n) > 0.0))
    return c.fail_attr("softplus_beta", "must be > 0, got " + std::to_string(ops::attr::softplus_beta(n)));
  return Status::ok();
}

Status check_input_types(InferContext& c, const PointwiseModeInfo& m) {
  std::string mode(m.name);
  for (int i = 0; i < m.arity; ++i) {
    const char* p = kInPorts[i];
    DataType t = c.dtype(p);
    bool is_mask = m.traits.is_select && i == 2;
    if (is_mask) {  // BOOLEAN, or an integer read as "not zero" (cuDNN takes an INT32 mask)
      if (t != DataType::BOOLEAN && !is_integral(t))
        return c.fail(p, "BINARY_SELECT's mask must be BOOLEAN or an integer type, got " + std::string(type_name(t)));
    } else if (m.traits.is_logical) {
      if (t != DataType::BOOLEAN && !is_integral(t))
        return c.fail(p, mode + "'s input must be BOOLEAN or an integer type (true where not zero), got " +
                             std::string(type_name(t)));
    } else if (m.traits.is_backward) {
      if (!is_floating(t))
        return c.fail(p, mode + " takes floating (dy, x), got " + type_name(t));
    } else if (t == DataType::BOOLEAN && !m.traits.accepts_bool) {
      return c.fail(p, mode + " is arithmetic and refuses a BOOLEAN input (use a logical mode or cast first)");
    }
  }
  return Status::ok();
}

Status infer_pointwise(InferContext& c) {
  const std::optional<ops::PointwiseMode> pm = ops::Pointwise::mode(c.node());
  const PointwiseModeInfo* m = pm ? find_pointwise_mode(ops::to_string(*pm)) : nullptr;
  if (!m) return c.fail_attr("mode", "unknown mode");  // unreachable: the domain is checked first
  std::string mode(m->name);
  for (int i = 0; i < 3; ++i) {
    bool bound = c.has(kInPorts[i]);
    if (i < m->arity && !bound)
      return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, kInPorts[i],
                         "mode " + mode + " takes " + std::to_string(m->arity) + " input(s); this one is not bound");
    if (i >= m->arity && bound)
      return c.fail(kInPorts[i], "mode " + mode + " takes " + std::to_string(m->arity) +
                                     " input(s); this port must be left unbound");
  }
  OPGRAPH_CHECK(check_attrs(c, *m));
  OPGRAPH_CHECK(check_input_types(c, *m));

  Dims out = c.dims(ops::in::IN_0);
  for (int i = 1; i < m->arity; ++i) {
    auto b = InferContext::broadcast(out, c.dims(kInPorts[i]));
    if (!b)
      return c.fail(kInPorts[i], "dims " + InferContext::dims_str(c.dims(kInPorts[i])) +
                                     " do not broadcast with the other inputs' " + InferContext::dims_str(out) +
                                     " (numpy rules: right-aligned, equal or 1)");
    out = *b;
  }
  if (m->traits.uses_axis) {
    std::int64_t axis = ops::Pointwise::axis(c.node()).value_or(0), rank = static_cast<std::int64_t>(out.size());
    if (axis < -rank || axis >= rank)
      return c.fail_attr("axis", "must be in [" + std::to_string(-rank) + ", " + std::to_string(rank) +
                                     ") for the rank-" + std::to_string(rank) + " output, got " + std::to_string(axis));
  }

  TensorPtr o = c.out(ops::out::OUT_0);
  DataType out_type = DataType::NOT_SET;
  bool user_typed = o && o->data_type_set_by_user();
  DataType user_type = o ? o->get_data_type() : DataType::NOT_SET;
  if (m->traits.is_comparison || m->traits.is_logical) {
    if (user_typed && user_type != DataType::BOOLEAN && !is_integral(user_type))
      return c.fail(ops::out::OUT_0, mode + " yields BOOLEAN (or 1 / 0 in an integer type); the output is declared " +
                                         type_name(user_type));
    out_type = user_typed ? user_type : DataType::BOOLEAN;
  } else if (m->traits.uses_axis) {
    if (user_typed && user_type == DataType::BOOLEAN)
      return c.fail(ops::out::OUT_0, "GEN_INDEX yields indices; a BOOLEAN output cannot hold them");
    out_type = DataType::INT32;
  } else if (user_typed && user_type == DataType::BOOLEAN && !m->traits.accepts_bool) {
    return c.fail(ops::out::OUT_0, mode + " is arithmetic; its output cannot be BOOLEAN");
  } else if (m->traits.accepts_bool && c.dtype(ops::in::IN_0) == DataType::BOOLEAN &&
             (m->mode == PointwiseMode::IDENTITY ||
              (m->mode == PointwiseMode::BINARY_SELECT && c.dtype(ops::in::IN_1) == DataType::BOOLEAN))) {
    out_type = DataType::BOOLEAN;  // a boolean passes through as a boolean unless the user casts
  }
  OPGRAPH_CHECK(c.set_output(ops::out::OUT_0, out, out_type));
  ops::follow_layout(c, "OUT_0", ops::elementwise_reference(c, out, {"IN_0", "IN_1", "IN_2"}));
  return Status::ok();
}

const OpSpec kSpecs[] = {
    {.name = "pointwise",
     .mechanism = OpMechanism::POINTWISE,
     .inputs = {{"IN_0"}, {"IN_1", true}, {"IN_2", true}},
     .outputs = {{"OUT_0"}},
     .attrs = {{"mode", AttrType::ENUM, std::nullopt, true, mode_domain()},
               {"axis", AttrType::INT},
               {"relu_lower_clip", AttrType::FLOAT, AttrValue{0.0}},
               {"relu_upper_clip", AttrType::FLOAT},
               {"relu_lower_clip_slope", AttrType::FLOAT, AttrValue{0.0}},
               {"swish_beta", AttrType::FLOAT, AttrValue{1.0}},
               {"elu_alpha", AttrType::FLOAT, AttrValue{1.0}},
               {"softplus_beta", AttrType::FLOAT, AttrValue{1.0}}},
     .infer = infer_pointwise,
     .summary = "elementwise op of one of cudnn's 50 pointwise modes, with numpy broadcasting"},
};

}  // namespace

std::span<const PointwiseModeInfo> pointwise_modes() { return kModes; }

const PointwiseModeInfo& pointwise_mode_info(PointwiseMode m) { return kModes[static_cast<std::size_t>(m)]; }

const PointwiseModeInfo* find_pointwise_mode(std::string_view name) {
  for (const auto& m : kModes)
    if (m.name == name) return &m;
  return nullptr;
}

namespace ops {
std::span<const OpSpec> pointwise_specs() { return kSpecs; }
}  // namespace ops

}  // namespace opgraph
