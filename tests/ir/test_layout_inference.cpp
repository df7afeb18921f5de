// Output layout inference (docs/architecture.md, "Output layout contract"): an output
// whose strides the user did not set is dense in its reference input's axis order, so
// a channels-last conv keeps channels-last through bias / scale / relu epilogues and
// chains of them, a packed NCHW graph stays packed NCHW, broadcast pointwise follows
// the full-shape input, and user-set strides always win. Also reduction, concatenate,
// resample, band mask and dequantize, which follow X, and the tie rule for extent-1 axes.
#include "ir/op_test_util.h"

using namespace opgraph;
using opgraph::test::D;
using opgraph::test::expect_round_trip;

namespace {

constexpr std::int64_t N = 2, C = 3, H = 5, W = 4, K = 8;

// Channels-last (NHWC) strides of [n, c, h, w].
std::vector<std::int64_t> nhwc(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  (void)n;
  return {h * w * c, 1, w * c, c};
}

// x [N, C, H, W] (channels-last when `cl`), w [K, C, 3, 3] packed, padding 1: y [N, K, H, W].
TensorPtr conv(OpGraph& g, bool cl) {
  g.set_io_data_type(DataType::HALF).set_intermediate_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto x = cl ? g.tensor({N, C, H, W}, DataType::HALF, "x", nhwc(N, C, H, W)) : g.tensor({N, C, H, W}, DataType::HALF, "x");
  auto w = g.tensor({K, C, 3, 3}, DataType::HALF, "w");
  return g.conv_fprop(x, w, Attributes().set("padding", std::vector<std::int64_t>{1, 1}));
}

TensorPtr bias_of(OpGraph& g) { return g.tensor({1, K, 1, 1}, DataType::HALF, "b"); }

enum class Epilogue { BIAS, BIAS_RELU, RELU, SCALE };

TensorPtr epilogue(OpGraph& g, TensorPtr y, Epilogue e) {
  switch (e) {
    case Epilogue::BIAS: return g.bias(y, bias_of(g));
    case Epilogue::BIAS_RELU: return g.relu(g.bias(y, bias_of(g)));
    case Epilogue::RELU: return g.relu(y);
    case Epilogue::SCALE: return g.scale(y, g.tensor({1, K, 1, 1}, DataType::HALF, "s"));
  }
  return nullptr;
}

}  // namespace

TEST(LayoutInference, ChannelsLastConvEpiloguesStayChannelsLast) {
  for (Epilogue e : {Epilogue::BIAS, Epilogue::BIAS_RELU, Epilogue::RELU, Epilogue::SCALE}) {
    OpGraph g;
    auto y = conv(g, true);
    auto out = epilogue(g, y, e);
    out->set_output(true).set_name("out");
    expect_round_trip(g);
    EXPECT_EQ(y->get_stride(), nhwc(N, K, H, W)) << static_cast<int>(e);
    EXPECT_EQ(out->get_dim(), D({N, K, H, W})) << static_cast<int>(e);
    EXPECT_EQ(out->get_stride(), nhwc(N, K, H, W)) << "epilogue " << static_cast<int>(e);
    EXPECT_FALSE(out->stride_set_by_user());
  }
}

TEST(LayoutInference, PackedNchwConvEpiloguesStayPacked) {
  for (Epilogue e : {Epilogue::BIAS, Epilogue::BIAS_RELU, Epilogue::RELU, Epilogue::SCALE}) {
    OpGraph g;
    auto y = conv(g, false);
    auto out = epilogue(g, y, e);
    out->set_output(true).set_name("out");
    expect_round_trip(g);
    EXPECT_EQ(y->get_stride(), Tensor::packed_strides({N, K, H, W}));
    EXPECT_EQ(out->get_stride(), Tensor::packed_strides({N, K, H, W})) << "epilogue " << static_cast<int>(e);
  }
}

TEST(LayoutInference, UserSetStridesWin) {
  OpGraph g;
  auto y = conv(g, true);
  y->set_stride(Tensor::packed_strides({N, K, H, W}));  // the user wants NCHW here
  auto r = g.relu(g.bias(y, bias_of(g)));
  auto packed_nchw = Tensor::packed_strides({N, K, H, W});
  r->set_output(true).set_name("out");
  // An odd but dense layout the user asks for: W outermost.
  std::vector<std::int64_t> odd{K * H, H, 1, N * K * H};
  r->set_stride(odd);
  expect_round_trip(g);
  EXPECT_EQ(y->get_stride(), packed_nchw);
  EXPECT_TRUE(r->stride_set_by_user());
  EXPECT_EQ(r->get_stride(), odd);

  // Only the user's tensor keeps its strides: the bias output between them follows y (NCHW).
  OpGraph g2;
  auto y2 = conv(g2, true);
  auto b2 = g2.bias(y2, bias_of(g2));
  b2->set_stride(Tensor::packed_strides({N, K, H, W}));
  auto r2 = g2.relu(b2);
  r2->set_output(true).set_name("out");
  expect_round_trip(g2);
  EXPECT_EQ(y2->get_stride(), nhwc(N, K, H, W));
  EXPECT_EQ(r2->get_stride(), packed_nchw);  // follows its input, which the user made NCHW
}

TEST(LayoutInference, ChainOfEpiloguesKeepsTheClass) {
  OpGraph g;
  auto y = conv(g, true);
  auto res = g.tensor({N, K, H, W}, DataType::HALF, "res", nhwc(N, K, H, W));
  auto a = g.bias(y, bias_of(g));
  auto b = g.scale(a, g.tensor({1, K, 1, 1}, DataType::HALF, "s"));
  auto c = g.add(b, res);
  auto d = g.relu(c);
  auto e = g.gelu(d);
  e->set_output(true).set_name("out");
  expect_round_trip(g);
  for (const auto& t : {a, b, c, d, e}) EXPECT_EQ(t->get_stride(), nhwc(N, K, H, W)) << t->get_name();
}

TEST(LayoutInference, BroadcastFollowsTheInputOfTheOutputsShape) {
  // The bias first, the channels-last activation second: OUT_0 follows IN_1.
  OpGraph g;
  g.set_io_data_type(DataType::FLOAT);
  auto act = g.tensor({N, K, H, W}, DataType::FLOAT, "act", nhwc(N, K, H, W));
  auto o = g.add(g.tensor({1, K, 1, 1}, DataType::FLOAT, "b"), act);
  o->set_output(true).set_name("o");
  // Rank-2 [H, W] mask against the 4-D activation: the output is the activation's shape.
  auto m = g.mul(g.tensor({H, W}, DataType::FLOAT, "mask"), act);
  m->set_output(true).set_name("m");
  expect_round_trip(g);
  EXPECT_EQ(o->get_stride(), nhwc(N, K, H, W));
  EXPECT_EQ(m->get_stride(), nhwc(N, K, H, W));
}

TEST(LayoutInference, BroadcastWithNoFullShapeInputFollowsTheFullestInput) {
  // [N, 1, H, W] channels-last (strides {HW, 1, W, 1}: C ties with W) + [1, K, 1, 1]:
  // no input has the output's dims; the activation has the most non-1 axes and its
  // extent-1 C reads as innermost, so the output is channels-last.
  OpGraph g;
  g.set_io_data_type(DataType::FLOAT);
  auto act = g.tensor({N, 1, H, W}, DataType::FLOAT, "act", {H * W, 1, W, 1});
  auto o = g.add(g.tensor({1, K, 1, 1}, DataType::FLOAT, "b"), act);
  o->set_output(true).set_name("o");
  // The same activation packed NCHW (strides {HW, HW, W, 1}: C ties with N) gives NCHW.
  auto act2 = g.tensor({N, 1, H, W}, DataType::FLOAT, "act2");
  auto o2 = g.add(act2, g.tensor({1, K, 1, 1}, DataType::FLOAT, "b2"));
  o2->set_output(true).set_name("o2");
  expect_round_trip(g);
  EXPECT_EQ(o->get_dim(), D({N, K, H, W}));
  EXPECT_EQ(o->get_stride(), nhwc(N, K, H, W));
  EXPECT_EQ(o2->get_stride(), Tensor::packed_strides({N, K, H, W}));
}

TEST(LayoutInference, PaddedInputGivesADenseOutputInItsOrder) {
  // Channels padded to 4 in memory: the output is dense channels-last, not padded.
  OpGraph g;
  g.set_io_data_type(DataType::FLOAT);
  auto x = g.tensor({N, C, H, W}, DataType::FLOAT, "x", {H * W * 4, 1, W * 4, 4});
  auto r = g.relu(x);
  r->set_output(true).set_name("r");
  expect_round_trip(g);
  EXPECT_EQ(r->get_stride(), nhwc(N, C, H, W));
}

TEST(LayoutInference, OtherOpsFollowX) {
  OpGraph g;
  g.set_io_data_type(DataType::FLOAT);
  auto x = g.tensor({N, C, H, W}, DataType::FLOAT, "x", nhwc(N, C, H, W));
  // reduction over N: Y [1, C, H, W] channels-last.
  auto red = g.reduction(x, Attributes().set("mode", "ADD"));
  red->set_dim({1, C, H, W}).set_output(true).set_name("red");
  // concatenate along C.
  auto x2 = g.tensor({N, 2, H, W}, DataType::FLOAT, "x2", nhwc(N, 2, H, W));
  auto cat = g.concatenate({x, x2}, Attributes().set("axis", std::int64_t{1}));
  cat->set_output(true).set_name("cat");
  // max pool 2x2 stride 2.
  auto pool = g.resample(x, Attributes()
                                .set("resampling_mode", "MAXPOOL")
                                .set("window", std::vector<std::int64_t>{2, 2})
                                .set("stride", std::vector<std::int64_t>{2, 2}))[0];
  pool->set_output(true).set_name("pool");
  expect_round_trip(g);
  EXPECT_EQ(red->get_stride(), nhwc(1, C, H, W));
  EXPECT_EQ(cat->get_dim(), D({N, C + 2, H, W}));
  EXPECT_EQ(cat->get_stride(), nhwc(N, C + 2, H, W));
  EXPECT_EQ(pool->get_dim(), D({N, C, 2, 2}));
  EXPECT_EQ(pool->get_stride(), nhwc(N, C, 2, 2));
}
