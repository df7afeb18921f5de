// IR tests of the conv group: fprop output inference (padding, stride, dilation, groups,
// 1-3 spatial axes, channels-last strides), dgrad/wgrad user dims checked against the
// forward arithmetic, JSON round trip, and refusals naming op/port/attribute/tensor/rule.
#include "ir/op_test_util.h"

using namespace opgraph;
using opgraph::test::D;
using opgraph::test::expect_refused;
using opgraph::test::expect_round_trip;

TEST(ConvIr, FpropInfers2dWithPaddingStrideDilation) {
  OpGraph g;
  g.set_io_data_type(DataType::HALF).set_compute_data_type(DataType::FLOAT);
  // Channels-last X via strides.
  auto x = g.tensor({2, 8, 11, 9}, DataType::HALF, "x", {792, 1, 72, 8});
  auto w = g.tensor({6, 4, 3, 3}, DataType::HALF, "w");  // groups = 8 / 4 = 2
  auto y = g.conv_fprop(x, w,
                        Attributes()
                            .set("pre_padding", std::vector<std::int64_t>{1, 0})
                            .set("post_padding", std::vector<std::int64_t>{1, 2})
                            .set("stride", std::vector<std::int64_t>{2, 1})
                            .set("dilation", std::vector<std::int64_t>{1, 2})
                            .set("convolution_mode", "CONVOLUTION"));
  y->set_output(true);
  expect_round_trip(g);
  // H: (11 + 2 - 3) / 2 + 1 = 6; W: (9 + 2 - 5) / 1 + 1 = 7.
  EXPECT_EQ(y->get_dim(), D({2, 6, 6, 7}));
  EXPECT_EQ(y->get_stride(), D({252, 1, 42, 6}));  // channels-last like X
}

TEST(ConvIr, FpropPaddingSets1dAnd3d) {
  OpGraph g;
  auto x = g.tensor({1, 3, 10}, DataType::FLOAT, "x");
  auto w = g.tensor({5, 3, 4}, DataType::FLOAT, "w");
  auto y = g.conv_fprop(x, w, Attributes().set("padding", std::vector<std::int64_t>{2}));
  y->set_output(true);
  auto x3 = g.tensor({1, 2, 4, 5, 6}, DataType::FLOAT, "x3");
  auto w3 = g.tensor({3, 2, 2, 3, 1}, DataType::FLOAT, "w3");
  auto y3 = g.conv_fprop(x3, w3, Attributes().set("stride", std::vector<std::int64_t>{2, 2, 3}));
  y3->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), D({1, 5, 11}));
  EXPECT_EQ(y3->get_dim(), D({1, 3, 2, 2, 2}));
}

TEST(ConvIr, FpropRefusals) {
  {
    OpGraph g;
    auto x = g.tensor({1, 6, 8, 8}, DataType::FLOAT, "x");
    auto w = g.tensor({4, 4, 3, 3}, DataType::FLOAT, "w");
    g.conv_fprop(x, w, Attributes().set_name("cv"));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                   {"op 'conv_fprop'", "node 'cv'", "port W", "tensor 'w'", "multiple of the filter's per-group"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 4, 8, 8}, DataType::FLOAT, "x");
    auto w = g.tensor({4, 4, 3, 3}, DataType::FLOAT, "w");
    g.conv_fprop(x, w, Attributes().set_name("cv").set("stride", std::vector<std::int64_t>{1, 0}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'conv_fprop'", "node 'cv'", "attribute 'stride'", "must be in [1, 16777216]"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 4, 8, 8}, DataType::FLOAT, "x");
    auto w = g.tensor({4, 4, 3, 3}, DataType::FLOAT, "w");
    g.conv_fprop(x, w, Attributes().set_name("cv").set("padding", std::vector<std::int64_t>{1, 1, 1}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                   {"op 'conv_fprop'", "node 'cv'", "attribute 'padding'", "one entry per spatial axis (2)"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 0, 8, 8}, DataType::FLOAT, "x");
    auto w = g.tensor({4, 4, 3, 3}, DataType::FLOAT, "w");
    g.conv_fprop(x, w, Attributes().set_name("cv"));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'conv_fprop'", "node 'cv'", "port X", "tensor 'x'", ">= 1"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 4, 8, 8}, DataType::FLOAT, "x");
    auto w = g.tensor({4, 4, 0, 3}, DataType::FLOAT, "w");
    g.conv_fprop(x, w, Attributes().set_name("cv"));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'conv_fprop'", "node 'cv'", "port W", "tensor 'w'", "filter"});
  }
  OpGraph g;
  auto x = g.tensor({1, 4, 4, 4}, DataType::FLOAT, "x");
  auto w = g.tensor({4, 4, 3, 3}, DataType::FLOAT, "w");
  g.conv_fprop(x, w, Attributes().set_name("cv").set("dilation", std::vector<std::int64_t>{2, 2}));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'conv_fprop'", "node 'cv'", "port X", "tensor 'x'", "smaller than the dilated filter extent 5"});
}

TEST(ConvIr, DgradChecksUserDims) {
  OpGraph g;
  auto dy = g.tensor({2, 6, 4, 4}, DataType::FLOAT, "dy");
  auto w = g.tensor({6, 2, 3, 3}, DataType::FLOAT, "w");
  auto attrs = Attributes().set_name("dg").set("padding", std::vector<std::int64_t>{1, 1})
                   .set("stride", std::vector<std::int64_t>{2, 2});
  auto dx = g.conv_dgrad(dy, w, attrs);
  dx->set_output(true).set_dim({2, 4, 8, 8}).set_name("dx");  // groups = 2; (8 + 2 - 3) / 2 + 1 = 4
  expect_round_trip(g);
  EXPECT_EQ(dx->get_stride(), D({256, 64, 8, 1}));

  // 7 also gives 4 under stride 2 (ambiguity that is why dims come from the user); 6 does not.
  for (std::int64_t h : {7, 6}) {
    OpGraph b;
    auto dy2 = b.tensor({2, 6, 4, 4}, DataType::FLOAT, "dy");
    auto w2 = b.tensor({6, 2, 3, 3}, DataType::FLOAT, "w");
    auto dx2 = b.conv_dgrad(dy2, w2, attrs);
    dx2->set_output(true).set_dim({2, 4, h, 8}).set_name("dx");
    if (h == 7) {
      EXPECT_TRUE(b.validate().is_good());
    } else {
      expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED,
                     {"op 'conv_dgrad'", "node 'dg'", "port DY", "tensor 'dy'", "forward output [2, 6, 3, 4]"});
    }
  }
  OpGraph u;
  auto dy3 = u.tensor({2, 6, 4, 4}, DataType::FLOAT, "dy");
  auto w3 = u.tensor({6, 2, 3, 3}, DataType::FLOAT, "w");
  u.conv_dgrad(dy3, w3, Attributes().set_name("dg"))->set_output(true);
  expect_refused(u, ErrorCode::SHAPE_DEDUCTION_FAILED, {"op 'conv_dgrad'", "node 'dg'", "port DX", "set them"});
}

TEST(ConvIr, WgradChecksUserDims) {
  OpGraph g;
  auto dy = g.tensor({2, 4, 5, 5}, DataType::FLOAT, "dy");
  auto x = g.tensor({2, 3, 7, 7}, DataType::FLOAT, "x");
  auto dw = g.conv_wgrad(dy, x, Attributes().set_name("wg"));
  dw->set_output(true).set_dim({4, 3, 3, 3}).set_name("dw");
  expect_round_trip(g);

  OpGraph b;
  auto dy2 = b.tensor({2, 4, 5, 5}, DataType::FLOAT, "dy");
  auto x2 = b.tensor({2, 3, 7, 7}, DataType::FLOAT, "x");
  auto dw2 = b.conv_wgrad(dy2, x2, Attributes().set_name("wg"));
  dw2->set_output(true).set_dim({4, 2, 3, 3}).set_name("dw");
  expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'conv_wgrad'", "node 'wg'", "port DW", "tensor 'dw'", "multiple of the filter's per-group"});

  OpGraph c;
  auto dy3 = c.tensor({2, 4, 5, 5}, DataType::FLOAT, "dy");
  auto x3 = c.tensor({2, 3, 7, 7}, DataType::FLOAT, "x");
  auto dw3 = c.conv_wgrad(dy3, x3, Attributes().set_name("wg"));
  dw3->set_output(true).set_dim({4, 3, 2, 3}).set_name("dw");
  expect_refused(c, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'conv_wgrad'", "node 'wg'", "port DY", "tensor 'dy'", "[2, 4, 6, 5]"});
}
