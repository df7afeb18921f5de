// tests/plan/test_porting_semantics.cpp — two rules code ported from cudnn-frontend
// relies on, end to end through planning and the CPU reference engine:
// a user uid of 0 is a real uid (kept by validate, serialized, bound at execute),
// and MUL takes a BOOLEAN operand as a 0/1 mask.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "opgraph/graph.h"

namespace opgraph {
namespace {

TEST(PortingSemantics, UidZeroIsARealUserUid) {
  Graph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({2, 3}, DataType::FLOAT, "A");
  auto b = g.tensor({2, 3}, DataType::FLOAT, "B");
  a->set_uid(0);
  b->set_uid(1);
  auto c = g.add(a, b);
  c->set_output(true).set_uid(2);
  EXPECT_TRUE(a->has_uid());
  ASSERT_TRUE(g.validate().is_good());
  EXPECT_EQ(a->get_uid(), 0);  // kept, not renumbered as "unset"
  EXPECT_EQ(g.tensor_by_uid(0), a);

  // An automatic uid never lands on 0 and never collides with it.
  Graph h;
  auto x = h.tensor({4}, DataType::FLOAT, "x");
  x->set_uid(0);
  auto y = h.tensor({4}, DataType::FLOAT, "y");
  auto z = h.add(x, y);
  z->set_output(true);
  ASSERT_TRUE(h.validate().is_good());
  EXPECT_EQ(x->get_uid(), 0);
  EXPECT_GE(y->get_uid(), 1);
  EXPECT_GE(z->get_uid(), 1);
  EXPECT_NE(y->get_uid(), z->get_uid());

  // The JSON round trip keeps uid 0.
  auto text = g.serialize();
  ASSERT_TRUE(text.is_good()) << text.status().to_string();
  auto back = Graph::deserialize(*text);
  ASSERT_TRUE(back.is_good()) << back.status().to_string();
  ASSERT_NE(back->tensor_by_uid(0), nullptr);
  EXPECT_EQ(back->tensor_by_uid(0)->get_name(), "A");

  // Execute binds the buffer keyed 0.
  ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  std::vector<float> av{1, 2, 3, 4, 5, 6}, bv{10, 20, 30, 40, 50, 60}, cv(6, -7.f);
  VariantPack pack;
  // by uid (a literal 0 would also read as a null TensorPtr: pass an int64_t variable)
  const std::int64_t ua = a->get_uid(), ub = b->get_uid(), uc = c->get_uid();
  ASSERT_EQ(ua, 0);
  pack.set(ua, av.data()).set(ub, bv.data()).set(uc, cv.data());
  ASSERT_TRUE(g.execute(pack).is_good());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(cv[i], av[i] + bv[i]) << i;

  // A negative user uid is still refused, naming the tensor.
  Graph bad;
  auto n = bad.tensor({1}, DataType::FLOAT, "neg");
  n->set_uid(-3);
  auto m = bad.add(n, n);
  m->set_output(true);
  Status s = bad.validate();
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(s.message().find("'neg'"), std::string::npos) << s.message();
}

TEST(PortingSemantics, MulTakesABooleanMask) {
  Graph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({3, 4}, DataType::FLOAT, "x");
  auto mask = g.tensor({3, 4}, DataType::BOOLEAN, "mask");
  auto y = g.mul(x, mask);
  y->set_output(true).set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.validate().is_good()) << g.validate().to_string();
  ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  std::vector<float> xv(12), yv(12, 1e30f);  // outputs poisoned
  std::vector<std::uint8_t> mv(12);
  for (auto& v : xv) v = d(rng);
  for (auto& v : mv) v = rng() % 2;
  VariantPack pack;
  pack.set(x->get_uid(), xv.data()).set(mask->get_uid(), mv.data()).set(y->get_uid(), yv.data());
  ASSERT_TRUE(g.execute(pack).is_good());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(yv[i], mv[i] ? xv[i] : 0.f) << i;

  // Other arithmetic modes still refuse a BOOLEAN operand.
  Graph h;
  auto p = h.tensor({2}, DataType::FLOAT, "p");
  auto q = h.tensor({2}, DataType::BOOLEAN, "q");
  h.add(p, q)->set_output(true);
  Status s = h.validate();
  EXPECT_FALSE(s.is_good());
  EXPECT_NE(s.message().find("ADD is arithmetic and refuses a BOOLEAN input"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace opgraph
