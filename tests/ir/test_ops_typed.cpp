// tests/ir/test_ops_typed.cpp — the typed op API generated from the records
// (opgraph/ops.h): port enums index the record's ports, attribute accessors
// return the record's default, enum domains round-trip, and a port or attribute
// of another op is refused instead of reading as unbound.
#include <gtest/gtest.h>

#include <stdexcept>

#include "opgraph/op_graph.h"
#include "opgraph/ops.h"

namespace opgraph {
namespace {

TEST(OpsTyped, PortEnumsAreTheRecordsPortsInOrder) {
  for (const OpSpec* s : all_op_specs()) EXPECT_EQ(all_op_specs()[op_index(*s)], s);
  const OpSpec& sdpa = *all_op_specs()[ops::Sdpa::kIndex];
  EXPECT_EQ(sdpa.name, ops::Sdpa::kName);
  EXPECT_EQ(ops::name(ops::Sdpa::In::Q), "Q");
  EXPECT_EQ(sdpa.inputs[static_cast<std::size_t>(ops::Sdpa::In::Block_mask)].name, "Block_mask");
  EXPECT_EQ(sdpa.outputs[static_cast<std::size_t>(ops::Sdpa::Out::Stats)].name, "Stats");
  EXPECT_EQ(ops::name(ops::BnFinalize::Out::NEXT_RUNNING_VAR), "NEXT_RUNNING_VAR");
  EXPECT_EQ(ops::ConvWgrad::kName, "conv_wgrad");
}

TEST(OpsTyped, NodeReadsTypedPortsByPositionAndRefusesAnotherOpsPort) {
  OpGraph g;
  auto a = g.tensor({2, 3, 4}, DataType::FLOAT, "a");
  auto b = g.tensor({2, 4, 5}, DataType::FLOAT, "b");
  auto c = g.matmul(a, b, Attributes().set_name("mm"));
  const Node& n = *g.nodes().front();
  EXPECT_EQ(n.input(ops::Matmul::In::A), a);
  EXPECT_EQ(n.input(ops::Matmul::In::B), b);
  EXPECT_EQ(n.input(ops::Matmul::In::M_override), nullptr);  // optional, unbound
  EXPECT_EQ(n.output(ops::Matmul::Out::C), c);
  EXPECT_EQ(n.inputs_of(ops::Matmul::In::A).size(), 1u);
  EXPECT_EQ(n.input(ops::in::B), b);     // shared name: resolved on the node's op
  EXPECT_EQ(n.input(ops::in::X), nullptr);  // a port matmul lacks reads as unbound
  EXPECT_EQ(n.input("A"), a);            // the string form stays for the JSON / Python boundary
  try {
    (void)n.input(ops::Sdpa::In::Q);
    ADD_FAILURE() << "a port of sdpa read on a matmul node";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'mm' is op 'matmul', not 'sdpa'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)n.input(ops::PortRef(ops::out::C)), std::logic_error);  // an output name asked as an input
}

// An output enum asked as an input (and the other way round) does not compile.
template <class E>
concept ReadableAsInput = requires(const Node& n, E e) { n.input(e); };
template <class E>
concept ReadableAsOutput = requires(const Node& n, E e) { n.output(e); };
static_assert(ReadableAsInput<ops::Matmul::In> && !ReadableAsInput<ops::Matmul::Out>);
static_assert(ReadableAsOutput<ops::Matmul::Out> && !ReadableAsOutput<ops::Matmul::In>);
static_assert(ops::InputPort<ops::Sdpa::In> && ops::OutputPort<ops::Sdpa::Out> && !ops::PortEnum<ops::ForwardPhase>);

TEST(OpsTyped, AttributeAccessorsReturnTheRecordDefaultWhenUnset) {
  OpGraph g;
  auto x = g.tensor({1, 4, 6, 6}, DataType::FLOAT, "x");
  auto w = g.tensor({8, 4, 3, 3}, DataType::FLOAT, "w");
  g.conv_fprop(x, w, Attributes().set_name("c"));
  const Node& c = *g.nodes().back();
  EXPECT_EQ(ops::ConvFprop::convolution_mode(c), ops::ConvolutionMode::CROSS_CORRELATION);
  EXPECT_EQ(ops::attr::convolution_mode(c), ops::ConvolutionMode::CROSS_CORRELATION);
  EXPECT_FALSE(ops::ConvFprop::stride(c).has_value());  // no default in the record

  OpGraph h;
  auto x2 = h.tensor({1, 4, 6, 6}, DataType::FLOAT, "x");
  auto w2 = h.tensor({8, 4, 3, 3}, DataType::FLOAT, "w");
  h.conv_fprop(x2, w2,
               Attributes().set_name("c").set("convolution_mode", "CONVOLUTION").set("stride", std::vector<std::int64_t>{2, 1}));
  const Node& c2 = *h.nodes().back();
  EXPECT_EQ(ops::ConvFprop::convolution_mode(c2), ops::ConvolutionMode::CONVOLUTION);
  EXPECT_EQ(ops::ConvFprop::stride(c2), (std::vector<std::int64_t>{2, 1}));
  // Another op's accessor, and a shared accessor on an op without the attribute, are refused.
  EXPECT_THROW((void)ops::ConvDgrad::convolution_mode(c2), std::logic_error);
  EXPECT_THROW((void)ops::attr::forward_phase(c2), std::logic_error);
}

TEST(OpsTyped, ForwardPhaseHasOneReadingUnsetIsNotTraining) {
  OpGraph g;
  auto x = g.tensor({4, 8}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 8}, DataType::FLOAT, "s");
  auto [y, mean, inv] = g.layernorm(x, s, s, g.tensor_scalar(1e-5), Attributes().set_name("ln"));
  const Node& n = *g.nodes().back();
  EXPECT_FALSE(ops::Layernorm::forward_phase(n).has_value());  // required, no default in the record
  EXPECT_EQ(mean, nullptr);                                     // the record's MEAN is produced in training only
  OpGraph h;
  auto x2 = h.tensor({4, 8}, DataType::FLOAT, "x");
  auto s2 = h.tensor({1, 8}, DataType::FLOAT, "s");
  auto [y2, mean2, inv2] =
      h.layernorm(x2, s2, s2, h.tensor_scalar(1e-5), Attributes().set_name("ln").set("forward_phase", "TRAINING"));
  EXPECT_EQ(ops::Layernorm::forward_phase(*h.nodes().back()), ops::ForwardPhase::TRAINING);
  EXPECT_NE(mean2, nullptr);
}

TEST(OpsTyped, EnumDomainsRoundTripThroughTheRecordSpelling) {
  EXPECT_EQ(ops::to_string(ops::PointwiseMode::GELU_APPROX_TANH_FWD), "GELU_APPROX_TANH_FWD");
  EXPECT_EQ(ops::parse<ops::ReductionMode>("MUL_NO_ZEROS"), ops::ReductionMode::MUL_NO_ZEROS);
  EXPECT_FALSE(ops::parse<ops::ForwardPhase>("TRAINNG").has_value());
  EXPECT_EQ(ops::to_string(ops::GateDomain::linear), "linear");
  // Every enum attribute of every record: each value of its domain parses back to its position.
  std::size_t checked = 0;
  for (const OpSpec* s : all_op_specs())
    for (const AttrSpec& a : s->attrs)
      if (a.type == AttrType::ENUM) checked += a.enum_values.size();
  EXPECT_GT(checked, 50u);
  std::size_t i = 0;
  for (std::string_view v : ops::EnumDomain<ops::PointwiseMode>::kNames)
    EXPECT_EQ(static_cast<std::size_t>(*ops::parse<ops::PointwiseMode>(v)), i++);
  EXPECT_EQ(i, find_op_spec("pointwise")->find_attr("mode")->enum_values.size());
}

}  // namespace
}  // namespace opgraph
