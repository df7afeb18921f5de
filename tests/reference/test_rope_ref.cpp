// Reference rope / rope_backward: both rotations (ROTATE_HALF, INTERLEAVED) with a partial
// rotary width against a loop written here; per-head norm preserved for unit (cos, sin);
// INTERLEAVED equals ROTATE_HALF on channel-permuted input; rope_backward inverts rope for
// unit (cos, sin); rope_backward against central finite differences of rope (arbitrary cos/sin).
// Tolerances: float64 closed forms 1e-12 abs; backward vs FD atol 1e-8, rtol 1e-7 (rope is linear).
#include <gtest/gtest.h>

#include <cmath>

#include "grad_check_util.h"

using namespace opgraph;
using namespace opgraph::harness;
using namespace opgraph::gradcheck;

namespace {

const Dims kX{2, 5, 3, 10};  // [B, S, H, D]
constexpr std::int64_t kHalf = 3;  // R = 6 < D = 10: channels 6..9 pass through

// cos / sin of theta[s, i] = (s + 1) * 0.7^i (unit pairs).
std::pair<Array, Array> angles() {
  Array c({kX[1], kHalf}), s({kX[1], kHalf});
  for (std::int64_t p = 0; p < kX[1]; ++p)
    for (std::int64_t i = 0; i < kHalf; ++i) {
      double th = static_cast<double>(p + 1) * std::pow(0.7, static_cast<double>(i));
      c.at({p, i}) = std::cos(th);
      s.at({p, i}) = std::sin(th);
    }
  return {c, s};
}

Case rope_case(const std::string& name, bool fwd_then_bwd) {
  Case c;
  c.name = name;
  c.build = [fwd_then_bwd](OpGraph& g) {
    auto x = in64(g, kX, "x");
    auto co = in64(g, {kX[1], kHalf}, "cos"), si = in64(g, {kX[1], kHalf}, "sin");
    for (const char* rot : {"ROTATE_HALF", "INTERLEAVED"}) {
      auto y = g.rope(x, co, si, Attributes().set("rotation", rot));
      out64(y, std::string("y_") + rot);
      if (fwd_then_bwd) out64(g.rope_backward(y, co, si, Attributes().set("rotation", rot)), std::string("back_") + rot);
    }
  };
  auto [c0, s0] = angles();
  c.fixed = {{"cos", c0}, {"sin", s0}};
  return c;
}

}  // namespace

TEST(RopeRef, BothRotationsAgainstLoopNormAndInverse) {
  Values v = check_case(rope_case("rope_closed_form", true));
  ASSERT_TRUE(v.count("y_INTERLEAVED"));
  const Array &x = v.at("x"), &co = v.at("cos"), &si = v.at("sin");
  for (bool inter : {false, true}) {
    const Array& y = v.at(inter ? "y_INTERLEAVED" : "y_ROTATE_HALF");
    const Array& back = v.at(inter ? "back_INTERLEAVED" : "back_ROTATE_HALF");
    for (std::int64_t b = 0; b < kX[0]; ++b)
      for (std::int64_t s = 0; s < kX[1]; ++s)
        for (std::int64_t h = 0; h < kX[2]; ++h) {
          double nx = 0, ny = 0;
          for (std::int64_t d = 0; d < kX[3]; ++d) {
            double e = x.at({b, s, h, d});
            if (d < 2 * kHalf) {
              // Partner channel and the angle index of d.
              std::int64_t i = inter ? d / 2 : d % kHalf;
              bool first = inter ? d % 2 == 0 : d < kHalf;
              std::int64_t partner = inter ? (first ? d + 1 : d - 1) : (first ? d + kHalf : d - kHalf);
              double xp = x.at({b, s, h, partner});
              e = first ? e * co.at({s, i}) - xp * si.at({s, i}) : e * co.at({s, i}) + xp * si.at({s, i});
            }
            EXPECT_NEAR(y.at({b, s, h, d}), e, 1e-12) << inter << " " << b << s << h << d;
            EXPECT_NEAR(back.at({b, s, h, d}), x.at({b, s, h, d}), 1e-12) << "rope_backward inverts rope";
            nx += x.at({b, s, h, d}) * x.at({b, s, h, d});
            ny += y.at({b, s, h, d}) * y.at({b, s, h, d});
          }
          EXPECT_NEAR(nx, ny, 1e-12) << "rotation preserves the head's norm";
        }
  }
}

TEST(RopeRef, InterleavedIsRotateHalfOnPermutedChannels) {
  Case c = rope_case("rope_interleaved", false);
  Values v = check_case(c);
  ASSERT_TRUE(v.count("y_INTERLEAVED"));
  // perm: interleaved channel 2i -> i, 2i+1 -> i + R/2; channels >= R fixed.
  auto perm = [](std::int64_t d) { return d >= 2 * kHalf ? d : (d % 2 == 0 ? d / 2 : d / 2 + kHalf); };
  Array xp(kX);
  const Array& x = v.at("x");
  reference::for_each_index(kX, [&](std::span<const std::int64_t> idx) {
    xp.at({idx[0], idx[1], idx[2], perm(idx[3])}) = x.at({idx[0], idx[1], idx[2], idx[3]});
  });
  Case c2 = rope_case("rope_half_on_permuted", false);
  c2.fixed["x"] = xp;
  Values v2 = check_case(c2);
  ASSERT_TRUE(v2.count("y_ROTATE_HALF"));
  reference::for_each_index(kX, [&](std::span<const std::int64_t> idx) {
    EXPECT_NEAR(v2.at("y_ROTATE_HALF").at({idx[0], idx[1], idx[2], perm(idx[3])}),
                v.at("y_INTERLEAVED").at({idx[0], idx[1], idx[2], idx[3]}), 1e-12);
  });
}

TEST(RopeRef, BackwardMatchesFiniteDifferences) {
  for (const char* rot : {"ROTATE_HALF", "INTERLEAVED"}) {
    Case fc;
    fc.name = std::string("rope_fwd_") + rot;
    fc.seed = 17;
    fc.build = [rot](OpGraph& g) {
      out64(g.rope(in64(g, kX, "x"), in64(g, {kX[1], kHalf}, "cos"), in64(g, {kX[1], kHalf}, "sin"),
                   Attributes().set("rotation", rot)),
            "y");
    };
    Forward f = run_forward(fc);  // random (non-unit) cos / sin: the transpose, not the inverse, is the gradient
    Values w{{"y", random_array(kX, 3)}};
    Case bc;
    bc.name = std::string("rope_bwd_") + rot;
    bc.build = [rot](OpGraph& g) {
      out64(g.rope_backward(in64(g, kX, "dy"), in64(g, {kX[1], kHalf}, "cos"), in64(g, {kX[1], kHalf}, "sin"),
                            Attributes().set("rotation", rot)),
            "dx");
    };
    bc.fixed = {{"dy", w.at("y")}, {"cos", f.in.at("cos")}, {"sin", f.in.at("sin")}};
    Values b = check_case(bc);
    ASSERT_TRUE(b.count("dx"));
    expect_matches_fd(f, w, "x", b.at("dx"), {1e-8, 1e-7}, bc.name);
  }
}
