// Reference kernels of the per-sample norms (layernorm, instancenorm, adalayernorm,
// rmsnorm): closed forms computed here by independent loops (per-group zero mean and
// unit variance / unit RMS with scale 1 and bias 0; MEAN / INV_VARIANCE; Y = unit * SCALE
// + BIAS; INFERENCE equals TRAINING's Y), and every backward against central finite
// differences of its forward in float64.
// Tolerances: closed forms 1e-12 abs (float64 end to end); backward vs FD atol 1e-7, rtol 1e-6.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "grad_check_util.h"

using namespace opgraph;
using namespace opgraph::harness;
using namespace opgraph::gradcheck;

namespace {

constexpr double kEps = 1e-3;

struct Kind {
  std::string op;                // layernorm, instancenorm, adalayernorm, rmsnorm
  Dims x, scale;
  std::set<std::size_t> normalized;  // axes each group spans (stated here, independent of the kernel)
};

std::vector<Kind> kinds() {
  return {{"layernorm", {3, 4, 5}, {1, 4, 5}, {1, 2}},
          {"layernorm", {2, 3, 6}, {1, 1, 6}, {2}},
          {"instancenorm", {2, 3, 4, 3}, {1, 3, 1, 1}, {2, 3}},
          {"adalayernorm", {2, 5, 6}, {2, 1, 6}, {2}},
          {"rmsnorm", {3, 8}, {1, 8}, {1}}};
}

std::array<TensorPtr, 3> forward(OpGraph& g, const std::string& op, TensorPtr x, TensorPtr s, TensorPtr b,
                                 const char* phase) {
  auto eps = g.tensor_scalar(kEps, DataType::DOUBLE);
  auto a = Attributes().set("forward_phase", phase);
  if (op == "layernorm") return g.layernorm(x, s, b, eps, a);
  if (op == "instancenorm") return g.instancenorm(x, s, b, eps, a);
  if (op == "adalayernorm") return g.adalayernorm(x, s, b, eps, a);
  auto [y, iv] = g.rmsnorm(x, s, eps, a, b);
  return {y, nullptr, iv};
}

// Flat group key of every element: its index with the normalized axes zeroed.
std::vector<std::int64_t> group_keys(const Dims& d, const std::set<std::size_t>& normalized) {
  std::vector<std::int64_t> keys;
  reference::for_each_index(d, [&](std::span<const std::int64_t> idx) {
    std::int64_t k = 0;
    for (std::size_t a = 0; a < d.size(); ++a) k = k * d[a] + (normalized.count(a) ? 0 : idx[a]);
    keys.push_back(k);
  });
  return keys;
}

std::vector<std::int64_t> scale_index(const Dims& x, const Dims& s) {
  std::vector<std::int64_t> r;
  reference::for_each_index(x, [&](std::span<const std::int64_t> idx) {
    std::int64_t k = 0;
    for (std::size_t a = 0; a < x.size(); ++a) k = k * s[a] + (s[a] == 1 ? 0 : idx[a]);
    r.push_back(k);
  });
  return r;
}

}  // namespace

TEST(NormRef, UnitOutputsStatsAndAffineClosedForm) {
  for (const Kind& k : kinds()) {
    const bool rms = k.op == "rmsnorm";
    Case c;
    c.name = k.op + "_closed_form";
    c.seed = 3;
    c.build = [&](OpGraph& g) {
      auto x = in64(g, k.x, "x");
      auto [y1, m, iv] = forward(g, k.op, x, in64(g, k.scale, "one"), rms ? nullptr : in64(g, k.scale, "zero"), "TRAINING");
      out64(y1, "y_unit");
      if (m) out64(m, "mean");
      out64(iv, "inv_var");
      auto [y2, m2, iv2] = forward(g, k.op, x, in64(g, k.scale, "scale"), in64(g, k.scale, "bias"), "INFERENCE");
      EXPECT_FALSE(m2 || iv2);
      out64(y2, "y");
    };
    c.fixed["one"] = Array(k.scale, 1.0);
    if (!rms) c.fixed["zero"] = Array(k.scale, 0.0);
    c.ranges["scale"] = {0.5, 2.0};
    Values v = check_case(c);
    ASSERT_TRUE(v.count("y")) << c.name;
    const Array &x = v.at("x"), &yu = v.at("y_unit"), &y = v.at("y"), &iv = v.at("inv_var");
    auto keys = group_keys(k.x, k.normalized);
    std::map<std::int64_t, double> sum, n, sq, ysum, ysq;
    for (std::int64_t i = 0; i < x.numel(); ++i) { sum[keys[i]] += x[i]; n[keys[i]] += 1; }
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      double d = x[i] - (rms ? 0.0 : sum[keys[i]] / n[keys[i]]);
      sq[keys[i]] += d * d;
      ysum[keys[i]] += yu[i];
      ysq[keys[i]] += yu[i] * yu[i];
    }
    ASSERT_GT(sum.size(), 1u) << c.name;
    ASSERT_EQ(static_cast<std::int64_t>(sum.size()), iv.numel()) << c.name;
    std::int64_t gi = 0;
    for (auto& [key, s] : sum) {  // map order = row-major order of the stats entries
      const double var = sq[key] / n[key];
      const double mean_y = ysum[key] / n[key];
      if (!rms) {
        EXPECT_NEAR(mean_y, 0.0, 1e-12) << c.name << " group " << key << ": zero mean";
      }
      // Unit variance (unit RMS for rmsnorm) up to the epsilon: var / (var + eps).
      EXPECT_NEAR(ysq[key] / n[key] - (rms ? 0.0 : mean_y * mean_y), var / (var + kEps), 1e-12) << c.name;
      EXPECT_NEAR(iv[gi], 1.0 / std::sqrt(var + kEps), 1e-12) << c.name;
      if (!rms) {
        EXPECT_NEAR(v.at("mean")[gi], s / n[key], 1e-12) << c.name;
      }
      ++gi;
    }
    auto si = scale_index(k.x, k.scale);
    for (std::int64_t i = 0; i < x.numel(); ++i)
      EXPECT_NEAR(y[i], yu[i] * v.at("scale")[si[i]] + v.at("bias")[si[i]], 1e-12) << c.name << " at " << i;
  }
}

TEST(NormRef, HalfInputsRoundTheOutput) {
  Case c;
  c.name = "layernorm_half";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({4, 16}, DataType::HALF, "x");
    auto s = g.tensor({1, 16}, DataType::FLOAT, "scale");
    auto b = g.tensor({1, 16}, DataType::FLOAT, "bias");
    auto [y, m, iv] = g.layernorm(x, s, b, g.tensor_scalar(1e-5), Attributes().set("forward_phase", "TRAINING"));
    y->set_output(true).set_name("y").set_data_type(DataType::HALF);
    m->set_output(true).set_name("mean");
    iv->set_output(true).set_name("inv_var");
  };
  Values v = check_case(c);
  const Array &x = v.at("x"), &y = v.at("y");
  const double eps = reference::round_to(DataType::FLOAT, 1e-5);
  for (int r = 0; r < 4; ++r) {
    double mean = 0, var = 0;
    for (int j = 0; j < 16; ++j) mean += x.at({r, j}) / 16;
    for (int j = 0; j < 16; ++j) var += (x.at({r, j}) - mean) * (x.at({r, j}) - mean) / 16;
    EXPECT_EQ(v.at("mean")[r], reference::round_to(DataType::FLOAT, mean));
    for (int j = 0; j < 16; ++j) {
      double e = (x.at({r, j}) - mean) / std::sqrt(var + eps) * v.at("scale")[j] + v.at("bias")[j];
      EXPECT_EQ(y.at({r, j}), reference::round_to(DataType::HALF, e)) << r << "," << j;
    }
  }
}

TEST(NormRef, BackwardMatchesFiniteDifferences) {
  for (const Kind& k : kinds()) {
    for (bool with_bias : {true, false}) {
      const bool rms = k.op == "rmsnorm";
      if (!rms && !with_bias) continue;
      Case fc;
      fc.name = k.op + "_fwd";
      fc.seed = 5;
      fc.build = [&](OpGraph& g) {
        auto [y, m, iv] = forward(g, k.op, in64(g, k.x, "x"), in64(g, k.scale, "scale"),
                                  with_bias ? in64(g, k.scale, "bias") : nullptr, "TRAINING");
        out64(y, "y");
        if (m) out64(m, "mean");
        out64(iv, "inv_var");
      };
      fc.ranges["scale"] = {0.5, 1.5};
      Forward f = run_forward(fc);
      ASSERT_TRUE(f.out.count("y"));
      Values w{{"y", random_array(k.x, 7)}};

      Case bc;
      bc.name = k.op + "_bwd";
      bc.build = [&](OpGraph& g) {
        auto dy = in64(g, k.x, "dy");
        auto x = in64(g, k.x, "x");
        auto s = in64(g, k.scale, "scale");
        auto iv = in64(g, f.out.at("inv_var").dims, "inv_var");
        std::array<TensorPtr, 3> o;
        if (rms) {
          o = g.rmsnorm_backward(dy, x, s, iv, Attributes().set("has_dbias", with_bias));
        } else {
          auto m = in64(g, f.out.at("mean").dims, "mean");
          if (k.op == "layernorm") o = g.layernorm_backward(dy, x, s, m, iv);
          if (k.op == "instancenorm") o = g.instancenorm_backward(dy, x, s, m, iv);
          if (k.op == "adalayernorm") o = g.adalayernorm_backward(dy, x, s, m, iv);
        }
        out64(o[0], "dx");
        out64(o[1], "dscale");
        if (o[2]) out64(o[2], "dbias");
      };
      bc.fixed = {{"dy", w.at("y")}, {"x", f.in.at("x")}, {"scale", f.in.at("scale")}, {"inv_var", f.out.at("inv_var")}};
      if (!rms) bc.fixed["mean"] = f.out.at("mean");
      Values b = check_case(bc);
      ASSERT_TRUE(b.count("dx")) << bc.name;
      EXPECT_EQ(b.count("dbias"), with_bias ? 1u : 0u);
      const Tolerance tol{1e-7, 1e-6};
      expect_matches_fd(f, w, "x", b.at("dx"), tol, bc.name + " dx");
      expect_matches_fd(f, w, "scale", b.at("dscale"), tol, bc.name + " dscale");
      if (with_bias) expect_matches_fd(f, w, "bias", b.at("dbias"), tol, bc.name + " dbias");
    }
  }
}
