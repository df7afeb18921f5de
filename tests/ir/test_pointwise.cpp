// The pointwise table: 50 modes as data, 54 builder names, validation rules and JSON.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "graph_check.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using opgraph::testing::expect_refused;
using opgraph::testing::expect_round_trip;

namespace {

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream is(s);
  for (std::string w; is >> w;) v.push_back(w);
  return v;
}

// cudnn_frontend.md §1.3, verbatim order.
const char* kCudnnModes =
    "ADD MUL SQRT MAX MIN RELU_FWD TANH_FWD SIGMOID_FWD ELU_FWD GELU_FWD SOFTPLUS_FWD SWISH_FWD "
    "RELU_BWD TANH_BWD SIGMOID_BWD ELU_BWD GELU_BWD SOFTPLUS_BWD SWISH_BWD ERF IDENTITY "
    "GELU_APPROX_TANH_BWD GELU_APPROX_TANH_FWD GEN_INDEX BINARY_SELECT EXP LOG NEG MOD POW ABS CEIL "
    "COS FLOOR RSQRT SIN LOGICAL_NOT TAN SUB ADD_SQUARE DIV CMP_EQ CMP_NEQ CMP_GT CMP_GE CMP_LT "
    "CMP_LE LOGICAL_AND LOGICAL_OR RECIPROCAL";
// Port counts of get_pointwise_mode_port_count (output included): 3 = binary, 4 = ternary.
const char* kBinary =
    "ADD MUL DIV ADD_SQUARE SUB CMP_EQ CMP_NEQ CMP_GT CMP_GE CMP_LT CMP_LE LOGICAL_AND LOGICAL_OR MIN MAX MOD POW "
    "RELU_BWD TANH_BWD SIGMOID_BWD ELU_BWD GELU_BWD SOFTPLUS_BWD SWISH_BWD GELU_APPROX_TANH_BWD";
// The 54 Python methods of cudnn_frontend.md §1.3.
const char* kBuilderNames =
    "abs add add_square bias binary_select ceil cmp_eq cmp_ge cmp_gt cmp_le cmp_lt cmp_neq cos div elu "
    "elu_backward erf exp floor gelu gelu_approx_tanh gelu_approx_tanh_backward gelu_backward gen_index "
    "identity leaky_relu leaky_relu_backward log logical_and logical_not logical_or max min mod mul neg pow "
    "reciprocal relu relu_backward rsqrt scale sigmoid sigmoid_backward sin softplus softplus_backward sqrt sub "
    "swish swish_backward tan tanh tanh_backward";

bool is_bool_port(const PointwiseModeInfo& m, int i) { return m.traits.is_logical || (m.traits.is_select && i == 2); }

}  // namespace

TEST(Pointwise, TableHoldsTheFiftyCudnnModesInOrderWithTheirArity) {
  auto names = words(kCudnnModes);
  auto modes = pointwise_modes();
  ASSERT_EQ(names.size(), 50u);
  ASSERT_EQ(modes.size(), 50u);
  std::set<std::string> binary;
  for (auto& w : words(kBinary)) binary.insert(w);
  for (std::size_t i = 0; i < modes.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(modes[i].mode), i);
    EXPECT_EQ(modes[i].name, names[i]);
    int expected = names[i] == "BINARY_SELECT" ? 3 : binary.count(names[i]) ? 2 : 1;
    EXPECT_EQ(modes[i].arity, expected) << names[i];
    EXPECT_EQ(modes[i].traits.is_backward, names[i].find("_BWD") != std::string::npos) << names[i];
    EXPECT_EQ(modes[i].traits.is_comparison, names[i].rfind("CMP_", 0) == 0) << names[i];
    EXPECT_EQ(modes[i].traits.is_logical, names[i].rfind("LOGICAL_", 0) == 0) << names[i];
    if (modes[i].traits.is_backward) {
      std::string fwd = names[i].substr(0, names[i].size() - 3) + "FWD";
      EXPECT_EQ(pointwise_mode_info(modes[i].forward).name, fwd);
    }
    EXPECT_EQ(find_pointwise_mode(names[i]), &modes[i]);
  }
  EXPECT_EQ(find_pointwise_mode("NOT_SET"), nullptr);
  auto spec = find_op_spec("pointwise");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->mechanism, OpMechanism::POINTWISE);
  EXPECT_EQ(spec->find_attr("mode")->enum_values.size(), 50u);
}

TEST(Pointwise, FiftyFourBuildersEachBuildValidateAndRoundTrip) {
  auto table = pointwise_builder_table();
  auto expected = words(kBuilderNames);
  ASSERT_EQ(expected.size(), 54u);
  ASSERT_EQ(table.size(), 54u);
  std::set<PointwiseMode> covered;
  for (std::size_t k = 0; k < table.size(); ++k) {
    const auto& e = table[k];
    SCOPED_TRACE(std::string(e.builder));
    EXPECT_EQ(e.builder, expected[k]);
    covered.insert(e.mode);
    const PointwiseModeInfo& m = pointwise_mode_info(e.mode);
    OpGraph g;
    g.set_io_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    // Inputs of different ranks and broadcastable extents: [2,1,4], [3,1], [1].
    const std::vector<std::vector<std::int64_t>> shapes = {{2, 1, 4}, {3, 1}, {2, 3, 1}};
    std::vector<TensorPtr> in;
    for (int i = 0; i < m.arity; ++i)
      in.push_back(g.tensor(shapes[i], is_bool_port(m, i) ? DataType::BOOLEAN : DataType::FLOAT,
                            "in" + std::to_string(i)));
    TensorPtr y = e.call(g, in, Attributes().set_name("n"));
    ASSERT_NE(y, nullptr);
    y->set_output(true).set_name("y");
    expect_round_trip(g);
    ASSERT_EQ(g.nodes().size(), 1u);
    EXPECT_EQ(g.nodes()[0]->get_string("mode"), m.name);
    std::vector<std::int64_t> want = m.arity == 1 ? shapes[0] : std::vector<std::int64_t>{2, 3, 4};
    EXPECT_EQ(y->get_dim(), want);
    DataType want_type = (m.traits.is_comparison || m.traits.is_logical) ? DataType::BOOLEAN
                         : m.traits.uses_axis                          ? DataType::INT32
                                                                       : DataType::FLOAT;
    EXPECT_EQ(y->get_data_type(), want_type);
  }
  EXPECT_EQ(covered.size(), 50u);  // every mode has a builder
}

TEST(Pointwise, AliasesCarryTheirAttributes) {
  OpGraph g;
  auto x = g.tensor({4}, DataType::HALF, "x");
  auto dy = g.tensor({4}, DataType::HALF, "dy");
  g.leaky_relu(x, 0.2);
  g.leaky_relu_backward(dy, x, 0.3);
  g.gen_index(x, -1);
  g.bias(x, dy);
  g.scale(x, dy);
  ASSERT_TRUE(g.validate().is_good());
  EXPECT_DOUBLE_EQ(g.nodes()[0]->get_float("relu_lower_clip_slope"), 0.2);
  EXPECT_DOUBLE_EQ(g.nodes()[1]->get_float("relu_lower_clip_slope"), 0.3);
  EXPECT_EQ(g.nodes()[1]->input("IN_0"), dy);  // backward: (dy, x)
  EXPECT_EQ(g.nodes()[2]->get_int("axis"), -1);
  EXPECT_EQ(g.nodes()[3]->get_string("mode"), "ADD");
  EXPECT_EQ(g.nodes()[4]->get_string("mode"), "MUL");
  // Builders override a conflicting user mode; the generic builder takes the user's.
  OpGraph h;
  auto a = h.tensor({4}, DataType::FLOAT, "a");
  h.relu(a, Attributes().set("mode", "TANH_FWD"));
  h.pointwise(a, nullptr, nullptr, Attributes().set("mode", "TANH_FWD"));
  ASSERT_TRUE(h.validate().is_good());
  EXPECT_EQ(h.nodes()[0]->get_string("mode"), "RELU_FWD");
  EXPECT_EQ(h.nodes()[1]->get_string("mode"), "TANH_FWD");
}

TEST(Pointwise, ScalarAndFusedChainRoundTrip) {
  OpGraph g;
  g.set_io_data_type(DataType::HALF).set_intermediate_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({2, 8, 16}, DataType::HALF, "x");
  auto s = g.tensor_scalar(0.5);
  auto t = g.scale(x, s);
  auto u = g.swish(t, Attributes().set("swish_beta", 1.5));
  auto m = g.cmp_gt(u, g.tensor_scalar(0.0));
  auto y = g.binary_select(u, x, m);
  y->set_output(true).set_name("y");
  expect_round_trip(g);
  EXPECT_EQ(m->get_data_type(), DataType::BOOLEAN);
  EXPECT_EQ(t->get_data_type(), DataType::FLOAT);  // virtual → intermediate type
  EXPECT_EQ(y->get_dim(), (std::vector<std::int64_t>{2, 8, 16}));
}

// ---- refusals: one test per rule, each naming op, node, port/attribute, tensor, rule ----

TEST(Pointwise, MissingSecondInputRefused) {
  OpGraph g;
  auto a = g.tensor({4}, DataType::FLOAT, "a");
  g.pointwise(a, nullptr, nullptr, Attributes().set_name("p").set("mode", "ADD"));
  expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'pointwise'", "node 'p'", "port IN_1", "mode ADD takes 2"});
}

TEST(Pointwise, ExtraInputRefused) {
  OpGraph g;
  auto a = g.tensor({4}, DataType::FLOAT, "a");
  auto b = g.tensor({4}, DataType::FLOAT, "b");
  g.pointwise(a, b, nullptr, Attributes().set_name("p").set("mode", "RELU_FWD"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'pointwise'", "node 'p'", "port IN_1", "tensor 'b'", "left unbound"});
}

TEST(Pointwise, MissingModeRefused) {
  OpGraph g;
  auto a = g.tensor({4}, DataType::FLOAT, "a");
  g.pointwise(a, nullptr, nullptr, Attributes().set_name("p"));
  expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'pointwise'", "node 'p'", "'mode'"});
  OpGraph h;
  auto b = h.tensor({4}, DataType::FLOAT, "b");
  h.pointwise(b, nullptr, nullptr, Attributes().set_name("q").set("mode", "SOFTMAX"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'q'", "'mode'", "SOFTMAX", "RECIPROCAL"});
}

TEST(Pointwise, GenIndexWithoutAxisRefused) {
  OpGraph g;
  auto a = g.tensor({4, 5}, DataType::FLOAT, "a");
  g.pointwise(a, nullptr, nullptr, Attributes().set_name("gi").set("mode", "GEN_INDEX"));
  expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'pointwise'", "node 'gi'", "attribute 'axis'", "GEN_INDEX"});
  OpGraph h;
  auto b = h.tensor({4, 5}, DataType::FLOAT, "b");
  h.gen_index(b, 2, Attributes().set_name("gi"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'gi'", "attribute 'axis'", "[-2, 2)", "got 2"});
}

TEST(Pointwise, NonBroadcastableShapesRefused) {
  OpGraph g;
  auto a = g.tensor({2, 3, 4}, DataType::FLOAT, "a");
  auto b = g.tensor({5, 4}, DataType::FLOAT, "b");
  g.add(a, b, Attributes().set_name("sum"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'pointwise'", "node 'sum'", "port IN_1", "tensor 'b'", "[5, 4]", "do not broadcast", "[2, 3, 4]"});
}

TEST(Pointwise, UserSetOutputDimsMustMatchBroadcast) {
  OpGraph g;
  auto a = g.tensor({2, 1}, DataType::FLOAT, "a");
  auto b = g.tensor({1, 3}, DataType::FLOAT, "b");
  auto y = g.mul(a, b, Attributes().set_name("m"));
  y->set_dim({2, 2}).set_name("y");
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'm'", "port OUT_0", "tensor 'y'", "[2, 3]"});
}

TEST(Pointwise, ComparisonOutputMustBeBoolean) {
  OpGraph g;
  auto a = g.tensor({4}, DataType::FLOAT, "a");
  auto b = g.tensor({4}, DataType::FLOAT, "b");
  auto y = g.cmp_lt(a, b, Attributes().set_name("lt"));
  y->set_data_type(DataType::FLOAT).set_name("mask");
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'pointwise'", "node 'lt'", "port OUT_0", "tensor 'mask'", "CMP_LT yields BOOLEAN", "FLOAT"});
}

TEST(Pointwise, LogicalOnNonBoolRefused) {
  OpGraph g;
  auto a = g.tensor({4}, DataType::BOOLEAN, "a");
  auto b = g.tensor({4}, DataType::HALF, "b");
  g.logical_or(a, b, Attributes().set_name("or"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'or'", "port IN_1", "tensor 'b'", "must be BOOLEAN", "HALF"});
}

TEST(Pointwise, SelectMaskIsBooleanOrInteger) {
  // cuDNN takes an INT32 mask (cudnn-frontend's test_gemm_silu_and_mul); a floating one is refused.
  for (DataType t : {DataType::BOOLEAN, DataType::INT8, DataType::UINT8, DataType::INT32, DataType::INT64}) {
    OpGraph g;
    auto a = g.tensor({4}, DataType::FLOAT, "a");
    auto b = g.tensor({4}, DataType::FLOAT, "b");
    auto m = g.tensor({4}, t, "m");
    auto y = g.binary_select(a, b, m, Attributes().set_name("sel"));
    y->set_output(true);
    EXPECT_TRUE(g.validate().is_good()) << to_string(t);
    EXPECT_EQ(y->get_data_type(), DataType::FLOAT) << to_string(t);
  }
  OpGraph g;
  auto a = g.tensor({4}, DataType::FLOAT, "a");
  auto b = g.tensor({4}, DataType::FLOAT, "b");
  auto m = g.tensor({4}, DataType::HALF, "m");
  g.binary_select(a, b, m, Attributes().set_name("sel"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"node 'sel'", "port IN_2", "tensor 'm'", "mask must be BOOLEAN or an integer type", "HALF"});
}

TEST(Pointwise, ComparisonAndLogicalMayBeIntegerMasks) {
  // cudnn-frontend's flexible-attention masks (test_flexible_sdpa): a comparison declared INT32
  // holds 1 / 0, and logical modes read INT32 inputs as "not zero"; a floating output is refused.
  OpGraph g;
  auto r = g.tensor({4, 4}, DataType::INT32, "r");
  auto c = g.tensor({4, 4}, DataType::INT32, "c");
  auto lt = g.cmp_lt(r, c, Attributes().set_name("lt"));
  lt->set_data_type(DataType::INT32);
  auto ge = g.cmp_ge(r, c, Attributes().set_name("ge"));
  ge->set_data_type(DataType::INT64);
  auto both = g.logical_or(lt, ge, Attributes().set_name("or"));
  both->set_data_type(DataType::INT32).set_output(true);
  auto flag = g.logical_and(lt, g.cmp_eq(r, c, Attributes().set_name("eq")), Attributes().set_name("and"));
  flag->set_output(true);
  ASSERT_TRUE(g.validate().is_good()) << g.validate().to_string();
  EXPECT_EQ(lt->get_data_type(), DataType::INT32);
  EXPECT_EQ(ge->get_data_type(), DataType::INT64);
  EXPECT_EQ(both->get_data_type(), DataType::INT32);
  EXPECT_EQ(flag->get_data_type(), DataType::BOOLEAN);

  OpGraph h;
  auto a = h.tensor({4}, DataType::INT32, "a");
  auto f = h.tensor({4}, DataType::FLOAT, "f");
  h.logical_and(a, f, Attributes().set_name("and"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"node 'and'", "port IN_1", "tensor 'f'", "must be BOOLEAN or an integer type", "FLOAT"});
}

TEST(Pointwise, ArithmeticOnBooleanRefused) {
  OpGraph g;
  auto a = g.tensor({4}, DataType::BOOLEAN, "flags");
  g.exp(a, Attributes().set_name("e"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'e'", "port IN_0", "tensor 'flags'", "EXP is arithmetic"});
}

TEST(Pointwise, BackwardNeedsFloatingInputs) {
  OpGraph g;
  auto dy = g.tensor({4}, DataType::FLOAT, "dy");
  auto x = g.tensor({4}, DataType::INT32, "x");
  g.tanh_backward(dy, x, Attributes().set_name("tb"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'tb'", "port IN_1", "tensor 'x'", "floating (dy, x)"});
}

TEST(Pointwise, ModeAttributeOnWrongModeRefused) {
  OpGraph g;
  auto a = g.tensor({4}, DataType::FLOAT, "a");
  g.tanh(a, Attributes().set_name("t").set("swish_beta", 2.0));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'pointwise'", "node 't'", "attribute 'swish_beta'", "SWISH_FWD, SWISH_BWD", "not TANH_FWD"});
}

TEST(Pointwise, ReluClipOrderAndSoftplusBetaChecked) {
  OpGraph g;
  auto a = g.tensor({4}, DataType::FLOAT, "a");
  g.relu(a, Attributes().set_name("r").set("relu_lower_clip", 2.0).set("relu_upper_clip", 1.0));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'r'", "attribute 'relu_upper_clip'", ">= relu_lower_clip"});
  OpGraph h;
  auto b = h.tensor({4}, DataType::FLOAT, "b");
  h.softplus(b, Attributes().set_name("sp").set("softplus_beta", 0.0));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'sp'", "attribute 'softplus_beta'", "must be > 0"});
}
