// ir/ops/pointwise_builders.cpp — the 54 pointwise builder names: one-line member
// functions and the table that lists them (pointwise_builder_table()).
//
// Every builder forwards to pointwise_node(mode, ...), which sets `mode` on a copy of
// the caller's attributes and adds a "pointwise" node; validation lives in pointwise.cpp.
#include "opgraph/builders/pointwise.h"

namespace opgraph {

TensorPtr PointwiseBuilders::pointwise_node(PointwiseMode m, TensorPtr in0, TensorPtr in1, TensorPtr in2,
                                            const Attributes& attrs) {
  Attributes a = attrs;
  a.set("mode", AttrValue{std::string(pointwise_mode_info(m).name)});
  return add_node1("pointwise", {{"IN_0", std::move(in0)}, {"IN_1", std::move(in1)}, {"IN_2", std::move(in2)}}, a);
}

TensorPtr PointwiseBuilders::pointwise(TensorPtr in0, TensorPtr in1, TensorPtr in2, const Attributes& attrs) {
  return add_node1("pointwise", {{"IN_0", std::move(in0)}, {"IN_1", std::move(in1)}, {"IN_2", std::move(in2)}}, attrs);
}

TensorPtr PointwiseBuilders::add(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::ADD, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::sub(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::SUB, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::mul(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::MUL, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::div(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::DIV, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::add_square(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::ADD_SQUARE, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::max(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::MAX, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::min(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::MIN, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::mod(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::MOD, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::pow(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::POW, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::cmp_eq(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::CMP_EQ, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::cmp_neq(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::CMP_NEQ, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::cmp_gt(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::CMP_GT, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::cmp_ge(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::CMP_GE, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::cmp_lt(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::CMP_LT, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::cmp_le(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::CMP_LE, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::logical_and(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::LOGICAL_AND, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::logical_or(TensorPtr a, TensorPtr b, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::LOGICAL_OR, std::move(a), std::move(b), nullptr, attrs);
}
TensorPtr PointwiseBuilders::bias(TensorPtr input, TensorPtr bias, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::ADD, std::move(input), std::move(bias), nullptr, attrs);
}
TensorPtr PointwiseBuilders::scale(TensorPtr input, TensorPtr scale, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::MUL, std::move(input), std::move(scale), nullptr, attrs);
}
TensorPtr PointwiseBuilders::sqrt(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::SQRT, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::relu(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::RELU_FWD, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::tanh(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::TANH_FWD, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::sigmoid(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::SIGMOID_FWD, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::elu(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::ELU_FWD, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::gelu(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::GELU_FWD, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::gelu_approx_tanh(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::GELU_APPROX_TANH_FWD, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::softplus(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::SOFTPLUS_FWD, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::swish(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::SWISH_FWD, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::erf(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::ERF, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::identity(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::IDENTITY, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::exp(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::EXP, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::log(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::LOG, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::neg(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::NEG, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::abs(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::ABS, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::ceil(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::CEIL, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::floor(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::FLOOR, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::cos(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::COS, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::sin(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::SIN, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::tan(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::TAN, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::rsqrt(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::RSQRT, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::reciprocal(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::RECIPROCAL, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::logical_not(TensorPtr x, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::LOGICAL_NOT, std::move(x), nullptr, nullptr, attrs);
}
TensorPtr PointwiseBuilders::gen_index(TensorPtr x, std::int64_t axis, const Attributes& attrs) {
  Attributes a = attrs;
  a.set("axis", axis);
  return pointwise_node(PointwiseMode::GEN_INDEX, std::move(x), nullptr, nullptr, a);
}
TensorPtr PointwiseBuilders::leaky_relu(TensorPtr x, double negative_slope, const Attributes& attrs) {
  Attributes a = attrs;
  a.set("relu_lower_clip_slope", negative_slope);
  return pointwise_node(PointwiseMode::RELU_FWD, std::move(x), nullptr, nullptr, a);
}
TensorPtr PointwiseBuilders::relu_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::RELU_BWD, std::move(loss), std::move(input), nullptr, attrs);
}
TensorPtr PointwiseBuilders::tanh_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::TANH_BWD, std::move(loss), std::move(input), nullptr, attrs);
}
TensorPtr PointwiseBuilders::sigmoid_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::SIGMOID_BWD, std::move(loss), std::move(input), nullptr, attrs);
}
TensorPtr PointwiseBuilders::elu_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::ELU_BWD, std::move(loss), std::move(input), nullptr, attrs);
}
TensorPtr PointwiseBuilders::gelu_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::GELU_BWD, std::move(loss), std::move(input), nullptr, attrs);
}
TensorPtr PointwiseBuilders::gelu_approx_tanh_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::GELU_APPROX_TANH_BWD, std::move(loss), std::move(input), nullptr, attrs);
}
TensorPtr PointwiseBuilders::softplus_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::SOFTPLUS_BWD, std::move(loss), std::move(input), nullptr, attrs);
}
TensorPtr PointwiseBuilders::swish_backward(TensorPtr loss, TensorPtr input, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::SWISH_BWD, std::move(loss), std::move(input), nullptr, attrs);
}
TensorPtr PointwiseBuilders::leaky_relu_backward(TensorPtr loss, TensorPtr input, double negative_slope,
                                                 const Attributes& attrs) {
  Attributes a = attrs;
  a.set("relu_lower_clip_slope", negative_slope);
  return pointwise_node(PointwiseMode::RELU_BWD, std::move(loss), std::move(input), nullptr, a);
}
TensorPtr PointwiseBuilders::binary_select(TensorPtr input0, TensorPtr input1, TensorPtr mask, const Attributes& attrs) {
  return pointwise_node(PointwiseMode::BINARY_SELECT, std::move(input0), std::move(input1), std::move(mask), attrs);
}

namespace {

using In = std::vector<TensorPtr>;
using G = PointwiseBuilders;
using A = Attributes;

// Alphabetical; the lambdas call the member of the same name.
const PointwiseBuilderEntry kBuilders[] = {
    {"abs", PointwiseMode::ABS, [](G& g, const In& i, const A& a) { return g.abs(i[0], a); }},
    {"add", PointwiseMode::ADD, [](G& g, const In& i, const A& a) { return g.add(i[0], i[1], a); }},
    {"add_square", PointwiseMode::ADD_SQUARE, [](G& g, const In& i, const A& a) { return g.add_square(i[0], i[1], a); }},
    {"bias", PointwiseMode::ADD, [](G& g, const In& i, const A& a) { return g.bias(i[0], i[1], a); }},
    {"binary_select", PointwiseMode::BINARY_SELECT, [](G& g, const In& i, const A& a) { return g.binary_select(i[0], i[1], i[2], a); }},
    {"ceil", PointwiseMode::CEIL, [](G& g, const In& i, const A& a) { return g.ceil(i[0], a); }},
    {"cmp_eq", PointwiseMode::CMP_EQ, [](G& g, const In& i, const A& a) { return g.cmp_eq(i[0], i[1], a); }},
    {"cmp_ge", PointwiseMode::CMP_GE, [](G& g, const In& i, const A& a) { return g.cmp_ge(i[0], i[1], a); }},
    {"cmp_gt", PointwiseMode::CMP_GT, [](G& g, const In& i, const A& a) { return g.cmp_gt(i[0], i[1], a); }},
    {"cmp_le", PointwiseMode::CMP_LE, [](G& g, const In& i, const A& a) { return g.cmp_le(i[0], i[1], a); }},
    {"cmp_lt", PointwiseMode::CMP_LT, [](G& g, const In& i, const A& a) { return g.cmp_lt(i[0], i[1], a); }},
    {"cmp_neq", PointwiseMode::CMP_NEQ, [](G& g, const In& i, const A& a) { return g.cmp_neq(i[0], i[1], a); }},
    {"cos", PointwiseMode::COS, [](G& g, const In& i, const A& a) { return g.cos(i[0], a); }},
    {"div", PointwiseMode::DIV, [](G& g, const In& i, const A& a) { return g.div(i[0], i[1], a); }},
    {"elu", PointwiseMode::ELU_FWD, [](G& g, const In& i, const A& a) { return g.elu(i[0], a); }},
    {"elu_backward", PointwiseMode::ELU_BWD, [](G& g, const In& i, const A& a) { return g.elu_backward(i[0], i[1], a); }},
    {"erf", PointwiseMode::ERF, [](G& g, const In& i, const A& a) { return g.erf(i[0], a); }},
    {"exp", PointwiseMode::EXP, [](G& g, const In& i, const A& a) { return g.exp(i[0], a); }},
    {"floor", PointwiseMode::FLOOR, [](G& g, const In& i, const A& a) { return g.floor(i[0], a); }},
    {"gelu", PointwiseMode::GELU_FWD, [](G& g, const In& i, const A& a) { return g.gelu(i[0], a); }},
    {"gelu_approx_tanh", PointwiseMode::GELU_APPROX_TANH_FWD, [](G& g, const In& i, const A& a) { return g.gelu_approx_tanh(i[0], a); }},
    {"gelu_approx_tanh_backward", PointwiseMode::GELU_APPROX_TANH_BWD, [](G& g, const In& i, const A& a) { return g.gelu_approx_tanh_backward(i[0], i[1], a); }},
    {"gelu_backward", PointwiseMode::GELU_BWD, [](G& g, const In& i, const A& a) { return g.gelu_backward(i[0], i[1], a); }},
    {"gen_index", PointwiseMode::GEN_INDEX, [](G& g, const In& i, const A& a) { return g.gen_index(i[0], 0, a); }},
    {"identity", PointwiseMode::IDENTITY, [](G& g, const In& i, const A& a) { return g.identity(i[0], a); }},
    {"leaky_relu", PointwiseMode::RELU_FWD, [](G& g, const In& i, const A& a) { return g.leaky_relu(i[0], 0.01, a); }},
    {"leaky_relu_backward", PointwiseMode::RELU_BWD, [](G& g, const In& i, const A& a) { return g.leaky_relu_backward(i[0], i[1], 0.01, a); }},
    {"log", PointwiseMode::LOG, [](G& g, const In& i, const A& a) { return g.log(i[0], a); }},
    {"logical_and", PointwiseMode::LOGICAL_AND, [](G& g, const In& i, const A& a) { return g.logical_and(i[0], i[1], a); }},
    {"logical_not", PointwiseMode::LOGICAL_NOT, [](G& g, const In& i, const A& a) { return g.logical_not(i[0], a); }},
    {"logical_or", PointwiseMode::LOGICAL_OR, [](G& g, const In& i, const A& a) { return g.logical_or(i[0], i[1], a); }},
    {"max", PointwiseMode::MAX, [](G& g, const In& i, const A& a) { return g.max(i[0], i[1], a); }},
    {"min", PointwiseMode::MIN, [](G& g, const In& i, const A& a) { return g.min(i[0], i[1], a); }},
    {"mod", PointwiseMode::MOD, [](G& g, const In& i, const A& a) { return g.mod(i[0], i[1], a); }},
    {"mul", PointwiseMode::MUL, [](G& g, const In& i, const A& a) { return g.mul(i[0], i[1], a); }},
    {"neg", PointwiseMode::NEG, [](G& g, const In& i, const A& a) { return g.neg(i[0], a); }},
    {"pow", PointwiseMode::POW, [](G& g, const In& i, const A& a) { return g.pow(i[0], i[1], a); }},
    {"reciprocal", PointwiseMode::RECIPROCAL, [](G& g, const In& i, const A& a) { return g.reciprocal(i[0], a); }},
    {"relu", PointwiseMode::RELU_FWD, [](G& g, const In& i, const A& a) { return g.relu(i[0], a); }},
    {"relu_backward", PointwiseMode::RELU_BWD, [](G& g, const In& i, const A& a) { return g.relu_backward(i[0], i[1], a); }},
    {"rsqrt", PointwiseMode::RSQRT, [](G& g, const In& i, const A& a) { return g.rsqrt(i[0], a); }},
    {"scale", PointwiseMode::MUL, [](G& g, const In& i, const A& a) { return g.scale(i[0], i[1], a); }},
    {"sigmoid", PointwiseMode::SIGMOID_FWD, [](G& g, const In& i, const A& a) { return g.sigmoid(i[0], a); }},
    {"sigmoid_backward", PointwiseMode::SIGMOID_BWD, [](G& g, const In& i, const A& a) { return g.sigmoid_backward(i[0], i[1], a); }},
    {"sin", PointwiseMode::SIN, [](G& g, const In& i, const A& a) { return g.sin(i[0], a); }},
    {"softplus", PointwiseMode::SOFTPLUS_FWD, [](G& g, const In& i, const A& a) { return g.softplus(i[0], a); }},
    {"softplus_backward", PointwiseMode::SOFTPLUS_BWD, [](G& g, const In& i, const A& a) { return g.softplus_backward(i[0], i[1], a); }},
    {"sqrt", PointwiseMode::SQRT, [](G& g, const In& i, const A& a) { return g.sqrt(i[0], a); }},
    {"sub", PointwiseMode::SUB, [](G& g, const In& i, const A& a) { return g.sub(i[0], i[1], a); }},
    {"swish", PointwiseMode::SWISH_FWD, [](G& g, const In& i, const A& a) { return g.swish(i[0], a); }},
    {"swish_backward", PointwiseMode::SWISH_BWD, [](G& g, const In& i, const A& a) { return g.swish_backward(i[0], i[1], a); }},
    {"tan", PointwiseMode::TAN, [](G& g, const In& i, const A& a) { return g.tan(i[0], a); }},
    {"tanh", PointwiseMode::TANH_FWD, [](G& g, const In& i, const A& a) { return g.tanh(i[0], a); }},
    {"tanh_backward", PointwiseMode::TANH_BWD, [](G& g, const In& i, const A& a) { return g.tanh_backward(i[0], i[1], a); }},
};
static_assert(std::size(kBuilders) == 54, "cudnn-frontend's Python surface has 54 pointwise builders");

}  // namespace

std::span<const PointwiseBuilderEntry> pointwise_builder_table() { return kBuilders; }

}  // namespace opgraph
