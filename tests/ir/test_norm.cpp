// IR tests of the per-sample norms (layernorm, rmsnorm, instancenorm, adalayernorm and
// their backwards) and rope: build, infer (stats shape, conditional outputs, layout),
// validate, JSON round trip, and one refused graph per op naming op/port/tensor/rule.
#include "ir/op_test_util.h"

using namespace opgraph;
using opgraph::test::D;
using opgraph::test::expect_refused;
using opgraph::test::expect_round_trip;

namespace {

Attributes phase(const char* p, const char* name = "n0") {
  return Attributes().set_name(name).set("forward_phase", p);
}

}  // namespace

TEST(NormIr, LayernormTrainingInfersStatsAndRoundTrips) {
  OpGraph g;
  g.set_io_data_type(DataType::HALF).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({4, 8, 3, 5}, DataType::HALF, "x");
  auto s = g.tensor({1, 8, 3, 5}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 8, 3, 5}, DataType::FLOAT, "bias");
  auto [y, mean, iv] = g.layernorm(x, s, b, g.tensor_scalar(1e-5), phase("TRAINING"));
  ASSERT_TRUE(y && mean && iv);
  y->set_output(true);
  mean->set_output(true);
  iv->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), D({4, 8, 3, 5}));
  EXPECT_EQ(mean->get_dim(), D({4, 1, 1, 1}));
  EXPECT_EQ(iv->get_dim(), D({4, 1, 1, 1}));
  EXPECT_EQ(mean->get_data_type(), DataType::FLOAT);
  EXPECT_EQ(y->get_data_type(), DataType::HALF);
}

TEST(NormIr, LayernormInferenceHasNoStatsAndLastAxisScale) {
  OpGraph g;
  auto x = g.tensor({2, 6, 16}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 1, 16}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 1, 16}, DataType::FLOAT, "bias");
  auto [y, mean, iv] = g.layernorm(x, s, b, g.tensor_scalar(1e-5), phase("INFERENCE"));
  EXPECT_TRUE(y);
  EXPECT_FALSE(mean);
  EXPECT_FALSE(iv);
  y->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(g.nodes()[0]->output("MEAN"), nullptr);
}

TEST(NormIr, LayernormStatsFollowChannelsLastLayout) {
  OpGraph g;
  // NCHW logical, NHWC physical.
  auto x = g.tensor({2, 4, 3, 3}, DataType::FLOAT, "x", {36, 1, 12, 4});
  auto s = g.tensor({1, 4, 3, 3}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 4, 3, 3}, DataType::FLOAT, "bias");
  auto [y, mean, iv] = g.layernorm(x, s, b, g.tensor_scalar(1e-5), phase("TRAINING"));
  y->set_output(true);
  ASSERT_TRUE(g.validate().is_good());
  EXPECT_EQ(y->get_stride(), D({36, 1, 12, 4}));
  EXPECT_EQ(mean->get_dim(), D({2, 1, 1, 1}));
}

TEST(NormIr, LayernormRefusesScaleThatIsNotBroadcastable) {
  OpGraph g;
  auto x = g.tensor({2, 6, 16}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 1, 8}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 1, 8}, DataType::FLOAT, "bias");
  g.layernorm(x, s, b, g.tensor_scalar(1e-5), phase("TRAINING", "ln"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'layernorm'", "node 'ln'", "port SCALE", "tensor 'scale'", "extent must be 1 or X's 16"});
}

TEST(NormIr, LayernormRefusesMissingForwardPhase) {
  OpGraph g;
  auto x = g.tensor({2, 16}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 16}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 16}, DataType::FLOAT, "bias");
  g.layernorm(x, s, b, g.tensor_scalar(1e-5), Attributes().set_name("ln"));
  expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'layernorm'", "node 'ln'", "forward_phase"});
}

TEST(NormIr, LayernormRefusesNonScalarEpsilon) {
  OpGraph g;
  auto x = g.tensor({2, 16}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 16}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 16}, DataType::FLOAT, "bias");
  auto eps = g.tensor({2}, DataType::FLOAT, "eps");
  g.layernorm(x, s, b, eps, phase("TRAINING", "ln"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'layernorm'", "port EPSILON", "tensor 'eps'", "scalar"});
}

TEST(NormIr, LayernormBackwardInfersAndRefusesWrongStats) {
  {
    OpGraph g;
    auto dy = g.tensor({3, 5, 8}, DataType::FLOAT, "dy");
    auto x = g.tensor({3, 5, 8}, DataType::FLOAT, "x");
    auto s = g.tensor({1, 5, 8}, DataType::FLOAT, "scale");
    auto m = g.tensor({3, 1, 1}, DataType::FLOAT, "mean");
    auto iv = g.tensor({3, 1, 1}, DataType::FLOAT, "inv_var");
    auto [dx, ds, db] = g.layernorm_backward(dy, x, s, m, iv, Attributes().set_name("lnb"));
    dx->set_output(true);
    ds->set_output(true);
    db->set_output(true);
    expect_round_trip(g);
    EXPECT_EQ(dx->get_dim(), D({3, 5, 8}));
    EXPECT_EQ(ds->get_dim(), D({1, 5, 8}));
    EXPECT_EQ(db->get_dim(), D({1, 5, 8}));
  }
  OpGraph g;
  auto dy = g.tensor({3, 5, 8}, DataType::FLOAT, "dy");
  auto x = g.tensor({3, 5, 8}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 5, 8}, DataType::FLOAT, "scale");
  auto m = g.tensor({3, 5, 1}, DataType::FLOAT, "mean");
  auto iv = g.tensor({3, 1, 1}, DataType::FLOAT, "inv_var");
  g.layernorm_backward(dy, x, s, m, iv, Attributes().set_name("lnb"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'layernorm_backward'", "node 'lnb'", "port MEAN", "tensor 'mean'", "[3, 1, 1]"});
}

TEST(NormIr, RmsnormOptionalBiasAndTrainingStats) {
  OpGraph g;
  auto x = g.tensor({2, 7, 32}, DataType::BFLOAT16, "x");
  auto s = g.tensor({1, 1, 32}, DataType::FLOAT, "scale");
  auto [y, iv] = g.rmsnorm(x, s, g.tensor_scalar(1e-6), phase("TRAINING"));
  ASSERT_TRUE(y && iv);
  y->set_output(true);
  iv->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(iv->get_dim(), D({2, 7, 1}));
  EXPECT_EQ(g.nodes()[0]->input("BIAS"), nullptr);

  OpGraph h;
  auto x2 = h.tensor({2, 7, 32}, DataType::FLOAT, "x");
  auto s2 = h.tensor({1, 1, 32}, DataType::FLOAT, "scale");
  auto b2 = h.tensor({1, 1, 16}, DataType::FLOAT, "bias");
  h.rmsnorm(x2, s2, h.tensor_scalar(1e-6), phase("INFERENCE", "rms"), b2);
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'rmsnorm'", "node 'rms'", "port BIAS", "tensor 'bias'"});
}

TEST(NormIr, RmsnormBackwardHasDbiasIsConditional) {
  for (bool with_dbias : {true, false}) {
    OpGraph g;
    auto dy = g.tensor({4, 16}, DataType::FLOAT, "dy");
    auto x = g.tensor({4, 16}, DataType::FLOAT, "x");
    auto s = g.tensor({1, 16}, DataType::FLOAT, "scale");
    auto iv = g.tensor({4, 1}, DataType::FLOAT, "inv_var");
    auto [dx, ds, db] = g.rmsnorm_backward(dy, x, s, iv, Attributes().set("has_dbias", with_dbias));
    EXPECT_EQ(db != nullptr, with_dbias);
    dx->set_output(true);
    ds->set_output(true);
    if (db) db->set_output(true);
    expect_round_trip(g);
    EXPECT_EQ(ds->get_dim(), D({1, 16}));
  }
  OpGraph g;
  auto dy = g.tensor({4, 16}, DataType::FLOAT, "dy");
  auto x = g.tensor({4, 15}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 15}, DataType::FLOAT, "scale");
  auto iv = g.tensor({4, 1}, DataType::FLOAT, "inv_var");
  g.rmsnorm_backward(dy, x, s, iv, Attributes().set_name("rmsb"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'rmsnorm_backward'", "node 'rmsb'", "port DY", "tensor 'dy'", "must equal those of port X"});
}

TEST(NormIr, InstancenormStatsAreNC) {
  OpGraph g;
  auto x = g.tensor({2, 3, 4, 5}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 3, 1, 1}, DataType::FLOAT, "scale");
  auto b = g.tensor({1, 3, 1, 1}, DataType::FLOAT, "bias");
  auto [y, m, iv] = g.instancenorm(x, s, b, g.tensor_scalar(1e-5), phase("TRAINING"));
  y->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(m->get_dim(), D({2, 3, 1, 1}));
  EXPECT_EQ(iv->get_dim(), D({2, 3, 1, 1}));

  OpGraph h;
  auto x2 = h.tensor({2, 3, 4, 5}, DataType::FLOAT, "x");
  auto s2 = h.tensor({1, 3, 4, 5}, DataType::FLOAT, "scale");
  h.instancenorm(x2, s2, s2, h.tensor_scalar(1e-5), phase("TRAINING", "in"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'instancenorm'", "node 'in'", "port SCALE", "tensor 'scale'", "per-channel scale [1, 3, 1, 1]"});
}

TEST(NormIr, InstancenormBackward) {
  OpGraph g;
  auto dy = g.tensor({2, 3, 6}, DataType::FLOAT, "dy");
  auto x = g.tensor({2, 3, 6}, DataType::FLOAT, "x");
  auto s = g.tensor({1, 3, 1}, DataType::FLOAT, "scale");
  auto m = g.tensor({2, 3, 1}, DataType::FLOAT, "mean");
  auto iv = g.tensor({2, 3, 1}, DataType::FLOAT, "inv_var");
  auto [dx, ds, db] = g.instancenorm_backward(dy, x, s, m, iv);
  dx->set_output(true);
  ds->set_output(true);
  db->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(ds->get_dim(), D({1, 3, 1}));

  OpGraph h;
  auto dy2 = h.tensor({2, 3, 6}, DataType::FLOAT, "dy");
  auto x2 = h.tensor({2, 3, 6}, DataType::FLOAT, "x");
  auto s2 = h.tensor({1, 3, 1}, DataType::FLOAT, "scale");
  auto m2 = h.tensor({2, 3, 1}, DataType::FLOAT, "mean");
  auto iv2 = h.tensor({1, 3, 1}, DataType::FLOAT, "inv_var");
  h.instancenorm_backward(dy2, x2, s2, m2, iv2, Attributes().set_name("inb"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'instancenorm_backward'", "node 'inb'", "port INV_VARIANCE", "tensor 'inv_var'", "[2, 3, 1]"});
}

TEST(NormIr, AdalayernormPerSampleScale) {
  OpGraph g;
  auto x = g.tensor({3, 10, 16}, DataType::FLOAT, "x");
  auto s = g.tensor({3, 1, 16}, DataType::FLOAT, "scale");
  auto b = g.tensor({3, 1, 16}, DataType::FLOAT, "bias");
  auto [y, m, iv] = g.adalayernorm(x, s, b, g.tensor_scalar(1e-5), phase("TRAINING"));
  y->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(m->get_dim(), D({3, 10, 1}));

  OpGraph h;
  auto x2 = h.tensor({3, 10, 16}, DataType::FLOAT, "x");
  auto s2 = h.tensor({1, 1, 16}, DataType::FLOAT, "scale");
  h.adalayernorm(x2, s2, s2, h.tensor_scalar(1e-5), phase("TRAINING", "ada"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'adalayernorm'", "node 'ada'", "port SCALE", "tensor 'scale'", "per-sample"});
}

TEST(NormIr, AdalayernormBackward) {
  OpGraph g;
  auto dy = g.tensor({3, 10, 16}, DataType::FLOAT, "dy");
  auto x = g.tensor({3, 10, 16}, DataType::FLOAT, "x");
  auto s = g.tensor({3, 1, 16}, DataType::FLOAT, "scale");
  auto m = g.tensor({3, 10, 1}, DataType::FLOAT, "mean");
  auto iv = g.tensor({3, 10, 1}, DataType::FLOAT, "inv_var");
  auto [dx, ds, db] = g.adalayernorm_backward(dy, x, s, m, iv);
  dx->set_output(true);
  ds->set_output(true);
  db->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(ds->get_dim(), D({3, 1, 16}));

  OpGraph h;
  auto dy2 = h.tensor({3, 10, 16}, DataType::INT32, "dy");
  auto x2 = h.tensor({3, 10, 16}, DataType::FLOAT, "x");
  auto s2 = h.tensor({3, 1, 16}, DataType::FLOAT, "scale");
  auto m2 = h.tensor({3, 10, 1}, DataType::FLOAT, "mean");
  h.adalayernorm_backward(dy2, x2, s2, m2, m2, Attributes().set_name("adab"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'adalayernorm_backward'", "node 'adab'", "port DY", "tensor 'dy'", "floating point"});
}

TEST(NormIr, RopeBothRotationsAndPartialRotary) {
  for (const char* rot : {"ROTATE_HALF", "INTERLEAVED"}) {
    OpGraph g;
    // [B, S, H, D] logical, [B, H, S, D] physical via strides.
    auto x = g.tensor({2, 5, 3, 8}, DataType::HALF, "x", {120, 8, 40, 1});
    auto c = g.tensor({5, 3}, DataType::FLOAT, "cos");
    auto s = g.tensor({5, 3}, DataType::FLOAT, "sin");
    auto y = g.rope(x, c, s, Attributes().set("rotation", rot));
    y->set_output(true);
    expect_round_trip(g);
    EXPECT_EQ(y->get_dim(), D({2, 5, 3, 8}));
    EXPECT_EQ(y->get_stride(), D({120, 8, 40, 1}));
  }
  OpGraph g;
  auto x = g.tensor({2, 5, 3, 8}, DataType::FLOAT, "x");
  auto c = g.tensor({5, 5}, DataType::FLOAT, "cos");
  auto s = g.tensor({5, 5}, DataType::FLOAT, "sin");
  g.rope(x, c, s, Attributes().set_name("rp"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'rope'", "node 'rp'", "port COS", "tensor 'cos'", "R/2"});

  OpGraph h;
  auto x2 = h.tensor({2, 5, 3, 8}, DataType::FLOAT, "x");
  auto c2 = h.tensor({4, 4}, DataType::FLOAT, "cos");
  h.rope(x2, c2, c2, Attributes().set_name("rp").set("rotation", "SIDEWAYS"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'rope'", "node 'rp'", "attribute 'rotation'", "SIDEWAYS"});
}

TEST(NormIr, RopeBackward) {
  OpGraph g;
  auto dy = g.tensor({1, 4, 2, 6}, DataType::FLOAT, "dy");
  auto c = g.tensor({4, 3}, DataType::FLOAT, "cos");
  auto s = g.tensor({4, 3}, DataType::FLOAT, "sin");
  auto dx = g.rope_backward(dy, c, s, Attributes().set("rotation", "INTERLEAVED"));
  dx->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(dx->get_dim(), D({1, 4, 2, 6}));

  OpGraph h;
  auto dy2 = h.tensor({1, 4, 2, 6}, DataType::FLOAT, "dy");
  auto c2 = h.tensor({3, 3}, DataType::FLOAT, "cos");
  h.rope_backward(dy2, c2, c2, Attributes().set_name("rpb"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'rope_backward'", "node 'rpb'", "port COS", "tensor 'cos'", "sequence length S = 4"});
}
