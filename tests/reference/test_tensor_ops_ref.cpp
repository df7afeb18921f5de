// Reference tensor-ops core kernels: reduction (every mode against loops written here),
// rng (Philox-4x32-10 known-answer vectors, determinism in seed/offset, distribution
// moments, stride independence), reshape/transpose/slice/concatenate (index maps and
// compositions that must give back the input exactly).
// Tolerances: reductions atol 1e-13 + rtol 1e-12 (float64, different summation order);
// data movement exact; rng moments within 4 standard errors of the sample statistic.
#include <gtest/gtest.h>

#include <cmath>

#include "engines/reference/rng.h"
#include "harness.h"

using namespace opgraph;
using namespace opgraph::harness;

TEST(TensorOpsRef, EveryReductionModeMatchesLoops) {
  const char* modes[] = {"ADD", "MUL", "MIN", "MAX", "AMAX", "AVG", "NORM1", "NORM2", "MUL_NO_ZEROS"};
  for (const char* mode : modes) {
    SCOPED_TRACE(mode);
    Case c;
    c.name = std::string("reduce_") + mode;
    c.range = {-2.0, 2.0};
    c.build = [mode](OpGraph& g) {
      auto x = g.tensor({3, 4, 5}, DataType::DOUBLE, "x");
      g.reduction(x, Attributes().set("mode", mode))->set_dim({3, 1, 5}).set_output(true).set_name("mid").set_data_type(DataType::DOUBLE);
      g.reduction(x, Attributes().set("mode", mode))->set_dim({1, 1, 1}).set_output(true).set_name("all").set_data_type(DataType::DOUBLE);
    };
    Array x = random_array({3, 4, 5}, 11);
    for (int i = 0; i < 60; i += 7) x[i] = 0.0;  // zeros for MUL_NO_ZEROS
    c.fixed["x"] = x;
    Values v = check_case(c);
    ASSERT_FALSE(v.empty());
    auto fold = [&](const std::vector<double>& xs) {
      std::string m = mode;
      double r = (m == "MUL" || m == "MUL_NO_ZEROS") ? 1.0 : m == "MIN" ? INFINITY : m == "MAX" ? -INFINITY : 0.0;
      for (double e : xs) {
        if (m == "ADD" || m == "AVG") r += e;
        else if (m == "MUL") r *= e;
        else if (m == "MUL_NO_ZEROS") r *= (e == 0.0 ? 1.0 : e);
        else if (m == "MIN") r = e < r ? e : r;
        else if (m == "MAX") r = e > r ? e : r;
        else if (m == "AMAX") r = std::abs(e) > r ? std::abs(e) : r;
        else if (m == "NORM1") r += std::abs(e);
        else r += e * e;
      }
      if (m == "AVG") r /= static_cast<double>(xs.size());
      if (m == "NORM2") r = std::sqrt(r);
      return r;
    };
    for (int a = 0; a < 3; ++a)
      for (int cc = 0; cc < 5; ++cc) {
        std::vector<double> xs;
        for (int b = 0; b < 4; ++b) xs.push_back(x.at({a, b, cc}));
        double e = fold(xs);
        EXPECT_NEAR(v.at("mid").at({a, 0, cc}), e, 1e-13 + 1e-12 * std::abs(e));
      }
    double e = fold(x.v);
    EXPECT_NEAR(v.at("all")[0], e, 1e-13 + 1e-12 * std::abs(e));
  }
}

// Random123's known-answer vectors for philox4x32 with 10 rounds.
TEST(TensorOpsRef, PhiloxKnownAnswers) {
  using reference::philox4x32_10;
  using W = std::array<std::uint32_t, 4>;
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (W{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (W{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (W{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(TensorOpsRef, RngIsDeterministicInSeedAndOffsetAndHasTheRightMoments) {
  constexpr std::int64_t n = 4096;
  Case c;
  c.name = "rng";
  c.build = [](OpGraph& g) {
    auto seed = g.tensor({1}, DataType::INT64, "seed");
    auto off = g.tensor({1}, DataType::INT64, "off");
    auto out = [](TensorPtr t, const char* name) { t->set_output(true).set_name(name).set_data_type(DataType::DOUBLE); };
    auto uni = Attributes().set("distribution", "UNIFORM").set("dim", std::vector<std::int64_t>{64, 64})
                   .set("uniform_dist_minimum", 2.0).set("uniform_dist_maximum", 3.0);
    out(g.rng(seed, off, uni), "u");
    out(g.rng(seed, off, uni), "u_again");
    out(g.rng(nullptr, off, Attributes(uni).set("seed", std::int64_t{20260})), "u_attr");
    out(g.rng(seed, nullptr, uni), "u_off0");
    out(g.rng(seed, off, Attributes(uni).set("stride", std::vector<std::int64_t>{1, 64})), "u_colmajor");
    out(g.rng(seed, off, Attributes().set("distribution", "NORMAL").set("dim", std::vector<std::int64_t>{n})
                             .set("normal_dist_mean", -1.0).set("normal_dist_standard_deviation", 0.5)), "z");
    out(g.rng(seed, off, Attributes().set("distribution", "BERNOULLI").set("dim", std::vector<std::int64_t>{n})
                             .set("bernoulli_probability", 0.3)), "b");
  };
  c.fixed["seed"] = Array({1}, 20260);
  c.fixed["off"] = Array({1}, 5);
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array& u = v.at("u");
  EXPECT_EQ(u.v, v.at("u_again").v);
  EXPECT_EQ(u.v, v.at("u_attr").v);         // the seed attribute is the Seed tensor's twin
  EXPECT_EQ(u.v, v.at("u_colmajor").v);     // logical index, not memory order
  int same = 0;
  for (std::int64_t i = 0; i < n; ++i) same += u[i] == v.at("u_off0")[i];
  EXPECT_LT(same, 4);  // another offset is another stream
  double mean = 0, zm = 0, zv = 0, ones = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(u[i] > 2.0 && u[i] < 3.0);
    EXPECT_EQ(u[i], 2.0 + reference::rng_uniform(20260, 5, static_cast<std::uint64_t>(i)));
    mean += u[i] / n;
    zm += v.at("z")[i] / n;
    ASSERT_TRUE(v.at("b")[i] == 0.0 || v.at("b")[i] == 1.0);
    ones += v.at("b")[i];
  }
  for (std::int64_t i = 0; i < n; ++i) zv += (v.at("z")[i] - zm) * (v.at("z")[i] - zm) / (n - 1);
  const double se = 1.0 / std::sqrt(static_cast<double>(n));
  EXPECT_NEAR(mean, 2.5, 4 * se / std::sqrt(12.0));
  EXPECT_NEAR(zm, -1.0, 4 * 0.5 * se);
  EXPECT_NEAR(std::sqrt(zv), 0.5, 4 * 0.5 * se / std::sqrt(2.0));
  EXPECT_NEAR(ones / n, 0.3, 4 * std::sqrt(0.3 * 0.7) * se);
}

TEST(TensorOpsRef, TransposeSliceReshapeMoveElementsAsIndexed) {
  Case c;
  c.name = "movement";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({2, 3, 4}, DataType::FLOAT, "x");
    auto out = [](TensorPtr t, const char* n) { t->set_output(true).set_name(n).set_data_type(DataType::FLOAT); };
    auto t = g.transpose(x, Attributes().set("permutation", std::vector<std::int64_t>{2, 0, 1}));
    out(t, "t");
    out(g.transpose(t, Attributes().set("permutation", std::vector<std::int64_t>{1, 2, 0})), "tt");
    out(g.slice(x, Attributes().set("slices", std::vector<std::int64_t>{1, 2, 0, 3, 1, 4})
                       .set("strides", std::vector<std::int64_t>{1, 2, 2})), "s");
    auto r = g.reshape(x, Attributes().set("reshape_mode", "LOGICAL").set("dim", std::vector<std::int64_t>{4, 6})
                              .set("stride", std::vector<std::int64_t>{1, 4}));
    out(r, "r");
  };
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array& x = v.at("x");
  EXPECT_EQ(v.at("tt").v, x.v);  // the inverse permutation gives X back
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int d = 0; d < 4; ++d) EXPECT_EQ(v.at("t").at({d, a, b}), x.at({a, b, d}));
  ASSERT_EQ(v.at("s").dims, (Dims{1, 2, 2}));
  for (int b = 0; b < 2; ++b)
    for (int d = 0; d < 2; ++d) EXPECT_EQ(v.at("s").at({0, b, d}), x.at({1, 2 * b, 1 + 2 * d}));
  EXPECT_EQ(v.at("r").v, x.v);  // row-major logical order kept, whatever Y's strides
}

TEST(TensorOpsRef, ConcatenateThenSliceGivesThePartsBack) {
  Case c;
  c.name = "concat_slice";
  c.build = [](OpGraph& g) {
    auto a = g.tensor({2, 3, 2}, DataType::HALF, "a");
    auto b = g.tensor({2, 1, 2}, DataType::HALF, "b");
    auto d = g.tensor({2, 4, 2}, DataType::HALF, "d");
    auto y = g.concatenate({a, b, d}, Attributes().set("axis", std::int64_t{1}));
    y->set_output(true).set_name("y");
    g.slice(y, Attributes().set("slices", std::vector<std::int64_t>{0, 2, 3, 4, 0, 2}))->set_output(true).set_name("b_back");
    g.slice(y, Attributes().set("slices", std::vector<std::int64_t>{0, 2, 4, 8, 0, 2}))->set_output(true).set_name("d_back");
  };
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.at("y").dims, (Dims{2, 8, 2}));
  EXPECT_EQ(v.at("b_back").v, v.at("b").v);
  EXPECT_EQ(v.at("d_back").v, v.at("d").v);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(v.at("y").at({i, j, k}), v.at("a").at({i, j, k}));
}
