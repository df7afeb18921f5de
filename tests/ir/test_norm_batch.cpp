// IR tests of the batch-statistics norms: genstats, bn_finalize, batchnorm (with
// running stats and peer stats), batchnorm_inference, batchnorm_backward, dbn_weight.
#include "ir/op_test_util.h"

using namespace opgraph;
using opgraph::test::D;
using opgraph::test::expect_refused;
using opgraph::test::expect_round_trip;

TEST(NormBatchIr, GenstatsPerChannel) {
  OpGraph g;
  auto x = g.tensor({4, 6, 3, 3}, DataType::HALF, "x");
  auto [sum, sq] = g.genstats(x);
  sum->set_output(true);
  sq->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(sum->get_dim(), D({1, 6, 1, 1}));
  EXPECT_EQ(sq->get_dim(), D({1, 6, 1, 1}));
  EXPECT_EQ(sum->get_data_type(), DataType::FLOAT);

  OpGraph h;
  auto x2 = h.tensor({6}, DataType::FLOAT, "x");
  h.genstats(x2, Attributes().set_name("gs"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'genstats'", "node 'gs'", "port X", "tensor 'x'", "rank"});
}

TEST(NormBatchIr, BnFinalizeRunningStatsAreConditional) {
  for (bool running : {false, true}) {
    OpGraph g;
    auto mk = [&](const char* n) { return g.tensor({1, 8, 1, 1}, DataType::FLOAT, n); };
    auto count = g.tensor_scalar_int(64);
    TensorPtr pm = running ? mk("prev_mean") : nullptr;
    TensorPtr pv = running ? mk("prev_var") : nullptr;
    TensorPtr mo = running ? g.tensor_scalar(0.1) : nullptr;
    auto outs = g.bn_finalize(mk("sum"), mk("sq_sum"), mk("scale"), mk("bias"), g.tensor_scalar(1e-5), count, {},
                              pm, pv, mo);
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(outs[static_cast<std::size_t>(i)]);
    EXPECT_EQ(outs[4] != nullptr, running);
    EXPECT_EQ(outs[5] != nullptr, running);
    for (auto& o : outs)
      if (o) o->set_output(true);
    expect_round_trip(g);
    for (auto& o : outs)
      if (o) { EXPECT_EQ(o->get_dim(), D({1, 8, 1, 1})); }
  }
  OpGraph g;
  auto mk = [&](const char* n) { return g.tensor({1, 8, 1, 1}, DataType::FLOAT, n); };
  g.bn_finalize(mk("sum"), mk("sq_sum"), mk("scale"), mk("bias"), g.tensor_scalar(1e-5),
                g.tensor_scalar(64.0, DataType::FLOAT), Attributes().set_name("fin"));
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'bn_finalize'", "node 'fin'", "port ACCUM_COUNT", "INT32, INT64"});
}

TEST(NormBatchIr, BatchnormWithRunningAndPeerStats) {
  OpGraph g;
  auto x = g.tensor({4, 3, 5, 5}, DataType::FLOAT, "x");
  auto ch = [&](const char* n) { return g.tensor({1, 3, 1, 1}, DataType::FLOAT, n); };
  auto peer = g.tensor({2, 3, 1, 1}, DataType::FLOAT, "peer0");
  auto [y, m, iv, nm, nv] = g.batchnorm(x, ch("scale"), ch("bias"), g.tensor_scalar(1e-5), {}, ch("prev_mean"),
                                        ch("prev_var"), g.tensor_scalar(0.1), {peer});
  ASSERT_TRUE(nm && nv);
  for (auto& o : {y, m, iv, nm, nv}) o->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), D({4, 3, 5, 5}));
  EXPECT_EQ(m->get_dim(), D({1, 3, 1, 1}));
  EXPECT_EQ(nv->get_dim(), D({1, 3, 1, 1}));
  EXPECT_EQ(g.nodes()[0]->inputs_of("PEER_STATS").size(), 1u);
}

TEST(NormBatchIr, BatchnormRefusesPartialRunningStatsAndBadPeer) {
  {
    OpGraph g;
    auto x = g.tensor({4, 3, 5}, DataType::FLOAT, "x");
    auto ch = [&](const char* n) { return g.tensor({1, 3, 1}, DataType::FLOAT, n); };
    g.batchnorm(x, ch("scale"), ch("bias"), g.tensor_scalar(1e-5), Attributes().set_name("bn"), ch("prev_mean"),
                ch("prev_var"));
    expect_refused(g, ErrorCode::ATTRIBUTE_NOT_SET, {"op 'batchnorm'", "node 'bn'", "port MOMENTUM", "together"});
  }
  OpGraph g;
  auto x = g.tensor({4, 3, 5}, DataType::FLOAT, "x");
  auto ch = [&](const char* n) { return g.tensor({1, 3, 1}, DataType::FLOAT, n); };
  auto peer = g.tensor({1, 3, 1}, DataType::FLOAT, "peer0");
  g.batchnorm(x, ch("scale"), ch("bias"), g.tensor_scalar(1e-5), Attributes().set_name("bn"), nullptr, nullptr,
              nullptr, {peer});
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'batchnorm'", "node 'bn'", "port PEER_STATS", "'peer0'", "[2, 3, 1]"});
}

TEST(NormBatchIr, BatchnormInference) {
  OpGraph g;
  auto x = g.tensor({2, 4, 3}, DataType::HALF, "x");
  auto ch = [&](const char* n) { return g.tensor({1, 4, 1}, DataType::FLOAT, n); };
  auto y = g.batchnorm_inference(x, ch("mean"), ch("inv_var"), ch("scale"), ch("bias"));
  y->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(y->get_dim(), D({2, 4, 3}));

  OpGraph h;
  auto x2 = h.tensor({2, 4, 3}, DataType::FLOAT, "x");
  auto ch2 = [&](const char* n) { return h.tensor({1, 4, 1}, DataType::FLOAT, n); };
  auto bad_mean = h.tensor({1, 5, 1}, DataType::FLOAT, "mean");
  h.batchnorm_inference(x2, bad_mean, ch2("inv_var"), ch2("scale"), ch2("bias"), Attributes().set_name("bni"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'batchnorm_inference'", "node 'bni'", "port MEAN", "tensor 'mean'", "[1, 4, 1]"});
}

TEST(NormBatchIr, BatchnormBackward) {
  OpGraph g;
  auto dy = g.tensor({2, 4, 3, 3}, DataType::FLOAT, "dy");
  auto x = g.tensor({2, 4, 3, 3}, DataType::FLOAT, "x");
  auto ch = [&](const char* n) { return g.tensor({1, 4, 1, 1}, DataType::FLOAT, n); };
  auto [dx, ds, db] = g.batchnorm_backward(dy, x, ch("scale"), ch("mean"), ch("inv_var"), {},
                                           {g.tensor({2, 4, 1, 1}, DataType::FLOAT, "peer")});
  for (auto& o : {dx, ds, db}) o->set_output(true);
  expect_round_trip(g);
  EXPECT_EQ(ds->get_dim(), D({1, 4, 1, 1}));

  OpGraph h;
  auto dy2 = h.tensor({2, 4, 3, 3}, DataType::FLOAT, "dy");
  auto x2 = h.tensor({2, 4, 3, 3}, DataType::FLOAT, "x");
  auto sc = h.tensor({1, 4, 3, 1}, DataType::FLOAT, "scale");
  auto ch2 = [&](const char* n) { return h.tensor({1, 4, 1, 1}, DataType::FLOAT, n); };
  h.batchnorm_backward(dy2, x2, sc, ch2("mean"), ch2("inv_var"), Attributes().set_name("bnb"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'batchnorm_backward'", "node 'bnb'", "port SCALE", "tensor 'scale'", "per-channel"});
}

TEST(NormBatchIr, DbnWeight) {
  OpGraph g;
  auto dy = g.tensor({2, 4, 3, 3}, DataType::FLOAT, "dy");
  auto x = g.tensor({2, 4, 3, 3}, DataType::FLOAT, "x");
  auto ch = [&](const char* n) { return g.tensor({1, 4, 1, 1}, DataType::FLOAT, n); };
  auto outs = g.dbn_weight(dy, x, ch("mean"), ch("inv_var"), ch("scale"));
  for (auto& o : outs) {
    ASSERT_TRUE(o);
    o->set_output(true);
  }
  expect_round_trip(g);
  for (auto& o : outs) EXPECT_EQ(o->get_dim(), D({1, 4, 1, 1}));

  OpGraph h;
  auto dy2 = h.tensor({2, 4, 3, 2}, DataType::FLOAT, "dy");
  auto x2 = h.tensor({2, 4, 3, 3}, DataType::FLOAT, "x");
  auto ch2 = [&](const char* n) { return h.tensor({1, 4, 1, 1}, DataType::FLOAT, n); };
  h.dbn_weight(dy2, x2, ch2("mean"), ch2("inv_var"), ch2("scale"), Attributes().set_name("dbn"));
  expect_refused(h, ErrorCode::GRAPH_NOT_SUPPORTED, {"op 'dbn_weight'", "node 'dbn'", "port DY", "tensor 'dy'"});
}
