// Reference resample, diagonal_band_mask and paged_cache_load against loops written
// here: 2-D max/avg pooling with every padding mode (and Index), a 3-D average pool on
// a constant, nearest/bilinear closed forms (x2 nearest upsample repeats, half-pixel
// bilinear /2 downsample = 2x2 mean, same-size bilinear = identity), causal /
// bottom-right / sliding-window masks, and a paged cache gathered back to dense.
// Tolerances: pooling and interpolation atol 1e-12 (float64); everything else exact.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "harness.h"

using namespace opgraph;
using namespace opgraph::harness;
using D = std::vector<std::int64_t>;

namespace {

// Pool of one [H, W] plane by explicit loops; `pad` is the padded value (NaN: edge value).
struct PoolOut { double value; std::int64_t arg; };
PoolOut pool2d(const Array& x, int n, int c, int oh, int ow, const D& win, const D& str, const D& pre,
               const std::string& mode, const std::string& padding) {
  const std::int64_t H = x.dims[2], W = x.dims[3];
  double best = 0, sum = 0;
  std::int64_t arg = -1, inside = 0, pos = 0;
  for (std::int64_t i = 0; i < win[0]; ++i)
    for (std::int64_t j = 0; j < win[1]; ++j, ++pos) {
      std::int64_t h = oh * str[0] - pre[0] + i, w = ow * str[1] - pre[1] + j;
      bool in = h >= 0 && h < H && w >= 0 && w < W;
      double v;
      if (in) v = x.at({n, c, h, w});
      else if (padding == "EDGE_VAL_PAD") v = x.at({n, c, std::min(std::max<std::int64_t>(h, 0), H - 1), std::min(std::max<std::int64_t>(w, 0), W - 1)});
      else if (padding == "NEG_INF_PAD") v = -std::numeric_limits<double>::infinity();
      else v = 0.0;
      if (arg < 0 || v > best) best = v, arg = pos;
      if (in) ++inside;
      if (in || mode == "AVGPOOL_INCLUDE_PADDING") sum += v;
    }
  if (mode == "MAXPOOL") return {best, arg};
  return {sum / static_cast<double>(mode == "AVGPOOL_INCLUDE_PADDING" ? win[0] * win[1] : inside), 0};
}

}  // namespace

TEST(WindowRef, Pool2dEveryModeAndPaddingMatchesLoops) {
  const D win = {3, 2}, str = {2, 1}, pre = {1, 1}, post = {1, 0};
  struct Variant { const char* mode; const char* padding; };
  for (Variant var : {Variant{"MAXPOOL", "NEG_INF_PAD"}, Variant{"MAXPOOL", "ZERO_PAD"}, Variant{"MAXPOOL", "EDGE_VAL_PAD"},
                      Variant{"AVGPOOL_INCLUDE_PADDING", "ZERO_PAD"}, Variant{"AVGPOOL_INCLUDE_PADDING", "EDGE_VAL_PAD"},
                      Variant{"AVGPOOL_EXCLUDE_PADDING", "ZERO_PAD"}}) {
    SCOPED_TRACE(std::string(var.mode) + " " + var.padding);
    Case c;
    c.name = std::string("pool_") + var.mode + "_" + var.padding;
    c.range = {-2.0, 2.0};
    const bool idx = std::string(var.mode) == "MAXPOOL";
    c.build = [&](OpGraph& g) {
      auto x = g.tensor({2, 2, 7, 5}, DataType::DOUBLE, "x");
      auto [y, i] = g.resample(x, Attributes().set("resampling_mode", var.mode).set("padding_mode", var.padding)
                                      .set("window", win).set("stride", str).set("pre_padding", pre)
                                      .set("post_padding", post).set("generate_index", idx));
      y->set_output(true).set_name("y").set_data_type(DataType::DOUBLE);
      if (i) i->set_output(true).set_name("idx");
    };
    Values v = check_case(c);
    ASSERT_FALSE(v.empty());
    const Array& x = v.at("x");
    const Array& y = v.at("y");
    ASSERT_EQ(y.dims, (Dims{2, 2, 4, 5}));  // (7+2-3)/2+1 = 4, (5+1-2)/1+1 = 5
    for (int n = 0; n < 2; ++n)
      for (int ch = 0; ch < 2; ++ch)
        for (int oh = 0; oh < 4; ++oh)
          for (int ow = 0; ow < 5; ++ow) {
            PoolOut e = pool2d(x, n, ch, oh, ow, win, str, pre, var.mode, var.padding);
            EXPECT_NEAR(y.at({n, ch, oh, ow}), e.value, 1e-12);
            if (idx) {
              EXPECT_EQ(v.at("idx").at({n, ch, oh, ow}), e.arg);
            }
          }
  }
}

TEST(WindowRef, AvgPool3dOfAConstant) {
  Case c;
  c.name = "avgpool3d_const";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({1, 2, 3, 4, 4}, DataType::FLOAT, "x");
    auto a = Attributes().set("window", D{2, 2, 2}).set("stride", D{1, 2, 2}).set("pre_padding", D{1, 1, 1});
    g.resample(x, Attributes(a).set("resampling_mode", "AVGPOOL_EXCLUDE_PADDING"))[0]->set_output(true).set_name("ex");
    g.resample(x, Attributes(a).set("resampling_mode", "AVGPOOL_INCLUDE_PADDING"))[0]->set_output(true).set_name("in");
  };
  c.fixed["x"] = Array({1, 2, 3, 4, 4}, 1.5);
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array& ex = v.at("ex");
  ASSERT_EQ(ex.dims, (Dims{1, 2, 3, 2, 2}));  // (3+1-2)/1+1 = 3, (4+1-2)/2+1 = 2
  for (double e : ex.v) EXPECT_EQ(e, 1.5);
  // Include-padding: window cells outside X count as zeros. Depth 0 and h/w 0 are half-padded.
  for (std::int64_t d = 0; d < 3; ++d)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t w = 0; w < 2; ++w) {
        double inside = (d == 0 ? 1 : 2) * (h == 0 ? 1 : 2) * (w == 0 ? 1 : 2);
        EXPECT_NEAR(v.at("in").at({0, 1, d, h, w}), 1.5 * inside / 8.0, 1e-7);
      }
}

TEST(WindowRef, InterpolationClosedForms) {
  Case c;
  c.name = "interp";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({1, 2, 4, 6}, DataType::DOUBLE, "x");
    auto out = [](TensorPtr t, D dims, const char* n) { t->set_dim(dims).set_output(true).set_name(n).set_data_type(DataType::DOUBLE); };
    out(g.resample(x, Attributes().set("resampling_mode", "NEAREST"))[0], {1, 2, 8, 12}, "up");
    out(g.resample(x, Attributes().set("resampling_mode", "BILINEAR"))[0], {1, 2, 2, 3}, "down");
    out(g.resample(x, Attributes().set("resampling_mode", "BILINEAR"))[0], {1, 2, 4, 6}, "same");
    out(g.resample(x, Attributes().set("resampling_mode", "BILINEAR"))[0], {1, 2, 8, 12}, "bup");
  };
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array& x = v.at("x");
  EXPECT_EQ(v.at("same").v, x.v);
  for (int ch = 0; ch < 2; ++ch) {
    for (int h = 0; h < 8; ++h)
      for (int w = 0; w < 12; ++w) EXPECT_EQ(v.at("up").at({0, ch, h, w}), x.at({0, ch, h / 2, w / 2}));
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 3; ++w) {
        double mean = (x.at({0, ch, 2 * h, 2 * w}) + x.at({0, ch, 2 * h + 1, 2 * w}) + x.at({0, ch, 2 * h, 2 * w + 1}) +
                       x.at({0, ch, 2 * h + 1, 2 * w + 1})) / 4;
        EXPECT_NEAR(v.at("down").at({0, ch, h, w}), mean, 1e-12);
      }
    // x2 bilinear upsample: interior sample 2h+1 sits at 0.75 x[h] + 0.25 x[h+1] (half-pixel centres).
    for (int h = 0; h < 3; ++h)
      EXPECT_NEAR(v.at("bup").at({0, ch, 2 * h + 1, 0}), 0.75 * x.at({0, ch, h, 0}) + 0.25 * x.at({0, ch, h + 1, 0}), 1e-12);
    EXPECT_EQ(v.at("bup").at({0, ch, 0, 0}), x.at({0, ch, 0, 0}));  // clamped at the edge
  }
}

TEST(WindowRef, DiagonalBandMasks) {
  const double fill = -1e4;
  Case c;
  c.name = "band";
  c.build = [fill](OpGraph& g) {
    auto x = g.tensor({2, 2, 5, 7}, DataType::FLOAT, "x");
    auto b = g.tensor_scalar(fill);
    auto sq = g.tensor({2, 1, 1, 1}, DataType::INT32, "sq");
    auto skv = g.tensor({2, 1, 1, 1}, DataType::INT32, "skv");
    auto zero = g.tensor({1}, DataType::INT32, "zero");
    auto left = g.tensor({1}, DataType::INT64, "left");
    g.diagonal_band_mask(x, b, nullptr, nullptr, nullptr, zero)->set_output(true).set_name("causal");
    g.diagonal_band_mask(x, b, sq, skv, nullptr, zero)->set_output(true).set_name("br");
    g.diagonal_band_mask(x, b, nullptr, nullptr, left, zero, Attributes().set("comparison_mode", "CMP_GE"))
        ->set_output(true).set_name("window");
  };
  Array sq({2, 1, 1, 1}), skv({2, 1, 1, 1});
  sq.v = {5, 3};
  skv.v = {7, 6};
  c.fixed = {{"sq", sq}, {"skv", skv}, {"zero", Array({1}, 0.0)}, {"left", Array({1}, 2.0)}};
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array& x = v.at("x");
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 7; ++j) {
          double xv = x.at({b, h, i, j});
          EXPECT_EQ(v.at("causal").at({b, h, i, j}), j > i ? fill : xv);
          const int shift = static_cast<int>(skv[b] - sq[b]);  // bottom-right: query i sees keys <= i + shift
          EXPECT_EQ(v.at("br").at({b, h, i, j}), j > i + shift ? fill : xv);
          // CMP_GE: masked where j - i >= 0 or i - j >= 2: only j = i - 1 survives.
          EXPECT_EQ(v.at("window").at({b, h, i, j}), j == i - 1 ? xv : fill);
        }
}

TEST(WindowRef, PagedCacheGathersPagesAndZeroesBeyondSeqLen) {
  Case c;
  c.name = "paged";
  c.build = [](OpGraph& g) {
    auto cont = g.tensor({6, 2, 4, 3}, DataType::FLOAT, "cache");
    auto len = g.tensor({2, 1, 1, 1}, DataType::INT32, "len");
    auto pt = g.tensor({2, 1, 3, 1}, DataType::INT32, "pt");
    g.paged_cache_load(cont, len, pt)->set_output(true).set_name("k");
  };
  Array len({2, 1, 1, 1}), pt({2, 1, 3, 1});
  len.v = {9, 12};
  pt.v = {4, 0, 2, 5, 1, 3};
  c.fixed = {{"len", len}, {"pt", pt}};
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array& k = v.at("k");
  ASSERT_EQ(k.dims, (Dims{2, 2, 12, 3}));
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 2; ++h)
      for (int s = 0; s < 12; ++s)
        for (int d = 0; d < 3; ++d) {
          double e = s < len[b] ? v.at("cache").at({static_cast<std::int64_t>(pt[b * 3 + s / 4]), h, s % 4, d}) : 0.0;
          EXPECT_EQ(k.at({b, h, s, d}), e);
        }
  // A page id outside the container fails at execution, naming it.
  OpGraph g;
  ASSERT_TRUE(build(c, g).is_good());
  Values in = make_inputs(c, g);
  in.at("pt")[4] = 6;
  auto r = run_reference(g, in);
  ASSERT_EQ(r.status().code(), ErrorCode::GRAPH_EXECUTION_FAILED);
  EXPECT_NE(r.status().message().find("pageTable[1, 0, 1, 0] is 6"), std::string::npos) << r.status().message();
}

TEST(WindowRef, PagedCacheRefusesASeqLenBeyondItsPages) {
  Case c;
  c.name = "paged_bad_len";
  c.build = [](OpGraph& g) {
    auto cont = g.tensor({4, 1, 2, 2}, DataType::FLOAT, "cache");
    auto len = g.tensor({1}, DataType::INT32, "len");
    auto pt = g.tensor({1, 1, 2, 1}, DataType::INT32, "pt");
    g.paged_cache_load(cont, len, pt)->set_output(true).set_name("k");
  };
  Array pt({1, 1, 2, 1});
  pt.v = {3, 1};
  c.fixed = {{"len", Array({1}, 5.0)}, {"pt", pt}};
  OpGraph g;
  ASSERT_TRUE(build(c, g).is_good());
  auto r = run_reference(g, make_inputs(c, g));
  ASSERT_EQ(r.status().code(), ErrorCode::GRAPH_EXECUTION_FAILED);
  EXPECT_NE(r.status().message().find("seqLen of batch entry 0 is 5, outside [0, 4]"), std::string::npos)
      << r.status().message();
}
