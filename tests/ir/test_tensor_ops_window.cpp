// Tensor-ops window records: resample, diagonal_band_mask, paged_cache_load.
#include <gtest/gtest.h>

#include "graph_check.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using opgraph::testing::expect_refused;
using opgraph::testing::expect_round_trip;
using D = std::vector<std::int64_t>;

TEST(TensorOpsWindow, MaxPoolWithIndex) {
  OpGraph g;
  auto x = g.tensor({2, 3, 9, 8}, DataType::FLOAT, "x");
  auto [y, idx] = g.resample(x, Attributes().set("resampling_mode", "MAXPOOL").set("window", D{3, 2})
                                     .set("stride", D{2, 2}).set("pre_padding", D{1, 0}).set("post_padding", D{1, 1})
                                     .set("generate_index", true));
  ASSERT_NE(idx, nullptr);
  y->set_output(true);
  idx->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{2, 3, 5, 4}));  // (9+2-3)/2+1 = 5, (8+1-2)/2+1 = 4
  EXPECT_EQ(idx->get_dim(), y->get_dim());
  EXPECT_EQ(idx->get_data_type(), DataType::INT32);
}

TEST(TensorOpsWindow, AvgPool3dAndInterpolation) {
  OpGraph g;
  auto x = g.tensor({1, 2, 4, 6, 6}, DataType::HALF, "x");
  auto [y, idx] = g.resample(x, Attributes().set("resampling_mode", "AVGPOOL_EXCLUDE_PADDING")
                                     .set("padding_mode", "EDGE_VAL_PAD").set("window", D{2, 3, 3})
                                     .set("stride", D{2, 3, 3}));
  EXPECT_EQ(idx, nullptr);
  y->set_output(true);
  auto z = g.tensor({1, 2, 5, 7}, DataType::FLOAT, "z");
  auto [u, none] = g.resample(z, Attributes().set("resampling_mode", "BILINEAR"));
  u->set_dim({1, 2, 10, 3}).set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{1, 2, 2, 2, 2}));
}

TEST(TensorOpsWindow, ResampleRefusals) {
  {
    OpGraph g;
    auto x = g.tensor({1, 1, 4, 4}, DataType::FLOAT, "x");
    g.resample(x, Attributes().set_name("rs").set("resampling_mode", "MAXPOOL").set("stride", D{1, 1}));
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'resample'", "node 'rs'", "attribute 'window'"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 1, 4, 4}, DataType::FLOAT, "x");
    g.resample(x, Attributes().set_name("rs").set("resampling_mode", "AVGPOOL_INCLUDE_PADDING").set("window", D{2, 2})
                      .set("stride", D{1, 1}).set("generate_index", true));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'rs'", "attribute 'generate_index'", "only MAXPOOL"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 1, 4, 4}, DataType::FLOAT, "x");
    g.resample(x, Attributes().set_name("rs").set("resampling_mode", "MAXPOOL").set("window", D{2, 2})
                      .set("stride", D{1, 1}).set("pre_padding", D{2, 0}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'rs'", "attribute 'pre_padding'", "must be < window"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 1, 2, 4}, DataType::FLOAT, "x");
    g.resample(x, Attributes().set_name("rs").set("resampling_mode", "MAXPOOL").set("window", D{3, 2}).set("stride", D{1, 1}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'rs'", "port X", "tensor 'x'", "smaller than the window"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 1, 4, 4}, DataType::FLOAT, "x");
    g.resample(x, Attributes().set_name("rs").set("resampling_mode", "AVGPOOL_INCLUDE_PADDING")
                      .set("padding_mode", "NEG_INF_PAD").set("window", D{2, 2}).set("stride", D{1, 1}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'rs'", "attribute 'padding_mode'", "NEG_INF_PAD"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 1, 4, 4}, DataType::FLOAT, "x");
    auto [y, i] = g.resample(x, Attributes().set_name("rs").set("resampling_mode", "NEAREST"));
    y->set_dim({2, 1, 8, 8}).set_name("y");
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'rs'", "port Y", "tensor 'y'", "keeps N and C"});
  }
  {
    OpGraph g;
    auto x = g.tensor({1, 1, 4, 4}, DataType::FLOAT, "x");
    auto [y, i] = g.resample(x, Attributes().set_name("rs").set("resampling_mode", "MAXPOOL").set("window", D{4, 4})
                                    .set("stride", D{1, 1}).set("generate_index", true));
    i->set_data_type(DataType::INT8);
    ASSERT_TRUE(g.validate().is_good());  // 16 positions fit INT8
    OpGraph h;
    auto z = h.tensor({1, 1, 20, 20}, DataType::FLOAT, "z");
    auto [yy, ii] = h.resample(z, Attributes().set_name("rs").set("resampling_mode", "MAXPOOL").set("window", D{12, 12})
                                      .set("stride", D{1, 1}).set("generate_index", true));
    ii->set_data_type(DataType::INT8).set_name("idx");
    expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'rs'", "port Index", "tensor 'idx'", "cannot hold window position 143"});
  }
}

TEST(TensorOpsWindow, DiagonalBandMaskCausalAndBottomRight) {
  OpGraph g;
  auto s = g.tensor({2, 4, 8, 16}, DataType::FLOAT, "s");
  auto fill = g.tensor_scalar(-1e9);
  auto sq = g.tensor({2, 1, 1, 1}, DataType::INT32, "sq");
  auto skv = g.tensor({2, 1, 1, 1}, DataType::INT32, "skv");
  auto y = g.diagonal_band_mask(s, fill, sq, skv, g.tensor_scalar_int(3), g.tensor_scalar_int(0),
                                Attributes().set("comparison_mode", "CMP_GE"));
  y->set_output(true);
  auto z = g.diagonal_band_mask(y, fill, nullptr, nullptr, nullptr, g.tensor_scalar_int(0));
  z->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{2, 4, 8, 16}));
  EXPECT_EQ(z->get_data_type(), DataType::FLOAT);
}

TEST(TensorOpsWindow, DiagonalBandMaskRefusals) {
  {
    OpGraph g;
    auto s = g.tensor({8, 16}, DataType::FLOAT, "s");
    g.diagonal_band_mask(s, g.tensor_scalar(0.0), nullptr, nullptr, nullptr, nullptr, Attributes().set_name("dbm"));
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'diagonal_band_mask'", "node 'dbm'", "port ShiftRightBound", "neither"});
  }
  {
    OpGraph g;
    auto s = g.tensor({2, 1, 8, 16}, DataType::FLOAT, "s");
    auto sq = g.tensor({3}, DataType::INT32, "sq");
    auto skv = g.tensor({3}, DataType::INT32, "skv");
    g.diagonal_band_mask(s, g.tensor_scalar(0.0), sq, skv, nullptr, g.tensor_scalar_int(0), Attributes().set_name("dbm"));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'dbm'", "port SEQ_LEN_Q", "tensor 'sq'", "must hold 2 elements"});
  }
  {
    OpGraph g;
    auto s = g.tensor({2, 1, 8, 16}, DataType::FLOAT, "s");
    auto sq = g.tensor({2}, DataType::INT32, "sq");
    g.diagonal_band_mask(s, g.tensor_scalar(0.0), sq, nullptr, nullptr, g.tensor_scalar_int(0), Attributes().set_name("dbm"));
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"node 'dbm'", "port SEQ_LEN_KV", "both"});
  }
  {
    OpGraph g;
    auto s = g.tensor({8, 16}, DataType::FLOAT, "s");
    auto lb = g.tensor({1}, DataType::FLOAT, "lb");
    g.diagonal_band_mask(s, g.tensor_scalar(0.0), nullptr, nullptr, lb, nullptr, Attributes().set_name("dbm"));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'dbm'", "port LeftBound", "tensor 'lb'", "INT32, INT64"});
  }
}

TEST(TensorOpsWindow, PagedCacheLoadInfersOrChecksS) {
  OpGraph g;
  auto cont = g.tensor({10, 2, 4, 8}, DataType::HALF, "cache");
  auto len = g.tensor({3, 1, 1, 1}, DataType::INT32, "len");
  auto pt = g.tensor({3, 1, 5, 1}, DataType::INT32, "pt");
  auto y = g.paged_cache_load(cont, len, pt);
  auto z = g.paged_cache_load(cont, len, pt);
  z->set_dim({3, 2, 17, 8});
  y->set_output(true);
  z->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{3, 2, 20, 8}));
  EXPECT_EQ(y->get_data_type(), DataType::HALF);
  OpGraph h;
  auto c2 = h.tensor({10, 2, 4, 8}, DataType::HALF, "cache");
  auto l2 = h.tensor({3, 1, 1, 1}, DataType::INT32, "len");
  auto p2 = h.tensor({3, 1, 5, 1}, DataType::INT32, "pt");
  h.paged_cache_load(c2, l2, p2, Attributes().set_name("pcl"))->set_dim({3, 2, 21, 8}).set_name("k");
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'paged_cache_load'", "node 'pcl'", "port yOut", "tensor 'k'", "S <= pages * block_size = 20"});
  OpGraph k;
  auto c3 = k.tensor({10, 2, 4, 8}, DataType::HALF, "cache");
  auto l3 = k.tensor({2}, DataType::INT32, "len");
  auto p3 = k.tensor({3, 1, 5, 1}, DataType::FLOAT, "pt");
  k.paged_cache_load(c3, l3, p3, Attributes().set_name("pcl"));
  expect_refused(k, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'pcl'", "port pageTable", "tensor 'pt'", "FLOAT"});
}
