// Reference pointwise kernel: every one of the 50 modes with broadcasting against an
// independent closed form written here (alternative formulas where one exists),
// analytic identities, clipped/leaky relu, HALF rounding, and each backward mode
// against central finite differences of its forward mode in float64.
// Tolerances: DOUBLE closed forms atol 1e-13 + rtol 1e-12 (two float64 evaluations of
// the same function by different formulas); exact (0) for comparisons, logical,
// select, gen_index, ceil/floor/abs/neg; HALF outputs default_tolerance(HALF);
// finite differences atol 1e-7 + rtol 1e-6 (h = 1e-6: O(h²) truncation, O(eps/h) noise).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "harness.h"

using namespace opgraph;
using namespace opgraph::harness;
using M = PointwiseMode;

namespace {

const Dims kShape0 = {2, 1, 4}, kShape1 = {3, 1}, kShape2 = {2, 3, 1}, kOut = {2, 3, 4};

bool bool_port(const PointwiseModeInfo& m, int i) { return m.traits.is_logical || (m.traits.is_select && i == 2); }

// The closed form of a forward mode, written independently of the kernel.
double expected(M mode, double x, double y, double m) {
  const double sq2 = std::numbers::sqrt2;
  switch (mode) {
    case M::ADD: return x + y;
    case M::SUB: return x - y;
    case M::MUL: return x * y;
    case M::DIV: return x / y;
    case M::ADD_SQUARE: return x + std::pow(y, 2);
    case M::MAX: return x > y ? x : y;
    case M::MIN: return x < y ? x : y;
    case M::MOD: return x - std::trunc(x / y) * y;
    case M::POW: return std::exp(y * std::log(x));
    case M::SQRT: return std::pow(x, 0.5);
    case M::RSQRT: return std::pow(x, -0.5);
    case M::RECIPROCAL: return std::pow(x, -1.0);
    case M::EXP: return std::pow(std::numbers::e, x);
    case M::LOG: return std::log2(x) / std::numbers::log2e;
    case M::NEG: return 0.0 - x;
    case M::ABS: return x < 0 ? -x : x;
    case M::CEIL: return -std::floor(-x);
    case M::FLOOR: return std::floor(x);
    case M::SIN: return std::cos(x - std::numbers::pi / 2);
    case M::COS: return std::sin(x + std::numbers::pi / 2);
    case M::TAN: return std::sin(x) / std::cos(x);
    case M::ERF: return 1.0 - std::erfc(x);
    case M::IDENTITY: return x;
    case M::RELU_FWD: return x > 0 ? x : 0.0;
    case M::TANH_FWD: return (std::exp(2 * x) - 1) / (std::exp(2 * x) + 1);
    case M::SIGMOID_FWD: return 0.5 * (1.0 + std::tanh(x / 2));
    case M::ELU_FWD: return x > 0 ? x : std::exp(x) - 1.0;
    case M::GELU_FWD: return 0.5 * x * std::erfc(-x / sq2);
    case M::GELU_APPROX_TANH_FWD: {
      double u = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
      return x / (1.0 + std::exp(-2.0 * u));  // ½(1 + tanh u) = σ(2u)
    }
    case M::SOFTPLUS_FWD: return std::log(1.0 + std::exp(x));
    case M::SWISH_FWD: return x / (1.0 + std::exp(-x));
    case M::BINARY_SELECT: return m != 0 ? x : y;
    case M::CMP_EQ: return x == y ? 1 : 0;
    case M::CMP_NEQ: return x == y ? 0 : 1;
    case M::CMP_GT: return y < x ? 1 : 0;
    case M::CMP_GE: return y <= x ? 1 : 0;
    case M::CMP_LT: return y > x ? 1 : 0;
    case M::CMP_LE: return y >= x ? 1 : 0;
    case M::LOGICAL_AND: return (x != 0 && y != 0) ? 1 : 0;
    case M::LOGICAL_OR: return (x != 0 || y != 0) ? 1 : 0;
    case M::LOGICAL_NOT: return x != 0 ? 0 : 1;
    default: return std::nan("");  // backward modes and GEN_INDEX are checked elsewhere
  }
}

InputRange range_of(M mode, int port) {
  switch (mode) {
    case M::SQRT: case M::LOG: case M::RSQRT: return {0.1, 3.0};
    case M::RECIPROCAL: return {0.25, 2.0};
    case M::TAN: return {-1.2, 1.2};
    case M::POW: return port == 0 ? InputRange{0.1, 2.0} : InputRange{-2.0, 2.0};
    case M::DIV: case M::MOD: return port == 1 ? InputRange{0.5, 2.0} : InputRange{-3.0, 3.0};
    case M::CEIL: case M::FLOOR: return {-3.0, 3.0};
    default: return {-2.0, 2.0};
  }
}

// Random integers in {-1, 0, 1}, so comparisons see equal and unequal pairs.
Array small_ints(const Dims& d, std::uint64_t seed) {
  Array a = random_array(d, seed, -1.49, 1.49);
  for (auto& v : a.v) v = std::nearbyint(v);
  return a;
}

}  // namespace

TEST(PointwiseRef, EveryForwardModeMatchesItsClosedFormWithBroadcast) {
  int checked = 0;
  for (const PointwiseModeInfo& info : pointwise_modes()) {
    if (info.traits.is_backward || info.mode == M::GEN_INDEX) continue;
    SCOPED_TRACE(std::string(info.name));
    Case c;
    c.name = "pw_" + std::string(info.name);
    c.seed = 100 + static_cast<std::uint64_t>(info.mode);
    c.build = [&info](OpGraph& g) {
      const Dims shapes[3] = {kShape0, kShape1, kShape2};
      std::vector<TensorPtr> in(3);
      for (int i = 0; i < info.arity; ++i)
        in[i] = g.tensor(shapes[i], bool_port(info, i) ? DataType::BOOLEAN : DataType::DOUBLE, "in" + std::to_string(i));
      auto y = g.pointwise(in[0], in[1], in[2], Attributes().set("mode", std::string(info.name)));
      y->set_output(true).set_name("y");
      if (!info.traits.is_comparison && !info.traits.is_logical) y->set_data_type(DataType::DOUBLE);
    };
    for (int i = 0; i < info.arity; ++i) c.ranges["in" + std::to_string(i)] = range_of(info.mode, i);
    if (info.traits.is_comparison) {
      c.fixed["in0"] = small_ints(kShape0, c.seed);
      c.fixed["in1"] = small_ints(kShape1, c.seed + 1);
    }
    Values v = check_case(c);
    ASSERT_FALSE(v.empty());
    const Array& y = v.at("y");
    ASSERT_EQ(y.dims, info.arity == 1 ? kShape0 : kOut);
    const Array* in[3] = {&v.at("in0"), info.arity > 1 ? &v.at("in1") : nullptr, info.arity > 2 ? &v.at("in2") : nullptr};
    bool exact = info.traits.is_comparison || info.traits.is_logical || info.traits.is_select ||
                 info.mode == M::CEIL || info.mode == M::FLOOR || info.mode == M::ABS || info.mode == M::NEG ||
                 info.mode == M::IDENTITY || info.mode == M::MAX || info.mode == M::MIN;
    std::int64_t flat = 0, ones = 0;
    reference::for_each_index(y.dims, [&](std::span<const std::int64_t> idx) {
      double a = in[0]->broadcast_at(idx), b = in[1] ? in[1]->broadcast_at(idx) : 0, m = in[2] ? in[2]->broadcast_at(idx) : 0;
      double e = expected(info.mode, a, b, m), got = y[flat];
      ones += got != 0;
      if (exact) EXPECT_EQ(got, e) << index_str(y.dims, flat);
      else EXPECT_NEAR(got, e, 1e-13 + 1e-12 * std::fabs(e)) << index_str(y.dims, flat) << " a=" << a << " b=" << b;
      ++flat;
    });
    if (info.traits.is_comparison || info.traits.is_logical) {  // both outcomes occur
      EXPECT_GT(ones, 0);
      EXPECT_LT(ones, flat);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 50 - 8 - 1);
}

TEST(PointwiseRef, GenIndexYieldsTheAxisCoordinate) {
  Case c;
  c.name = "gen_index";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({3, 4, 5}, DataType::HALF, "x");
    g.gen_index(x, 1)->set_output(true).set_name("i1");
    g.gen_index(x, -1)->set_output(true).set_name("i2");
  };
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  for (std::int64_t a = 0; a < 3; ++a)
    for (std::int64_t b = 0; b < 4; ++b)
      for (std::int64_t d = 0; d < 5; ++d) {
        EXPECT_EQ(v.at("i1").at({a, b, d}), b);
        EXPECT_EQ(v.at("i2").at({a, b, d}), d);
      }
}

TEST(PointwiseRef, AnalyticIdentities) {
  Case c;
  c.name = "identities";
  c.range = {0.2, 3.0};
  c.build = [](OpGraph& g) {
    auto x = g.tensor({4, 8}, DataType::DOUBLE, "x");
    auto zero = g.tensor({1}, DataType::DOUBLE, "zero");
    auto out = [](TensorPtr t, const char* n) { t->set_output(true).set_name(n).set_data_type(DataType::DOUBLE); };
    out(g.exp(g.log(x)), "exp_log");
    out(g.add(g.mul(g.sin(x), g.sin(x)), g.mul(g.cos(x), g.cos(x))), "pythagoras");
    out(g.mul(g.sqrt(x), g.rsqrt(x)), "sqrt_rsqrt");
    out(g.reciprocal(g.reciprocal(x)), "recip2");
    out(g.sigmoid(zero), "sig0");
    out(g.tanh(zero), "tanh0");
    out(g.gelu(zero), "gelu0");
    out(g.softplus(zero, Attributes().set("softplus_beta", 2.0)), "softplus0");
    out(g.sub(g.add(g.sigmoid(x), g.sigmoid(g.neg(x))), g.tensor_scalar(1.0, DataType::DOUBLE)), "sig_sym");
  };
  c.fixed["zero"] = Array({1}, 0.0);
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array& x = v.at("x");
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_NEAR(v.at("exp_log")[i], x[i], 1e-14 * x[i]);
    EXPECT_NEAR(v.at("pythagoras")[i], 1.0, 1e-15);
    EXPECT_NEAR(v.at("sqrt_rsqrt")[i], 1.0, 1e-15);
    EXPECT_NEAR(v.at("recip2")[i], x[i], 1e-15 * x[i]);
    EXPECT_NEAR(v.at("sig_sym")[i], 0.0, 1e-15);
  }
  EXPECT_EQ(v.at("sig0")[0], 0.5);
  EXPECT_EQ(v.at("tanh0")[0], 0.0);
  EXPECT_EQ(v.at("gelu0")[0], 0.0);
  EXPECT_NEAR(v.at("softplus0")[0], std::log(2.0) / 2.0, 1e-16);
}

TEST(PointwiseRef, ClippedLeakyReluAndParameterisedActivations) {
  Case c;
  c.name = "relu_params";
  c.range = {-3.0, 3.0};
  c.build = [](OpGraph& g) {
    auto x = g.tensor({64}, DataType::DOUBLE, "x");
    auto out = [](TensorPtr t, const char* n) { t->set_output(true).set_name(n).set_data_type(DataType::DOUBLE); };
    out(g.relu(x, Attributes().set("relu_lower_clip", -0.5).set("relu_upper_clip", 0.7).set("relu_lower_clip_slope", 0.1)), "clip");
    out(g.leaky_relu(x, 0.2), "leaky");
    out(g.swish(x, Attributes().set("swish_beta", 1.7)), "swish");
    out(g.elu(x, Attributes().set("elu_alpha", 0.6)), "elu");
    out(g.softplus(x, Attributes().set("softplus_beta", 3.0)), "softplus");
  };
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array& x = v.at("x");
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    double xi = x[i];
    double clip = xi > 0.7 ? 0.7 : xi >= -0.5 ? xi : -0.5 - 0.1 * (-0.5 - xi);
    EXPECT_DOUBLE_EQ(v.at("clip")[i], clip);
    EXPECT_DOUBLE_EQ(v.at("leaky")[i], xi > 0 ? xi : 0.2 * xi);
    EXPECT_NEAR(v.at("swish")[i], xi * 0.5 * (1 + std::tanh(0.85 * xi)), 1e-14);
    EXPECT_NEAR(v.at("elu")[i], xi > 0 ? xi : 0.6 * (std::exp(xi) - 1), 1e-15);
    EXPECT_NEAR(v.at("softplus")[i], std::log(1 + std::exp(3 * xi)) / 3, 1e-14);
  }
}

TEST(PointwiseRef, HalfOutputsAreRoundedToNearestEven) {
  Case c;
  c.name = "gelu_half";
  c.range = {-4.0, 4.0};
  c.build = [](OpGraph& g) {
    auto x = g.tensor({8, 16}, DataType::HALF, "x");
    g.gelu(x)->set_output(true).set_name("y").set_data_type(DataType::HALF);
    g.exp(x)->set_output(true).set_name("e").set_data_type(DataType::BFLOAT16);
  };
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array& x = v.at("x");
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_EQ(v.at("y")[i], reference::round_to(DataType::HALF, 0.5 * x[i] * std::erfc(-x[i] / std::numbers::sqrt2)));
    EXPECT_EQ(v.at("e")[i], reference::round_to(DataType::BFLOAT16, std::exp(x[i])));
  }
}

// Each backward mode (dy, x) against central differences of its forward mode.
TEST(PointwiseRef, BackwardModesMatchFiniteDifferencesOfTheirForward) {
  const Attributes params = Attributes()
                                .set("relu_lower_clip", -0.4).set("relu_upper_clip", 1.1).set("relu_lower_clip_slope", 0.15);
  int checked = 0;
  for (const PointwiseModeInfo& info : pointwise_modes()) {
    if (!info.traits.is_backward) continue;
    SCOPED_TRACE(std::string(info.name));
    Attributes a;
    if (info.traits.uses_relu_clip) a = params;
    if (info.traits.uses_swish_beta) a.set("swish_beta", 1.3);
    if (info.traits.uses_elu_alpha) a.set("elu_alpha", 0.7);
    if (info.traits.uses_softplus_beta) a.set("softplus_beta", 2.0);
    const std::string fwd(pointwise_mode_info(info.forward).name), bwd(info.name);
    Case f;
    f.name = "fwd_" + fwd;
    f.seed = 300 + static_cast<std::uint64_t>(info.mode);
    f.range = {-2.5, 2.5};
    f.build = [&](OpGraph& g) {
      auto x = g.tensor({3, 7}, DataType::DOUBLE, "x");
      g.pointwise(x, nullptr, nullptr, Attributes(a).set("mode", fwd))
          ->set_output(true).set_name("y").set_data_type(DataType::DOUBLE);
    };
    OpGraph gf;
    ASSERT_TRUE(build(f, gf).is_good());
    Values in = make_inputs(f, gf);
    for (double xi : in.at("x").v)  // keep clear of kinks (relu clips, elu at 0)
      ASSERT_TRUE(std::fabs(xi) > 1e-4 && std::fabs(xi + 0.4) > 1e-4 && std::fabs(xi - 1.1) > 1e-4) << xi;
    Values w{{"y", random_array({3, 7}, f.seed + 1)}};
    auto fd = fd_gradient(gf, in, "x", w);
    ASSERT_TRUE(fd.is_good()) << fd.status().to_string();
    Case b;
    b.name = "bwd_" + bwd;
    b.build = [&](OpGraph& g) {
      auto dy = g.tensor({3, 7}, DataType::DOUBLE, "dy");
      auto x = g.tensor({3, 7}, DataType::DOUBLE, "x");
      g.pointwise(dy, x, nullptr, Attributes(a).set("mode", bwd))
          ->set_output(true).set_name("dx").set_data_type(DataType::DOUBLE);
    };
    b.fixed = {{"dy", w.at("y")}, {"x", in.at("x")}};
    Values v = check_case(b);
    ASSERT_FALSE(v.empty());
    OpGraph gb;
    ASSERT_TRUE(build(b, gb).is_good());
    EXPECT_EQ(compare(b.name + " vs fd", gb, {{"dx", *fd}}, {{"dx", v.at("dx")}}, {{"dx", {1e-7, 1e-6}}}), "");
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST(PointwiseRef, LeakyReluBackwardMatchesFiniteDifferences) {
  Case f;
  f.name = "leaky_fwd";
  f.range = {-2.0, 2.0};
  f.build = [](OpGraph& g) {
    g.leaky_relu(g.tensor({16}, DataType::DOUBLE, "x"), 0.05)->set_output(true).set_name("y").set_data_type(DataType::DOUBLE);
  };
  OpGraph gf;
  ASSERT_TRUE(build(f, gf).is_good());
  Values in = make_inputs(f, gf);
  Values w{{"y", random_array({16}, 9)}};
  auto fd = fd_gradient(gf, in, "x", w);
  ASSERT_TRUE(fd.is_good());
  Case b;
  b.name = "leaky_bwd";
  b.build = [](OpGraph& g) {
    g.leaky_relu_backward(g.tensor({16}, DataType::DOUBLE, "dy"), g.tensor({16}, DataType::DOUBLE, "x"), 0.05)
        ->set_output(true).set_name("dx").set_data_type(DataType::DOUBLE);
  };
  b.fixed = {{"dy", w.at("y")}, {"x", in.at("x")}};
  Values v = check_case(b);
  ASSERT_FALSE(v.empty());
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_NEAR(v.at("dx")[i], (*fd)[i], 1e-7 + 1e-6 * std::fabs((*fd)[i]));
}
