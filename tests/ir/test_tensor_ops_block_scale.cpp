// Tensor-ops block-scale records: block_scale_quantize / block_scale_dequantize
// (MXFP8, MXFP4, NVFP4; F8_128x4 scale shapes; per-dim dequantize blocks).
#include <gtest/gtest.h>

#include "graph_check.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using opgraph::testing::expect_refused;
using opgraph::testing::expect_round_trip;
using D = std::vector<std::int64_t>;

TEST(BlockScale, Mxfp8QuantizeThenDequantize) {
  OpGraph g;
  auto x = g.tensor({2, 64, 96}, DataType::BFLOAT16, "x");
  auto [y, s] = g.block_scale_quantize(x, Attributes().set("block_size", std::int64_t{32}));
  y->set_data_type(DataType::FP8_E4M3).set_output(true).set_name("y");
  s->set_output(true).set_name("s");
  auto r = g.block_scale_dequantize(y, s, Attributes().set("block_size", D{32}));
  r->set_output(true).set_name("r");
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{2, 64, 96}));
  EXPECT_EQ(s->get_dim(), (D{2, 64, 3}));
  EXPECT_EQ(s->get_data_type(), DataType::FP8_E8M0);
  EXPECT_EQ(r->get_data_type(), DataType::FLOAT);
}

TEST(BlockScale, Nvfp4SwizzledScalesAndTranspose) {
  OpGraph g;
  auto x = g.tensor({200, 48}, DataType::HALF, "x");
  auto [y, s] = g.block_scale_quantize(x, Attributes().set("block_size", std::int64_t{16}).set("axis", std::int64_t{1})
                                              .set("transpose", true));
  y->set_data_type(DataType::FP4_E2M1).set_output(true);
  s->set_reordering_type(TensorReordering::F8_128x4).set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(s->get_dim(), (D{256, 4}));  // rows → multiple of 128, 48/16 = 3 → 4
  EXPECT_EQ(s->get_stride(), (D{4, 1}));  // the blocked axis contiguous
  EXPECT_EQ(s->get_data_type(), DataType::FP8_E4M3);
  EXPECT_EQ(y->get_stride(), (D{1, 200}));  // column-major in the last two axes
  // Quantizing along rows (axis 0): the 128 padding goes to the other axis.
  OpGraph h;
  auto a = h.tensor({64, 100}, DataType::FLOAT, "a");
  auto [b, t] = h.block_scale_quantize(a, Attributes().set("block_size", std::int64_t{32}).set("axis", std::int64_t{0}));
  b->set_data_type(DataType::FP8_E5M2);
  t->set_reordering_type(TensorReordering::F8_128x4);
  ASSERT_TRUE(h.validate().is_good());
  EXPECT_EQ(t->get_dim(), (D{4, 128}));
  EXPECT_EQ(t->get_stride(), (D{1, 4}));  // blocked axis 0 contiguous: the 128x4 column axis
  expect_round_trip(h);
}

TEST(BlockScale, Swizzled128x4LayoutRefusals) {
  {  // dequantize: blocked axis 1 is not the contiguous one
    OpGraph g;
    auto x = g.tensor({128, 4096}, DataType::FP8_E4M3, "x");
    Tensor st;
    st.set_dim({128, 128}).set_stride({1, 128}).set_data_type(DataType::FP8_E8M0).set_name("s");
    st.set_reordering_type(TensorReordering::F8_128x4);
    g.block_scale_dequantize(x, g.tensor(st), Attributes().set_name("dq").set("block_size", D{32}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                   {"op 'block_scale_dequantize'", "node 'dq'", "port scale", "tensor 's'", "rule f8_128x4_layout",
                    "blocked axis 1", "axis 0 is contiguous"});
  }
  {  // dequantize: strides that are no packed 2-D block
    OpGraph g;
    auto x = g.tensor({128, 128}, DataType::FP8_E4M3, "x");
    Tensor st;
    st.set_dim({128, 4}).set_stride({8, 1}).set_data_type(DataType::FP8_E8M0).set_name("s");
    st.set_reordering_type(TensorReordering::F8_128x4);
    g.block_scale_dequantize(x, g.tensor(st), Attributes().set_name("dq").set("block_size", D{32}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                   {"node 'dq'", "port scale", "tensor 's'", "rule f8_128x4_layout",
                    "packed with the blocked (column) axis contiguous"});
  }
  {  // dequantize, blocks along axis 0: the row-major [4, 128] scale makes axis 1 the column axis
    OpGraph g;
    auto x = g.tensor({128, 128}, DataType::FP8_E4M3, "x");
    auto s = g.tensor({4, 128}, DataType::FP8_E8M0, "s");
    s->set_reordering_type(TensorReordering::F8_128x4);
    g.block_scale_dequantize(x, s, Attributes().set_name("dq").set("block_size", D{32, 1}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                   {"node 'dq'", "port scale", "tensor 's'", "rule f8_128x4_layout", "row axis 0 (extent 4)",
                    "multiple of 128"});
  }
  {  // quantize along axis 0 with user-set row-major scale strides
    OpGraph g;
    auto a = g.tensor({64, 100}, DataType::FLOAT, "a");
    auto [b, t] = g.block_scale_quantize(a, Attributes().set_name("q").set("block_size", std::int64_t{32}).set("axis", std::int64_t{0}));
    b->set_data_type(DataType::FP8_E5M2);
    t->set_reordering_type(TensorReordering::F8_128x4).set_stride({128, 1}).set_name("t");
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'q'", "port scale", "tensor 't'", "disagree"});
  }
  {  // any other consumer: the tensor must still hold whole 128 x 4 tiles
    OpGraph g;
    auto w = g.tensor({3, 5}, DataType::FLOAT, "w");
    w->set_reordering_type(TensorReordering::F8_128x4);
    g.add(w, g.tensor({3, 5}, DataType::FLOAT, "b"))->set_output(true);
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"tensor 'w'", "rule f8_128x4_layout", "multiple of 128"});
    OpGraph h;
    auto v = h.tensor({512}, DataType::FLOAT, "v");
    v->set_reordering_type(TensorReordering::F8_128x4);
    h.add(v, h.tensor({512}, DataType::FLOAT, "c"))->set_output(true);
    expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"tensor 'v'", "rule f8_128x4_layout", "rank >= 2"});
  }
}

TEST(BlockScale, DequantizePerDimBlocks) {
  OpGraph g;
  auto x = g.tensor({256, 384}, DataType::FP8_E4M3, "x");
  auto s = g.tensor({2, 3}, DataType::FLOAT, "s");
  auto y = g.block_scale_dequantize(x, s, Attributes().set("block_size", D{128, 128}).set("is_negative_scale", true));
  y->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{256, 384}));
}

TEST(BlockScale, QuantizeRefusals) {
  {
    OpGraph g;
    auto x = g.tensor({4, 64}, DataType::FLOAT, "x");
    auto [y, s] = g.block_scale_quantize(x, Attributes().set_name("q").set("block_size", std::int64_t{32}));
    y->set_name("y");
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'block_scale_quantize'", "node 'q'", "port Y", "tensor 'y'", "set Y's data type"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 64}, DataType::FLOAT, "x");
    auto [y, s] = g.block_scale_quantize(x, Attributes().set_name("q").set("block_size", std::int64_t{16}));
    y->set_data_type(DataType::FP8_E4M3).set_name("y");
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'q'", "port Y", "tensor 'y'", "FP8_E4M3 in blocks of 16", "no supported format"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 48}, DataType::FLOAT, "x");
    auto [y, s] = g.block_scale_quantize(x, Attributes().set_name("q").set("block_size", std::int64_t{32}));
    y->set_data_type(DataType::FP8_E4M3);
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'q'", "port X", "tensor 'x'", "48", "not a multiple of block_size 32"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 64}, DataType::FLOAT, "x");
    auto [y, s] = g.block_scale_quantize(x, Attributes().set_name("q").set("block_size", std::int64_t{16}));
    y->set_data_type(DataType::FP4_E2M1);
    s->set_data_type(DataType::FP8_E8M0).set_name("sc");
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'q'", "port scale", "tensor 'sc'", "NVFP4 scales are FP8_E4M3"});
  }
  {
    OpGraph g;
    auto x = g.tensor({2, 64, 64}, DataType::FLOAT, "x");
    auto [y, s] = g.block_scale_quantize(x, Attributes().set_name("q").set("block_size", std::int64_t{32}).set("axis", std::int64_t{0}));
    y->set_data_type(DataType::FP8_E4M3);
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'q'", "port X", "not a multiple"});
    OpGraph h;
    auto a = h.tensor({64, 2, 64}, DataType::FLOAT, "a");
    auto [b, t] = h.block_scale_quantize(a, Attributes().set_name("q").set("block_size", std::int64_t{32}).set("axis", std::int64_t{0}));
    b->set_data_type(DataType::FP8_E4M3);
    t->set_reordering_type(TensorReordering::F8_128x4).set_name("t");
    expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'q'", "port scale", "tensor 't'", "last two"});
  }
}

TEST(BlockScale, DequantizeRefusals) {
  {
    OpGraph g;
    auto x = g.tensor({4, 64}, DataType::FP8_E4M3, "x");
    auto s = g.tensor({4, 3}, DataType::FP8_E8M0, "s");
    g.block_scale_dequantize(x, s, Attributes().set_name("dq").set("block_size", D{32}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'block_scale_dequantize'", "node 'dq'", "port scale", "tensor 's'", "[4, 2]", "got [4, 3]"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 64}, DataType::FP8_E4M3, "x");
    auto s = g.tensor({4, 4}, DataType::FP8_E4M3, "s");
    g.block_scale_dequantize(x, s, Attributes().set_name("dq").set("block_size", D{16}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'dq'", "port scale", "tensor 's'", "NVFP4", "FP4_E2M1"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 64}, DataType::HALF, "x");
    auto s = g.tensor({4, 2}, DataType::FP8_E8M0, "s");
    g.block_scale_dequantize(x, s, Attributes().set_name("dq").set("block_size", D{32}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'dq'", "port X", "tensor 'x'", "HALF"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 64}, DataType::FP8_E4M3, "x");
    auto s = g.tensor({4, 2}, DataType::FP8_E8M0, "s");
    g.block_scale_dequantize(x, s, Attributes().set_name("dq"));
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"node 'dq'", "'block_size'"});
  }
}
