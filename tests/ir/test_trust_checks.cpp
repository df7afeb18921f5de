// tests/ir/test_trust_checks.cpp — the IR's own checks against hostile graphs (what a
// fuzzer or a careless caller sends): checked span arithmetic, stride 0 on a written
// output, the norms' epsilon rule, duplicate JSON keys, and NaN / ±Inf values through
// the JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "graph_check.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using opgraph::testing::expect_refused;
using opgraph::testing::expect_round_trip;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// x -> relu -> y (a non-virtual output).
OpGraph relu_graph(std::vector<std::int64_t> dim, std::vector<std::int64_t> stride, DataType t = DataType::FLOAT) {
  OpGraph g;
  auto x = g.tensor(std::move(dim), t, "x", std::move(stride));
  auto y = g.relu(x, Attributes().set_name("r0"));
  y->set_output(true).set_name("y");
  return g;
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in " << s;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

// --- checked span arithmetic -------------------------------------------------

// The example: (2^64 + 5) / 7 is a valid int64 stride, but 7 of them wrap to 5,
// so a 6-element buffer seemed to cover an 8-element tensor.
TEST(TrustChecks, StrideWhoseSpanWrapsInt64IsRefused) {
  const std::int64_t s = 2635249153387078803;  // (2^64 + 5) / 7, exactly
  OpGraph g = relu_graph({8}, {s});
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"tensor 'x'", "rule span_overflow"});
}

TEST(TrustChecks, SpanThatFitsInElementsButNotInBytesIsRefused) {
  // 2^62 + 1 elements fit in int64; times 4 bytes they do not.
  OpGraph g = relu_graph({2, 1}, {std::int64_t{1} << 62, 1});
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"tensor 'x'", "rule span_overflow", "bytes"});
}

TEST(TrustChecks, SpanSummedOverAxesIsChecked) {
  // Each axis alone fits; the sum of (dim - 1) * stride does not.
  const std::int64_t big = std::int64_t{1} << 61;
  OpGraph g = relu_graph({3, 3, 3}, {big, big, big}, DataType::INT8);
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"tensor 'x'", "rule span_overflow"});
}

TEST(TrustChecks, Fp4SpanCountsHalfBytes) {
  // 2^62 + 1 fp4 elements are 2^61 + 1 bytes: the span rule lets it through (at 4 bits),
  // while the same layout in FLOAT overflows.
  OpGraph g;
  auto x = g.tensor({2, 1}, DataType::FP4_E2M1, "x", {std::int64_t{1} << 62, 1});
  g.tensor({1}, DataType::FLOAT, "unused");
  (void)x;
  Status s = g.validate();
  EXPECT_EQ(s.message().find("span_overflow"), std::string::npos) << s.to_string();
}

TEST(TrustChecks, OrdinaryStridedAndBroadcastInputsStillValidate) {
  OpGraph g = relu_graph({4, 8}, {0, 1});  // a broadcast input: stride 0 reads are fine
  Status s = g.validate();
  EXPECT_TRUE(s.is_good()) << s.to_string();
}

TEST(TrustChecks, NegativeDimRefused) {
  OpGraph g = relu_graph({4, -8}, {});
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"tensor 'x'", "non-negative"});
}

// --- stride 0 on a written output --------------------------------------------

TEST(TrustChecks, OutputWithStrideZeroOnARealAxisIsRefused) {
  OpGraph g = relu_graph({4, 8}, {});
  g.nodes()[0]->output("OUT_0")->set_stride({0, 1});
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"tensor 'y'", "rule output_stride_zero"});
}

TEST(TrustChecks, OutputWithStrideZeroOnAUnitAxisIsAccepted) {
  OpGraph g = relu_graph({1, 8}, {});
  g.nodes()[0]->output("OUT_0")->set_stride({0, 1});
  Status s = g.validate();
  EXPECT_TRUE(s.is_good()) << s.to_string();
}

// --- the norms' epsilon -------------------------------------------------------

namespace {

OpGraph layernorm_with_eps(double eps) {
  OpGraph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({2, 6, 16}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 6, 16}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 6, 16}, DataType::FLOAT, "bias");
  auto e = g.tensor_scalar(eps);
  e->set_name("eps");
  auto [y, m, v] = g.layernorm(x, s, b, e, Attributes().set_name("ln").set("forward_phase", "INFERENCE"));
  y->set_output(true);
  return g;
}

OpGraph batchnorm_with_eps(double eps) {
  OpGraph g;
  auto x = g.tensor({2, 4, 3, 3}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 4, 1, 1}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 4, 1, 1}, DataType::FLOAT, "bias");
  auto e = g.tensor_scalar(eps);
  e->set_name("eps");
  auto r = g.batchnorm(x, s, b, e, Attributes().set_name("bn"));
  r[0]->set_output(true);
  return g;
}

}  // namespace

TEST(TrustChecks, NegativeEpsilonRefusedByTheNorms) {
  OpGraph ln = layernorm_with_eps(-1e-5);
  expect_refused(ln, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'layernorm'", "port EPSILON", "tensor 'eps'", "epsilon"});
  OpGraph bn = batchnorm_with_eps(-1.0);
  expect_refused(bn, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'batchnorm'", "port EPSILON", "tensor 'eps'"});
}

TEST(TrustChecks, NanAndMinusInfEpsilonRefused) {
  OpGraph a = layernorm_with_eps(kNan);
  expect_refused(a, ErrorCode::GRAPH_NOT_SUPPORTED, {"port EPSILON", "tensor 'eps'"});
  OpGraph b = layernorm_with_eps(-kInf);
  expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED, {"port EPSILON", "tensor 'eps'"});
}

TEST(TrustChecks, ZeroEpsilonAccepted) {
  OpGraph g = layernorm_with_eps(0.0);
  Status s = g.validate();
  EXPECT_TRUE(s.is_good()) << s.to_string();
}

// --- duplicate JSON keys -----------------------------------------------------

namespace {

std::string serialized_relu() {
  OpGraph g = relu_graph({4, 8}, {});
  EXPECT_TRUE(g.validate().is_good());
  return g.serialize().value();
}

void expect_duplicate_refused(const std::string& text, const std::string& path) {
  auto r = OpGraph::deserialize(text);
  ASSERT_FALSE(r.is_good()) << text;
  EXPECT_EQ(r.status().code(), ErrorCode::UNSUPPORTED_GRAPH_FORMAT);
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().to_string();
  EXPECT_NE(r.status().message().find("twice"), std::string::npos) << r.status().to_string();
}

}  // namespace

TEST(TrustChecks, DuplicateKeyAtTheTopIsRefused) {
  std::string text = serialized_relu();
  // A second "nodes" at the end: nlohmann would keep the last and drop the first.
  text = replace_once(text, "{\"context\"", "{\"nodes\":[],\"context\"");
  expect_duplicate_refused(text, "graph JSON, nodes:");
}

TEST(TrustChecks, DuplicateKeyInsideATensorIsRefused) {
  std::string text = serialized_relu();
  text = replace_once(text, "\"alignment\":", "\"dim\":[1],\"alignment\":");
  expect_duplicate_refused(text, "tensors[0].dim");
}

TEST(TrustChecks, DuplicateKeyDeepInANodeIsRefused) {
  std::string text = serialized_relu();
  text = replace_once(text, "\"attributes\":{", "\"attributes\":{\"mode\":\"RELU_FWD\",");
  auto r = OpGraph::deserialize(text);
  ASSERT_FALSE(r.is_good());
  EXPECT_NE(r.status().message().find("nodes[0].attributes.mode"), std::string::npos) << r.status().to_string();
}

TEST(TrustChecks, SameKeyInSiblingObjectsIsFine) {
  std::string text = serialized_relu();
  auto r = OpGraph::deserialize(text);  // every tensor has "dim", "uid", ... once each
  EXPECT_TRUE(r.is_good()) << r.status().to_string();
}

// --- NaN and ±Inf through the JSON -------------------------------------------

TEST(TrustChecks, NonFiniteScalarsRoundTrip) {
  for (double v : {kNan, kInf, -kInf}) {
    OpGraph g;
    auto x = g.tensor({4, 8}, DataType::FLOAT, "x");
    auto y = g.add(x, g.tensor_scalar(v), Attributes().set_name("add0"));
    y->set_output(true).set_name("y");
    expect_round_trip(g);
    auto text = g.serialize().value();
    auto g2 = OpGraph::deserialize(text);
    ASSERT_TRUE(g2.is_good()) << g2.status().to_string();
    const Tensor* scalar = nullptr;
    for (const auto& t : g2->tensors())
      if (t->get_is_pass_by_value()) scalar = t.get();
    ASSERT_NE(scalar, nullptr);
    double back = scalar->get_pass_by_value()->f;
    if (std::isnan(v)) EXPECT_TRUE(std::isnan(back));
    else EXPECT_EQ(back, v);
  }
}

TEST(TrustChecks, NonFiniteScalarSpelling) {
  OpGraph g;
  auto x = g.tensor({4}, DataType::FLOAT, "x");
  auto y = g.add(x, g.tensor_scalar(-kInf));
  y->set_output(true);
  ASSERT_TRUE(g.validate().is_good());
  auto text = g.serialize().value();
  EXPECT_NE(text.find("\"value\":\"-inf\""), std::string::npos) << text;
  EXPECT_EQ(text.find("null"), std::string::npos) << text;
}

TEST(TrustChecks, NonFiniteFloatAttributesRoundTrip) {
  OpGraph g;
  auto x = g.tensor({4, 8}, DataType::FLOAT, "x");
  auto y = g.relu(x, Attributes().set_name("clip").set("relu_upper_clip", kInf).set("relu_lower_clip", -kInf));
  y->set_output(true);
  expect_round_trip(g);
  auto text = g.serialize().value();
  EXPECT_NE(text.find("\"relu_upper_clip\":\"inf\""), std::string::npos) << text;
}

TEST(TrustChecks, NanSpellingIsOnlyForFloats) {
  // An integer scalar or an integer attribute never takes the spelling.
  std::string text = serialized_relu();
  auto r = OpGraph::deserialize(replace_once(text, "\"alignment\":16", "\"alignment\":\"inf\""));
  EXPECT_FALSE(r.is_good());
  // And an unknown spelling of a float is refused.
  OpGraph g;
  auto x = g.tensor({4}, DataType::FLOAT, "x");
  auto y = g.add(x, g.tensor_scalar(kInf));
  y->set_output(true);
  ASSERT_TRUE(g.validate().is_good());
  auto bad = replace_once(g.serialize().value(), "\"value\":\"inf\"", "\"value\":\"Infinity\"");
  auto r2 = OpGraph::deserialize(bad);
  ASSERT_FALSE(r2.is_good());
  EXPECT_NE(r2.status().message().find("pass_by_value.value"), std::string::npos) << r2.status().to_string();
}

// --- outputs bound as the op produces them -----------------------------------

namespace {

std::string drop_outputs(std::string text) {
  auto at = text.find("\"outputs\":{");
  EXPECT_NE(at, std::string::npos) << text;
  auto open = at + std::string("\"outputs\":{").size();
  auto close = text.find('}', open);
  return text.erase(open, close - open);
}

}  // namespace

// fuzz_graph_execute crash-ef5f8311 (tests/exec/test_fuzz_execute_regressions.cpp):
// a matmul whose JSON binds no C validated, and planning dereferenced the missing C.
TEST(TrustChecks, MatmulWithoutItsOutputIsRefusedAtValidate) {
  OpGraph g;
  auto a = g.tensor({2, 16, 32}, DataType::HALF, "a");
  auto b = g.tensor({1, 32, 8}, DataType::HALF, "b");
  g.matmul(a, b, Attributes().set_name("mm0"))->set_output(true);
  ASSERT_TRUE(g.validate().is_good());
  auto parsed = OpGraph::deserialize(drop_outputs(g.serialize().value()));
  ASSERT_TRUE(parsed.is_good()) << parsed.status().to_string();
  expect_refused(parsed.value(), ErrorCode::ATTRIBUTE_NOT_SET, {"op 'matmul'", "node 'mm0'", "output port C", "rule output_bound"});
}

TEST(TrustChecks, OutputTheOpDoesNotProduceIsRefused) {
  // Training layernorm binds MEAN and INV_VARIANCE; the JSON then says INFERENCE,
  // where nothing would write them.
  OpGraph g;
  auto x = g.tensor({2, 6, 16}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 6, 16}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 6, 16}, DataType::FLOAT, "bias");
  auto [y, m, v] = g.layernorm(x, s, b, g.tensor_scalar(1e-5), Attributes().set_name("ln").set("forward_phase", "TRAINING"));
  y->set_output(true);
  m->set_output(true).set_name("mean");
  v->set_output(true);
  ASSERT_TRUE(g.validate().is_good());
  auto parsed = OpGraph::deserialize(replace_once(g.serialize().value(), "\"TRAINING\"", "\"INFERENCE\""));
  ASSERT_TRUE(parsed.is_good()) << parsed.status().to_string();
  expect_refused(parsed.value(), ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'layernorm'", "output port MEAN", "tensor 'mean'", "rule output_bound"});
}

// A FLOAT attribute set from an integer was written 6, read back as 6.0 and then
// written 6.0: the round trip was not the identity and the key changed.
TEST(TrustChecks, FloatAttributeSetFromAnIntegerRoundTrips) {
  OpGraph g;
  auto x = g.tensor({4}, DataType::FLOAT, "x");
  g.relu(x, Attributes().set_name("clip").set("relu_upper_clip", std::int64_t{6}))->set_output(true);
  expect_round_trip(g);
  OpGraph h;
  auto hx = h.tensor({4}, DataType::FLOAT, "x");
  h.relu(hx, Attributes().set_name("clip").set("relu_upper_clip", 6.0))->set_output(true);
  ASSERT_TRUE(h.validate().is_good());
  EXPECT_EQ(g.key().value(), h.key().value()) << "6 and 6.0 are one FLOAT attribute";
}
