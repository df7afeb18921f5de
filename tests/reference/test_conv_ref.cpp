// Reference conv_fprop / conv_dgrad / conv_wgrad: a delta filter reproduces the input
// (dense and depthwise); fprop against an independent N-d loop written here for 1-D, 2-D
// (groups, asymmetric padding, stride, dilation, both convolution modes) and 3-D; a
// channels-last X (strides) gives the packed result; dgrad and wgrad against central
// finite differences of fprop, including an input row the stride never reaches.
// Tolerances: float64 closed forms 1e-12 abs; FD atol 1e-8, rtol 1e-7 (conv is bilinear).
#include <gtest/gtest.h>

#include "grad_check_util.h"

using namespace opgraph;
using namespace opgraph::harness;
using namespace opgraph::gradcheck;

namespace {

struct Geo {
  Dims x, w, pre, post, stride, dilation;
  bool flip = false;
  Attributes attrs() const {
    return Attributes()
        .set("pre_padding", pre)
        .set("post_padding", post)
        .set("stride", stride)
        .set("dilation", dilation)
        .set("convolution_mode", flip ? "CONVOLUTION" : "CROSS_CORRELATION");
  }
  Dims y() const {
    Dims d{x[0], w[0]};
    for (std::size_t s = 0; s + 2 < x.size(); ++s)
      d.push_back((x[s + 2] + pre[s] + post[s] - dilation[s] * (w[s + 2] - 1) - 1) / stride[s] + 1);
    return d;
  }
};

// Direct definition: y[n,k,o] = sum_{cg,t} x[n, grp*Cg+cg, o*stride - pre + t*dil] * w[k, cg, t or flipped t].
Array direct_conv(const Geo& g, const Array& x, const Array& w) {
  Array y(g.y());
  const std::int64_t cg = g.w[1], groups = g.x[1] / cg, kg = g.w[0] / groups;
  const std::size_t sp = g.x.size() - 2;
  Dims fdims(g.w.begin() + 2, g.w.end());
  reference::for_each_index(y.dims, [&](std::span<const std::int64_t> yi) {
    double acc = 0;
    const std::int64_t grp = yi[1] / kg;
    for (std::int64_t c = 0; c < cg; ++c)
      reference::for_each_index(fdims, [&](std::span<const std::int64_t> t) {
        std::vector<std::int64_t> xi{yi[0], grp * cg + c}, wi{yi[1], c};
        for (std::size_t s = 0; s < sp; ++s) {
          std::int64_t pos = yi[2 + s] * g.stride[s] - g.pre[s] + t[s] * g.dilation[s];
          if (pos < 0 || pos >= g.x[2 + s]) return;
          xi.push_back(pos);
          wi.push_back(g.flip ? fdims[s] - 1 - t[s] : t[s]);
        }
        acc += x.v[static_cast<std::size_t>(x.offset(xi))] * w.v[static_cast<std::size_t>(w.offset(wi))];
      });
    y.v[static_cast<std::size_t>(y.offset(yi))] = acc;
  });
  return y;
}

std::vector<Geo> geometries() {
  return {
      {{2, 4, 7, 6}, {6, 2, 3, 2}, {1, 0}, {0, 2}, {2, 1}, {1, 2}, true},    // 2-D, groups 2, CONVOLUTION
      {{2, 4, 7, 6}, {6, 2, 3, 2}, {1, 0}, {0, 2}, {2, 1}, {1, 2}, false},   // same, CROSS_CORRELATION
      {{2, 3, 9}, {4, 3, 3}, {2}, {1}, {2}, {2}, false},                     // 1-D
      {{1, 2, 4, 5, 3}, {2, 1, 2, 3, 2}, {0, 1, 1}, {1, 1, 0}, {1, 2, 1}, {2, 1, 1}, true},  // 3-D depthwise
  };
}

}  // namespace

TEST(ConvRef, DeltaFilterReproducesInput) {
  for (bool depthwise : {false, true}) {
    Case c;
    c.name = depthwise ? "conv_delta_depthwise" : "conv_delta";
    const Dims wd = depthwise ? Dims{3, 1, 3, 3} : Dims{3, 3, 3, 3};
    c.build = [wd](OpGraph& g) {
      out64(g.conv_fprop(in64(g, {2, 3, 5, 6}, "x"), in64(g, wd, "w"),
                         Attributes().set("padding", std::vector<std::int64_t>{1, 1})),
            "y");
    };
    Array w(wd);
    for (std::int64_t k = 0; k < 3; ++k) w.at({k, depthwise ? 0 : k, 1, 1}) = 1.0;
    c.fixed["w"] = w;
    Values v = check_case(c);
    ASSERT_TRUE(v.count("y"));
    EXPECT_EQ(v.at("y").dims, v.at("x").dims);
    EXPECT_EQ(v.at("y").v, v.at("x").v);
  }
}

TEST(ConvRef, FpropMatchesDirectLoop1d2d3d) {
  for (const Geo& geo : geometries()) {
    Case c;
    c.name = "conv_fprop_rank" + std::to_string(geo.x.size());
    c.seed = 31;
    c.build = [&geo](OpGraph& g) { out64(g.conv_fprop(in64(g, geo.x, "x"), in64(g, geo.w, "w"), geo.attrs()), "y"); };
    Values v = check_case(c);
    ASSERT_TRUE(v.count("y")) << c.name;
    Array e = direct_conv(geo, v.at("x"), v.at("w"));
    ASSERT_EQ(v.at("y").dims, e.dims);
    for (std::int64_t i = 0; i < e.numel(); ++i) EXPECT_NEAR(v.at("y")[i], e[i], 1e-12) << c.name << " " << i;
  }
}

TEST(ConvRef, ChannelsLastInputGivesThePackedResult) {
  Case c;
  c.name = "conv_channels_last";
  c.build = [](OpGraph& g) {
    auto w = in64(g, {4, 3, 3, 3}, "w");
    auto attrs = Attributes().set("padding", std::vector<std::int64_t>{1, 1});
    out64(g.conv_fprop(in64(g, {2, 3, 5, 4}, "x"), w, attrs), "y");
    auto xcl = g.tensor({2, 3, 5, 4}, DataType::DOUBLE, "x_cl", {60, 1, 12, 3});
    out64(g.conv_fprop(xcl, w, attrs), "y_cl");
  };
  c.fixed["x"] = random_array({2, 3, 5, 4}, 41);
  c.fixed["x_cl"] = c.fixed["x"];
  Values v = check_case(c);
  ASSERT_TRUE(v.count("y_cl"));
  EXPECT_EQ(v.at("y").v, v.at("y_cl").v);
}

TEST(ConvRef, DgradAndWgradMatchFiniteDifferencesOfFprop) {
  std::vector<Geo> geos = geometries();
  // stride 2 over 8 rows with a 3-tap filter and no padding reaches rows 0..6 only: row 7's gradient is 0.
  geos.push_back({{1, 2, 8, 4}, {2, 2, 3, 1}, {0, 0}, {0, 0}, {2, 1}, {1, 1}, false});
  for (const Geo& geo : geos) {
    Case fc;
    fc.name = "conv_fwd_rank" + std::to_string(geo.x.size());
    fc.seed = 43;
    fc.build = [&geo](OpGraph& g) { out64(g.conv_fprop(in64(g, geo.x, "x"), in64(g, geo.w, "w"), geo.attrs()), "y"); };
    Forward f = run_forward(fc);
    ASSERT_TRUE(f.out.count("y"));
    Values wts{{"y", random_array(geo.y(), 5)}};
    Case bc;
    bc.name = "conv_dgrad_wgrad_rank" + std::to_string(geo.x.size());
    bc.build = [&geo](OpGraph& g) {
      auto dy = in64(g, geo.y(), "dy");
      auto dx = g.conv_dgrad(dy, in64(g, geo.w, "w"), geo.attrs());
      dx->set_dim(geo.x);
      out64(dx, "dx");
      auto dw = g.conv_wgrad(dy, in64(g, geo.x, "x"), geo.attrs());
      dw->set_dim(geo.w);
      out64(dw, "dw");
    };
    bc.fixed = {{"dy", wts.at("y")}, {"x", f.in.at("x")}, {"w", f.in.at("w")}};
    Values b = check_case(bc);
    ASSERT_TRUE(b.count("dx")) << bc.name;
    expect_matches_fd(f, wts, "x", b.at("dx"), {1e-8, 1e-7}, bc.name + " dx");
    expect_matches_fd(f, wts, "w", b.at("dw"), {1e-8, 1e-7}, bc.name + " dw");
    if (geo.x[2] == 8) {
      for (std::int64_t c = 0; c < 2; ++c)
        for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(b.at("dx").at({0, c, 7, j}), 0.0);
    }
  }
}
