// tests/plan/test_linear_planning.cpp — planning is linear in the graph:
// a chain of 100,000 pointwise nodes validates, plans and builds on the CPU
// reference engine. A super-linear step (a producer lookup that scans the nodes, a
// "seen" list searched per operand) took 252 s here. The test's only clock is a
// ceiling far above the figure (about 0.4 s; bench/plan_chain.cpp prints it), there
// to catch such a step even under the sanitizers, not to hold a target.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "opgraph/graph.h"

namespace opgraph {
namespace {

// x -> relu -> relu -> ... (n nodes) -> y, FLOAT, every intermediate virtual.
void build_chain(Graph& g, std::int64_t n) {
  g.set_name("chain").set_compute_data_type(DataType::FLOAT);
  auto t = g.tensor({4, 8}, DataType::FLOAT, "x");
  for (std::int64_t i = 0; i < n; ++i) t = g.relu(t);
  t->set_output(true).set_name("y").set_data_type(DataType::FLOAT);
}

TEST(LinearPlanning, HundredThousandNodeChainPlansOnTheReference) {
  Graph g;
  build_chain(g, 100000);
  ASSERT_EQ(g.nodes().size(), 100000u);
  const auto t0 = std::chrono::steady_clock::now();
  Status v = g.validate();
  ASSERT_TRUE(v.is_good()) << v.to_string();
  Status c = g.create_execution_plans({HeurMode::FALLBACK});
  ASSERT_TRUE(c.is_good()) << c.to_string();
  ASSERT_GE(g.get_execution_plan_count(), 1);
  EXPECT_EQ(g.get_plan_name_at_index(0).value(), "reference[]");
  Status b = g.build_plans();
  ASSERT_TRUE(b.is_good()) << b.to_string();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 60.0) << "validate + plan + build of 100k nodes: a step grows faster than the graph";
  // Once frozen, the producer lookup is the map: every node's output maps to it.
  EXPECT_EQ(g.producer_of(g.nodes().back()->outputs()[0].front().get()), g.nodes().back().get());
  EXPECT_EQ(g.producer_of(g.tensors().front().get()), nullptr);
}

TEST(LinearPlanning, ShortChainExecutesThroughEveryNode) {
  Graph g;
  build_chain(g, 1000);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  std::vector<float> x(32), y(32, 7.f);
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i) - 16.f;
  VariantPack pack;
  pack.set(g.tensors().front()->get_uid(), x.data());
  for (const auto& t : g.tensors())
    if (t->get_name() == "y") pack.set(t->get_uid(), y.data());
  Status e = g.execute(pack);
  ASSERT_TRUE(e.is_good()) << e.to_string();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.f) << i;
}

}  // namespace
}  // namespace opgraph
