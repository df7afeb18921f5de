// The differential harness itself: input generation (seeded, ranged, rounded, never
// all zero, fixed values), poisoned output buffers, the comparison message, the
// engine list hook, and finite differences against a closed-form gradient.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"

using namespace opgraph;
using namespace opgraph::harness;

namespace {

Case matmul_case(DataType t) {
  Case c;
  c.name = "matmul_" + std::string(to_string(t));
  c.build = [t](OpGraph& g) {
    auto a = g.tensor({2, 3, 4}, t, "a");
    auto b = g.tensor({4, 5}, t, "b");
    g.matmul(a, b)->set_output(true).set_name("c").set_data_type(t);
  };
  return c;
}

}  // namespace

TEST(Harness, InputsAreSeededRangedRoundedAndFixed) {
  Case c = matmul_case(DataType::HALF);
  c.ranges["b"] = {2.0, 3.0};
  OpGraph g;
  ASSERT_TRUE(build(c, g).is_good());
  Values in1 = make_inputs(c, g), in2 = make_inputs(c, g);
  ASSERT_EQ(in1.size(), 2u);
  EXPECT_EQ(in1.at("a").v, in2.at("a").v);  // deterministic from the seed
  for (double x : in1.at("a").v) {
    EXPECT_LE(std::fabs(x), 1.0);
    EXPECT_EQ(x, reference::round_to(DataType::HALF, x));
  }
  for (double x : in1.at("b").v) EXPECT_TRUE(x >= 2.0 && x <= 3.0) << x;
  c.seed = 2;
  EXPECT_NE(make_inputs(c, g).at("a").v, in1.at("a").v);
  c.fixed["b"] = Array({4, 5}, 0.25);
  EXPECT_EQ(make_inputs(c, g).at("b").v, std::vector<double>(20, 0.25));
  // Integers draw integers in range; a tiny range in a coarse type is still not all zero.
  Case ci;
  ci.name = "ints";
  ci.build = [](OpGraph& g2) {
    auto a = g2.tensor({2, 8}, DataType::FP4_E2M1, "a");
    auto b = g2.tensor({8, 2}, DataType::FLOAT, "b");
    auto mo = g2.tensor({1}, DataType::INT32, "mo");
    g2.matmul(a, b, {}, mo)->set_output(true).set_name("c");
  };
  ci.range = {-0.1, 0.1};
  ci.ranges["mo"] = {0, 2};
  OpGraph gi;
  ASSERT_TRUE(build(ci, gi).is_good());
  Values vi = make_inputs(ci, gi);
  bool nonzero = false;
  for (double x : vi.at("a").v) nonzero |= x != 0.0;
  EXPECT_TRUE(nonzero);
  double mo = vi.at("mo")[0];
  EXPECT_TRUE(mo == 1.0 || mo == 2.0) << mo;
}

TEST(Harness, OutputsArePoisonedBeforeTheRun) {
  Case c = matmul_case(DataType::BFLOAT16);
  OpGraph g;
  ASSERT_TRUE(build(c, g).is_good());
  Engine lazy{"lazy", [](const OpGraph&) { return true; },
              [](const OpGraph&, const std::map<std::int64_t, reference::HostBuffer>&) { return Status::ok(); }};
  auto out = run_on(lazy, g, make_inputs(c, g));
  ASSERT_TRUE(out.is_good());
  for (double x : out->at("c").v) EXPECT_TRUE(std::isnan(x));
  auto ref = run_reference(g, make_inputs(c, g));
  ASSERT_TRUE(ref.is_good());
  std::string m = compare("lazy", g, *ref, *out);
  EXPECT_NE(m.find("case 'lazy'"), std::string::npos) << m;
  EXPECT_NE(m.find("output 'c' (BFLOAT16)"), std::string::npos) << m;
  EXPECT_NE(m.find("at [0, 0, 0]: got -nan"), std::string::npos) << m;  // 0xFFFF is a negative NaN
  EXPECT_NE(m.find("30 of 30 elements differ"), std::string::npos) << m;
  Values missing;
  EXPECT_EQ(run_reference(g, missing).status().code(), ErrorCode::INVALID_VALUE);
}

TEST(Harness, CompareHonoursTolerance) {
  OpGraph g;
  Values e{{"y", Array({2, 2}, 1.0)}};
  Values a = e;
  a.at("y")[3] = 1.0 + 1e-3;
  EXPECT_EQ(compare("t", g, e, a, {{"y", {0.0, 2e-3}}}), "");
  std::string m = compare("t", g, e, a, {{"y", {0.0, 5e-4}}});
  EXPECT_NE(m.find("at [1, 1]"), std::string::npos) << m;
  EXPECT_NE(m.find("1 of 4 elements differ"), std::string::npos) << m;
}

TEST(Harness, EveryAcceptingEngineIsCompared) {
  Case c = matmul_case(DataType::FLOAT);
  int ran = 0;
  Engine wrong{"off_by_one", [](const OpGraph&) { return true; },
               [&ran](const OpGraph& g, const std::map<std::int64_t, reference::HostBuffer>& b) {
                 ++ran;
                 Status s = reference::execute(g, b);
                 for (const auto& t : graph_outputs(g))
                   reference::store_element(b.at(t->get_uid()).data, 0, t->get_data_type(), 1e9);
                 return s;
               }};
  Engine declines{"declines", [](const OpGraph&) { return false; }, nullptr};
  std::vector<Engine> engines{reference_engine(), declines};
  Values v = check_case(c, engines);  // the reference against itself passes; the decliner is skipped
  ASSERT_EQ(v.count("c"), 1u);
  EXPECT_EQ(v.count("a"), 1u);
  engines.push_back(wrong);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    (void)check_case(c, engines);
  }
  EXPECT_EQ(ran, 1);
  ASSERT_EQ(failures.size(), 1);
  EXPECT_NE(std::string(failures.GetTestPartResult(0).message()).find("on off_by_one"), std::string::npos);
}

TEST(Harness, FiniteDifferencesMatchMatmulGradient) {
  // L = sum(W ⊙ (A @ B)) => dL/dA = W @ B^T, dL/dB = A^T @ W.
  Case c = matmul_case(DataType::DOUBLE);
  OpGraph g;
  ASSERT_TRUE(build(c, g).is_good());
  Values in = make_inputs(c, g);
  Values w{{"c", random_array({2, 3, 5}, 9)}};
  auto da = fd_gradient(g, in, "a", w);
  auto db = fd_gradient(g, in, "b", w);
  ASSERT_TRUE(da.is_good() && db.is_good());
  const Array &A = in.at("a"), &B = in.at("b"), &W = w.at("c");
  for (int bt = 0; bt < 2; ++bt)
    for (int m = 0; m < 3; ++m)
      for (int k = 0; k < 4; ++k) {
        double s = 0;
        for (int n = 0; n < 5; ++n) s += W.at({bt, m, n}) * B.at({k, n});
        EXPECT_NEAR(da->at({bt, m, k}), s, 1e-8);
      }
  for (int k = 0; k < 4; ++k)
    for (int n = 0; n < 5; ++n) {
      double s = 0;
      for (int bt = 0; bt < 2; ++bt)
        for (int m = 0; m < 3; ++m) s += A.at({bt, m, k}) * W.at({bt, m, n});
      EXPECT_NEAR(db->at({k, n}), s, 1e-8);
    }
  EXPECT_EQ(fd_gradient(g, in, "nope", w).status().code(), ErrorCode::INVALID_VALUE);
}
