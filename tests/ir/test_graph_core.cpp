// Core IR rules: uids, freeze, validation basics, JSON round trip, key.
#include <gtest/gtest.h>

#include "opgraph/op_graph.h"

using namespace opgraph;

namespace {

OpGraph make_matmul_graph() {
  OpGraph g;
  g.set_name("mm").set_io_data_type(DataType::HALF).set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({2, 16, 32}, DataType::HALF, "a");
  auto b = g.tensor({1, 32, 8}, DataType::HALF, "b");
  auto c = g.matmul(a, b, Attributes().set_name("mm0"));
  c->set_output(true).set_name("c");
  return g;
}

}  // namespace

TEST(GraphCore, MatmulInfersShapeAndTypes) {
  OpGraph g = make_matmul_graph();
  ASSERT_TRUE(g.validate().is_good());
  auto c = g.nodes()[0]->output("C");
  EXPECT_EQ(c->get_dim(), (std::vector<std::int64_t>{2, 16, 8}));
  EXPECT_EQ(c->get_stride(), (std::vector<std::int64_t>{128, 8, 1}));
  EXPECT_EQ(c->get_data_type(), DataType::HALF);  // non-virtual output takes io_data_type
  EXPECT_EQ(g.nodes()[0]->compute_data_type(), DataType::FLOAT);
}

TEST(GraphCore, InvalidMatmulNamesOpPortTensorAndRule) {
  OpGraph g;
  auto a = g.tensor({4, 8}, DataType::HALF, "a");
  auto b = g.tensor({9, 3}, DataType::HALF, "b");
  g.matmul(a, b, Attributes().set_name("bad"));
  Status s = g.validate();
  ASSERT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(s.message().find("op 'matmul'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("node 'bad'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("port B"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("tensor 'b'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("inner extent K"), std::string::npos) << s.message();
}

TEST(GraphCore, UserUidCollisionRefused) {
  OpGraph g;
  auto a = g.tensor({4, 8}, DataType::HALF, "a");
  auto b = g.tensor({8, 3}, DataType::HALF, "b");
  a->set_uid(7);
  b->set_uid(7);
  g.matmul(a, b);
  Status s = g.validate();
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(s.message().find("uid 7"), std::string::npos);
}

TEST(GraphCore, UserUidStealsAutoAssignedUid) {
  OpGraph g;
  auto a = g.tensor({4, 8}, DataType::HALF, "a");
  auto b = g.tensor({8, 3}, DataType::HALF, "b");
  auto c = g.matmul(a, b);
  ASSERT_TRUE(g.assign_uids().is_good());
  std::int64_t auto_uid_of_b = b->get_uid();
  EXPECT_FALSE(b->get_uid_assigned_by_user());
  c->set_uid(auto_uid_of_b);  // the user lands on b's auto uid
  ASSERT_TRUE(g.validate().is_good());
  EXPECT_EQ(c->get_uid(), auto_uid_of_b);
  EXPECT_NE(b->get_uid(), auto_uid_of_b);  // the holder was renumbered
  EXPECT_GT(b->get_uid(), 0);
  EXPECT_NE(b->get_uid(), a->get_uid());
}

TEST(GraphCore, NonPositiveUserUidRefused) {
  OpGraph g;
  auto a = g.tensor({4, 8}, DataType::HALF, "a");
  a->set_uid(-3);
  EXPECT_EQ(g.assign_uids().code(), ErrorCode::INVALID_VALUE);
}

TEST(GraphCore, FreezeRefusesEveryMutationPathButKeepsInspection) {
  OpGraph g = make_matmul_graph();
  ASSERT_TRUE(g.validate().is_good());
  g.freeze();
  auto a = g.tensors()[0];
  EXPECT_THROW(a->set_dim({1, 2}), FrozenError);
  EXPECT_THROW(a->set_stride({2, 1}), FrozenError);
  EXPECT_THROW(a->set_data_type(DataType::FLOAT), FrozenError);
  EXPECT_THROW(a->set_name("x"), FrozenError);
  EXPECT_THROW(a->set_uid(99), FrozenError);
  EXPECT_THROW(a->clear_uid(), FrozenError);
  EXPECT_THROW(a->set_output(true), FrozenError);
  EXPECT_THROW(a->set_is_virtual(true), FrozenError);
  EXPECT_THROW(a->set_ragged_offset(nullptr), FrozenError);
  EXPECT_THROW(a->set_reordering_type(TensorReordering::F8_128x4), FrozenError);
  EXPECT_THROW(a->set_alignment(32), FrozenError);
  EXPECT_THROW(a->set_pass_by_value(ScalarValue{}), FrozenError);
  EXPECT_THROW(g.tensor({1}, DataType::FLOAT), FrozenError);
  EXPECT_THROW(g.tensor_scalar(1.0), FrozenError);
  EXPECT_THROW(g.matmul(a, a), FrozenError);
  EXPECT_THROW(g.set_name("y"), FrozenError);
  EXPECT_THROW(g.set_io_data_type(DataType::FLOAT), FrozenError);
  EXPECT_THROW(g.set_intermediate_data_type(DataType::FLOAT), FrozenError);
  EXPECT_THROW(g.set_compute_data_type(DataType::FLOAT), FrozenError);
  auto& node = *g.nodes()[0];
  EXPECT_THROW(node.set_attributes(Attributes()), FrozenError);
  EXPECT_THROW(node.bind_input(0, a), FrozenError);
  EXPECT_THROW(node.bind_output(0, a), FrozenError);
  EXPECT_THROW(node.set_compute_data_type(DataType::HALF), FrozenError);
  // Inspection still works, and so do validate/serialize (read-only).
  EXPECT_EQ(a->get_dim(), (std::vector<std::int64_t>{2, 16, 32}));
  EXPECT_EQ(node.op(), "matmul");
  EXPECT_TRUE(g.validate().is_good());
  EXPECT_TRUE(g.serialize().is_good());
}

TEST(GraphCore, JsonRoundTripIsIdentityAndKeyStable) {
  OpGraph g = make_matmul_graph();
  ASSERT_TRUE(g.validate().is_good());
  auto s1 = g.serialize();
  ASSERT_TRUE(s1.is_good());
  auto g2 = OpGraph::deserialize(s1.value());
  ASSERT_TRUE(g2.is_good()) << g2.status().to_string();
  auto s2 = g2->serialize();
  ASSERT_TRUE(s2.is_good());
  EXPECT_EQ(s1.value(), s2.value());
  EXPECT_EQ(g.key().value(), g2->key().value());
  ASSERT_TRUE(g2->validate().is_good());
  EXPECT_EQ(g2->serialize().value(), s1.value());
  // A different graph has a different key.
  OpGraph h = make_matmul_graph();
  h.tensors()[0]->set_dim({3, 16, 32});
  EXPECT_NE(h.key().value(), g.key().value());
}

TEST(GraphCore, DeserializeRefusesGarbageWithPath) {
  for (const char* bad : {"", "{", "[]", "{\"version\":1}", "{\"version\":2,\"context\":{},\"tensors\":[],\"nodes\":[]}",
                          "{\"version\":1,\"context\":{},\"tensors\":[{\"uid\":-1}],\"nodes\":[]}",  // uid 0 is a real uid
                          "{\"version\":1,\"context\":{},\"tensors\":[],\"nodes\":[{\"op\":\"nope\"}]}",
                          "{\"version\":1,\"context\":{},\"tensors\":[],\"nodes\":[{\"op\":\"matmul\",\"inputs\":{\"A\":[3]}}]}"}) {
    auto r = OpGraph::deserialize(bad);
    EXPECT_EQ(r.status().code(), ErrorCode::UNSUPPORTED_GRAPH_FORMAT) << bad;
  }
  auto r = OpGraph::deserialize("{\"version\":1,\"context\":{},\"tensors\":[],\"nodes\":[{\"op\":\"nope\"}]}");
  EXPECT_NE(r.status().message().find("nodes[0].op"), std::string::npos);
}

TEST(GraphCore, UnknownAttributeAndMissingInputRefused) {
  OpGraph g;
  auto a = g.tensor({4, 8}, DataType::HALF, "a");
  auto b = g.tensor({8, 3}, DataType::HALF, "b");
  g.matmul(a, b, Attributes().set("no_such_attr", 1));
  Status s = g.validate();
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(s.message().find("unknown attribute 'no_such_attr'"), std::string::npos) << s.message();

  OpGraph h;
  auto x = h.tensor({4, 8}, DataType::HALF, "x");
  h.matmul(x, nullptr);
  EXPECT_EQ(h.validate().code(), ErrorCode::ATTRIBUTE_NOT_SET);
}

TEST(GraphCore, VirtualInputWithoutProducerRefused) {
  OpGraph g;
  auto a = g.tensor({4, 8}, DataType::HALF, "a");
  auto b = g.tensor({8, 3}, DataType::HALF, "b");
  b->set_is_virtual(true);
  g.matmul(a, b);
  Status s = g.validate();
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(s.message().find("virtual tensor that no node produces"), std::string::npos) << s.message();
}

TEST(GraphCore, UserOutputDimsMustAgree) {
  OpGraph g;
  auto a = g.tensor({4, 8}, DataType::HALF, "a");
  auto b = g.tensor({8, 3}, DataType::HALF, "b");
  auto c = g.matmul(a, b);
  c->set_dim({4, 4});
  EXPECT_EQ(g.validate().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
}
