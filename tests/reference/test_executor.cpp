// The reference executor on raw host buffers built by hand: strided and fp4
// inputs, strided outputs with their gaps left untouched, pass-by-value inputs,
// rounding of virtual intermediates, ragged offsets reaching kernels, and every
// error path (unvalidated graph, missing buffer, missing kernel, failing or
// throwing kernel) leaving the caller's outputs untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "engines/reference/convert.h"
#include "engines/reference/executor.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using reference::HostBuffer;

namespace {

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  return v;
}

bool all_poison(const std::vector<float>& v) {
  for (float x : v) {
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    if (b != 0xFFFFFFFFu) return false;
  }
  return true;
}

std::vector<float> poison(std::size_t n) {
  std::vector<float> v(n);
  std::memset(v.data(), 0xFF, n * 4);
  return v;
}

}  // namespace

TEST(Executor, StridedInputsAndOutputGapsUntouched) {
  const std::int64_t M = 3, K = 4, N = 5, LDC = 7;
  OpGraph g;
  // A stored column-major (stride [1, M]); C rows padded to LDC elements.
  auto a = g.tensor({M, K}, DataType::FLOAT, "a", {1, M});
  auto b = g.tensor({K, N}, DataType::FLOAT, "b");
  auto c = g.matmul(a, b);
  c->set_output(true).set_name("c").set_stride({LDC, 1}).set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.validate().is_good());
  auto va = random_floats(M * K, 1), vb = random_floats(K * N, 2);
  auto vc = poison(M * LDC);
  ASSERT_TRUE(reference::execute(g, {{a->get_uid(), {va.data()}}, {b->get_uid(), {vb.data()}},
                                     {c->get_uid(), {vc.data()}}})
                  .is_good());
  for (std::int64_t m = 0; m < M; ++m) {
    for (std::int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (std::int64_t k = 0; k < K; ++k) acc += double(va[m + k * M]) * double(vb[k * N + n]);
      EXPECT_EQ(vc[m * LDC + n], static_cast<float>(acc)) << m << "," << n;
    }
    for (std::int64_t n = N; n < LDC; ++n) EXPECT_TRUE(std::isnan(vc[m * LDC + n])) << "gap " << m << "," << n;
  }
}

TEST(Executor, Fp4InputPackedAlongUnitStrideAxis) {
  OpGraph g;
  auto a = g.tensor({2, 4}, DataType::FP4_E2M1, "a");
  auto id = g.tensor({4, 4}, DataType::FLOAT, "id");
  auto c = g.matmul(a, id);
  c->set_output(true).set_name("c").set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.validate().is_good());
  // e2m1 codes: 1=0.5 2=1 3=1.5 4=2 5=3 6=4 7=6, sign bit 8. Row 0: {0.5, 1, 1.5, -2}; row 1: {3, 4, -6, 0}.
  unsigned char packed[4] = {0x21, 0xC3, 0x65, 0x0F};
  std::vector<float> vid(16, 0.0f);
  for (int i = 0; i < 4; ++i) vid[i * 5] = 1.0f;
  auto vc = poison(8);
  ASSERT_TRUE(reference::execute(g, {{a->get_uid(), {packed}}, {id->get_uid(), {vid.data()}}, {c->get_uid(), {vc.data()}}})
                  .is_good());
  const float expect[8] = {0.5f, 1.0f, 1.5f, -2.0f, 3.0f, 4.0f, -6.0f, 0.0f};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(vc[i], expect[i]) << i;
}

TEST(Executor, VirtualIntermediateRoundedToItsType) {
  OpGraph g;
  g.set_intermediate_data_type(DataType::HALF);
  auto a = g.tensor({2, 3}, DataType::FLOAT, "a");
  auto b = g.tensor({3, 2}, DataType::FLOAT, "b");
  auto id = g.tensor({2, 2}, DataType::FLOAT, "id");
  auto t = g.matmul(a, b);  // virtual: HALF
  auto c = g.matmul(t, id);
  c->set_output(true).set_name("c").set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.validate().is_good());
  ASSERT_EQ(t->get_data_type(), DataType::HALF);
  auto va = random_floats(6, 3), vb = random_floats(6, 4);
  std::vector<float> vid = {1, 0, 0, 1};
  auto vc = poison(4);
  ASSERT_TRUE(reference::execute(g, {{a->get_uid(), {va.data()}}, {b->get_uid(), {vb.data()}},
                                     {id->get_uid(), {vid.data()}}, {c->get_uid(), {vc.data()}}})
                  .is_good());
  int changed = 0;
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 2; ++n) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += double(va[m * 3 + k]) * double(vb[k * 2 + n]);
      EXPECT_EQ(double(vc[m * 2 + n]), reference::round_to(DataType::HALF, acc));
      changed += static_cast<float>(acc) != vc[m * 2 + n];
    }
  EXPECT_GT(changed, 0) << "the HALF rounding of the intermediate must be visible";
}

TEST(Executor, PassByValueInputAndFailureLeavesOutputsUntouched) {
  // C1 = A @ B (a graph output), C2 = C1 @ D with a pass-by-value M_override.
  for (std::int64_t m_override : {2, 9}) {
    OpGraph g;
    auto a = g.tensor({3, 2}, DataType::FLOAT, "a");
    auto b = g.tensor({2, 2}, DataType::FLOAT, "b");
    auto d = g.tensor({2, 2}, DataType::FLOAT, "d");
    auto c1 = g.matmul(a, b);
    c1->set_output(true).set_name("c1").set_data_type(DataType::FLOAT);
    auto mo = g.tensor_scalar_int(m_override, DataType::INT64);
    auto c2 = g.matmul(c1, d, Attributes().set_name("second").set("padding", 7.0), mo);
    c2->set_output(true).set_name("c2").set_data_type(DataType::FLOAT);
    ASSERT_TRUE(g.validate().is_good());
    auto va = random_floats(6, 5), vb = random_floats(4, 6), vd = random_floats(4, 7);
    auto v1 = poison(6), v2 = poison(6);
    Status s = reference::execute(g, {{a->get_uid(), {va.data()}}, {b->get_uid(), {vb.data()}},
                                      {d->get_uid(), {vd.data()}}, {c1->get_uid(), {v1.data()}},
                                      {c2->get_uid(), {v2.data()}}});
    if (m_override == 2) {
      ASSERT_TRUE(s.is_good()) << s.to_string();
      EXPECT_EQ(v2[4], 7.0f);  // row 2 is beyond the override: padding
      EXPECT_EQ(v2[5], 7.0f);
      EXPECT_FALSE(std::isnan(v1[5]));
      double acc = double(v1[2]) * vd[0] + double(v1[3]) * vd[2];  // C2[1, 0] from C1's stored row 1
      EXPECT_EQ(v2[2], static_cast<float>(acc));
    } else {
      EXPECT_EQ(s.code(), ErrorCode::GRAPH_EXECUTION_FAILED);
      EXPECT_NE(s.message().find("node 'second'"), std::string::npos) << s.message();
      EXPECT_NE(s.message().find("M_override"), std::string::npos) << s.message();
      EXPECT_TRUE(all_poison(v1)) << "first node's output must not be written when a later node fails";
      EXPECT_TRUE(all_poison(v2));
    }
  }
}

TEST(Executor, RefusesBeforeRunning) {
  OpGraph g;
  auto a = g.tensor({2, 2}, DataType::FLOAT, "a");
  auto b = g.tensor({2, 2}, DataType::FLOAT, "b");
  auto c = g.matmul(a, b, Attributes().set_name("mm"));
  c->set_output(true).set_name("c").set_data_type(DataType::FLOAT);
  std::vector<float> va(4, 1.0f), vb(4, 2.0f), vc = poison(4);
  std::map<std::int64_t, HostBuffer> bufs;
  EXPECT_EQ(reference::execute(g, bufs).code(), ErrorCode::INVALID_VALUE);  // not validated
  ASSERT_TRUE(g.validate().is_good());
  bufs = {{a->get_uid(), {va.data()}}, {c->get_uid(), {vc.data()}}};
  Status s = reference::execute(g, bufs);
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK);
  EXPECT_NE(s.message().find("tensor 'b'"), std::string::npos) << s.message();
  bufs = {{a->get_uid(), {va.data()}}, {b->get_uid(), {vb.data()}}};
  s = reference::execute(g, bufs);
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK);
  EXPECT_NE(s.message().find("tensor 'c'"), std::string::npos) << s.message();
  bufs[c->get_uid()] = {vc.data()};
  reference::ExecuteOptions none;
  none.find_kernel = [](std::string_view) -> reference::KernelFn { return nullptr; };
  s = reference::execute(g, bufs, none);
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(s.message().find("op 'matmul'"), std::string::npos) << s.message();
  reference::ExecuteOptions throwing;
  throwing.find_kernel = [](std::string_view) -> reference::KernelFn {
    return [](reference::KernelContext& c) -> Status { (void)c.in("M_override"); return Status::ok(); };
  };
  s = reference::execute(g, bufs, throwing);
  EXPECT_EQ(s.code(), ErrorCode::INTERNAL_ERROR);
  EXPECT_NE(s.message().find("node 'mm'"), std::string::npos) << s.message();
  EXPECT_TRUE(all_poison(vc));
  ASSERT_TRUE(reference::execute(g, bufs).is_good());
  EXPECT_EQ(vc[0], 4.0f);
}

TEST(Executor, RaggedOffsetsReachTheKernel) {
  OpGraph g;
  auto off = g.tensor({3}, DataType::INT32, "off");
  auto a = g.tensor({2, 2}, DataType::FLOAT, "a");
  a->set_ragged_offset(off);
  auto b = g.tensor({2, 2}, DataType::FLOAT, "b");
  auto c = g.matmul(a, b);
  c->set_output(true).set_name("c").set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.validate().is_good());
  std::int32_t voff[3] = {0, 7, -3};
  std::vector<float> va(4, 1.0f), vb(4, 1.0f), vc = poison(4);
  reference::ExecuteOptions opts;
  opts.find_kernel = [](std::string_view) -> reference::KernelFn {
    return [](reference::KernelContext& c) -> Status {
      const reference::Array* r = c.ragged_offset("A");
      if (!r || r->numel() != 3 || (*r)[1] != 7 || (*r)[2] != -3) return c.fail("ragged offsets not seen");
      if (c.ragged_offset("B") != nullptr) return c.fail("B has no ragged offsets");
      c.out("C")[0] = (*r)[1];
      return Status::ok();
    };
  };
  Status s = reference::execute(g, {{off->get_uid(), {voff}}, {a->get_uid(), {va.data()}}, {b->get_uid(), {vb.data()}},
                                    {c->get_uid(), {vc.data()}}},
                                opts);
  ASSERT_TRUE(s.is_good()) << s.to_string();
  EXPECT_EQ(vc[0], 7.0f);
  EXPECT_EQ(vc[1], 0.0f);  // outputs arrive zero-filled
}
