// Tensor-ops core records: reduction, rng, reshape, transpose, slice, concatenate.
// Each op builds, infers, validates and round-trips; each rule refuses with its code
// and a message naming op, node, port/attribute, tensor and rule.
#include <gtest/gtest.h>

#include "graph_check.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using opgraph::testing::expect_refused;
using opgraph::testing::expect_round_trip;
using D = std::vector<std::int64_t>;

TEST(TensorOps, ReductionKeepsUserDimsAndRoundTrips) {
  OpGraph g;
  auto x = g.tensor({4, 6, 5}, DataType::HALF, "x");
  auto y = g.reduction(x, Attributes().set("mode", "NORM2").set("is_deterministic", true));
  y->set_dim({4, 1, 1}).set_output(true).set_name("y");
  expect_round_trip(g);
  EXPECT_EQ(y->get_stride(), (D{1, 1, 1}));
  EXPECT_EQ(y->get_data_type(), DataType::HALF);
}

TEST(TensorOps, ReductionRefusals) {
  {
    OpGraph g;
    auto x = g.tensor({4, 6}, DataType::FLOAT, "x");
    g.reduction(x, Attributes().set_name("r").set("mode", "ADD"))->set_name("y");
    expect_refused(g, ErrorCode::SHAPE_DEDUCTION_FAILED, {"op 'reduction'", "node 'r'", "port Y", "tensor 'y'", "set them"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 6}, DataType::FLOAT, "x");
    g.reduction(x, Attributes().set_name("r").set("mode", "MAX"))->set_dim({4, 3}).set_name("y");
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                   {"op 'reduction'", "node 'r'", "port Y", "tensor 'y'", "axis 1", "(kept) or 1 (reduced)", "got 3"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 6}, DataType::FLOAT, "x");
    g.reduction(x, Attributes().set_name("r"))->set_dim({4, 1});
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'reduction'", "node 'r'", "'mode'"});
  }
}

TEST(TensorOps, RngFromSeedTensorOrAttribute) {
  OpGraph g;
  auto seed = g.tensor_scalar_int(1234);
  auto off = g.tensor_scalar_int(7);
  auto y = g.rng(seed, off, Attributes().set("distribution", "BERNOULLI").set("bernoulli_probability", 0.25)
                                 .set("dim", D{2, 3, 4}).set("stride", D{12, 1, 3}));
  y->set_output(true).set_name("mask");
  auto z = g.rng(nullptr, nullptr, Attributes().set("distribution", "NORMAL").set("seed", std::int64_t{9})
                                      .set("dim", D{8}).set("normal_dist_standard_deviation", 2.0));
  z->set_output(true).set_name("noise");
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{2, 3, 4}));
  EXPECT_EQ(y->get_stride(), (D{12, 1, 3}));
  EXPECT_EQ(y->get_data_type(), DataType::FLOAT);
  EXPECT_EQ(z->get_dim(), (D{8}));
}

TEST(TensorOps, RngRefusals) {
  auto base = [] { return Attributes().set_name("r").set("distribution", "UNIFORM").set("dim", D{4}); };
  {
    OpGraph g;
    g.rng(nullptr, nullptr, base());
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'rng'", "node 'r'", "port Seed", "no seed"});
  }
  {
    OpGraph g;
    auto s = g.tensor({1}, DataType::INT64, "s");
    g.rng(s, nullptr, base().set("seed", std::int64_t{3}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'rng'", "node 'r'", "port Seed", "tensor 's'", "given twice"});
  }
  {
    OpGraph g;
    auto s = g.tensor({2}, DataType::INT64, "s");
    g.rng(s, nullptr, base());
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'r'", "port Seed", "tensor 's'", "must hold 1 elements"});
  }
  {
    OpGraph g;
    g.rng(nullptr, nullptr,
          Attributes().set_name("r").set("distribution", "BERNOULLI").set("dim", D{4}).set("seed", std::int64_t{1}));
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"node 'r'", "attribute 'bernoulli_probability'"});
  }
  {
    OpGraph g;
    g.rng(nullptr, nullptr, base().set("seed", std::int64_t{1}).set("bernoulli_probability", 0.5));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'r'", "attribute 'bernoulli_probability'", "not UNIFORM"});
  }
  {
    OpGraph g;
    g.rng(nullptr, nullptr, base().set("seed", std::int64_t{1}).set("uniform_dist_maximum", -1.0));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'r'", "attribute 'uniform_dist_maximum'", "must exceed"});
  }
  {
    OpGraph g;
    g.rng(nullptr, nullptr, base().set("seed", std::int64_t{1}).set("dim", D{4, 0}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'r'", "attribute 'dim'", ">= 1"});
  }
}

TEST(TensorOps, ReshapeViewAndLogical) {
  OpGraph g;
  auto x = g.tensor({2, 3, 4}, DataType::FLOAT, "x");
  auto y = g.reshape(x, Attributes().set("dim", D{6, 4}));
  auto z = g.reshape(y, Attributes().set("reshape_mode", "LOGICAL").set("dim", D{4, 6}).set("stride", D{1, 4}));
  auto w = g.reshape(z, Attributes().set("reshape_mode", "LOGICAL"));
  w->set_dim({24}).set_output(true).set_name("w");
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{6, 4}));
  EXPECT_EQ(z->get_stride(), (D{1, 4}));
  EXPECT_EQ(w->get_stride(), (D{1}));
}

TEST(TensorOps, ReshapeRefusals) {
  {
    OpGraph g;
    auto x = g.tensor({2, 3, 4}, DataType::FLOAT, "x");
    g.reshape(x, Attributes().set_name("rs").set("dim", D{5, 5}))->set_name("y");
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'reshape'", "node 'rs'", "port Y", "tensor 'y'", "25 elements", "24"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 6}, DataType::FLOAT, "x", {1, 4});
    g.reshape(x, Attributes().set_name("rs").set("dim", D{24}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'reshape'", "node 'rs'", "port X", "tensor 'x'", "VIEW_ONLY", "packed"});
  }
  {
    OpGraph g;
    auto x = g.tensor({4, 6}, DataType::FLOAT, "x");
    g.reshape(x, Attributes().set_name("rs"))->set_name("y");
    expect_refused(g, ErrorCode::SHAPE_DEDUCTION_FAILED, {"op 'reshape'", "node 'rs'", "port Y", "tensor 'y'", "`dim`"});
  }
}

TEST(TensorOps, TransposePermutesDims) {
  OpGraph g;
  auto x = g.tensor({2, 3, 4, 5}, DataType::BFLOAT16, "x");
  auto y = g.transpose(x, Attributes().set("permutation", D{0, 2, 3, 1}));
  y->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{2, 4, 5, 3}));
  OpGraph h;
  auto a = h.tensor({2, 3, 4}, DataType::FLOAT, "a");
  h.transpose(a, Attributes().set_name("t").set("permutation", D{0, 2, 2}));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'transpose'", "node 't'", "attribute 'permutation'", "[0, 2, 2]"});
  OpGraph k;
  auto b = k.tensor({2, 3, 4}, DataType::FLOAT, "b");
  k.transpose(b, Attributes().set_name("t"));
  expect_refused(k, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'transpose'", "node 't'", "'permutation'"});
}

TEST(TensorOps, SliceWithStrides) {
  OpGraph g;
  auto x = g.tensor({4, 10, 8}, DataType::HALF, "x");
  auto y = g.slice(x, Attributes().set("slices", D{0, 4, 1, 8, 2, 8}).set("strides", D{1, 3, 2}));
  y->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{4, 3, 3}));  // ceil(7/3) = 3, ceil(6/2) = 3
  OpGraph h;
  auto a = h.tensor({4, 10}, DataType::FLOAT, "a");
  h.slice(a, Attributes().set_name("s").set("slices", D{0, 4, 3, 11}));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'slice'", "node 's'", "attribute 'slices'", "axis 1", "{3, 11}"});
  OpGraph k;
  auto b = k.tensor({4, 10}, DataType::FLOAT, "b");
  k.slice(b, Attributes().set_name("s").set("slices", D{0, 4}));
  expect_refused(k, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 's'", "attribute 'slices'", "one {start, end} pair per axis"});
}

TEST(TensorOps, ConcatenateSumsTheAxis) {
  OpGraph g;
  auto a = g.tensor({2, 3, 4}, DataType::FLOAT, "a");
  auto b = g.tensor({2, 5, 4}, DataType::FLOAT, "b");
  auto c = g.tensor({2, 1, 4}, DataType::FLOAT, "c");
  auto y = g.concatenate({a, b, c}, Attributes().set("axis", std::int64_t{-2}).set("in_place_index", std::int64_t{1}));
  y->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), (D{2, 9, 4}));
  EXPECT_EQ(g.nodes()[0]->inputs_of("X").size(), 3u);
}

TEST(TensorOps, ConcatenateRefusals) {
  {
    OpGraph g;
    auto a = g.tensor({2, 3}, DataType::FLOAT, "a");
    auto b = g.tensor({4, 5}, DataType::FLOAT, "b");
    g.concatenate({a, b}, Attributes().set_name("cat").set("axis", std::int64_t{1}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                   {"op 'concatenate'", "node 'cat'", "port X", "tensor 'b'", "[4, 5]", "axis 0", "concatenation axis 1"});
  }
  {
    OpGraph g;
    auto a = g.tensor({2, 3}, DataType::FLOAT, "a");
    g.concatenate({a, a}, Attributes().set_name("cat"));
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'concatenate'", "node 'cat'", "'axis'"});
  }
  {
    OpGraph g;
    auto a = g.tensor({2, 3}, DataType::FLOAT, "a");
    g.concatenate({a, a}, Attributes().set_name("cat").set("axis", std::int64_t{0}).set("in_place_index", std::int64_t{2}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'cat'", "attribute 'in_place_index'", "got 2"});
  }
  {
    OpGraph g;
    auto a = g.tensor({2, 3}, DataType::FLOAT, "a");
    auto b = g.tensor({2, 3}, DataType::HALF, "b");
    g.concatenate({a, b}, Attributes().set_name("cat").set("axis", std::int64_t{0}));
    expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"node 'cat'", "tensor 'b'", "HALF", "input 0 is FLOAT"});
  }
}
