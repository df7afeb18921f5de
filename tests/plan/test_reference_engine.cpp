// tests/plan/test_reference_engine.cpp — the shipped manifest and the real CPU
// reference engine reached through planning (no stand-ins): a matmul planned,
// built and executed on host buffers, checked against a direct triple loop.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engines/manifest.h"
#include "fakes.h"

namespace opgraph {
namespace {

TEST(ShippedManifest, IsWellFormedAndOffersTheReferenceAt20000) {
  const plan::Manifest& m = engines::default_manifest();
  ASSERT_TRUE(plan::check_manifest(m).is_good()) << plan::check_manifest(m).to_string();
  auto ref = plan::slot_for_id(m, 20000);
  ASSERT_TRUE(ref.is_good());
  EXPECT_EQ(ref->slot->name, "reference");
  EXPECT_FALSE(ref->slot->opt_in);
}

TEST(ShippedManifest, EveryAnchorIsARegisteredOp) {
  for (const auto& f : engines::default_manifest().families)
    for (const auto& a : f.anchors) EXPECT_NE(find_op_spec(a), nullptr) << "family " << f.name << " anchors '" << a << "'";
}

class DeviceHandle final : public Handle {
 public:
  Result<void*> stream() const override { return static_cast<void*>(nullptr); }
  const DeviceProperties* device() const override { return &props_; }
  DeviceProperties props_ = testing_fakes::sm(9, 0);
};

TEST(ReferenceEngine, RunsAMatmulPlannedForTheHost) {
  const std::int64_t M = 3, K = 5, N = 2;
  Graph g;
  g.set_name("ref_mm").set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({1, M, K}, DataType::FLOAT, "A");
  auto b = g.tensor({1, K, N}, DataType::FLOAT, "B");
  auto c = g.matmul(a, b);
  c->set_output(true).set_name("C").set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK}).is_good());
  ASSERT_GE(g.get_execution_plan_count(), 1);
  EXPECT_EQ(g.get_plan_name_at_index(0).value(), "reference[]");  // first in FALLBACK without a GPU
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(g.get_workspace_size().value(), 0);

  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> av(M * K), bv(K * N), cv(M * N, 0.f);
  for (auto& x : av) x = d(rng);
  for (auto& x : bv) x = d(rng);
  VariantPack pack;
  pack.set(a->get_uid(), av.data()).set(b->get_uid(), bv.data()).set(c->get_uid(), cv.data());
  ASSERT_TRUE(g.execute(pack).is_good());
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double want = 0;
      for (std::int64_t k = 0; k < K; ++k) want += double(av[i * K + k]) * double(bv[k * N + j]);
      EXPECT_NEAR(cv[i * N + j], want, 1e-6 * (1 + std::fabs(want))) << i << "," << j;
    }

  DeviceHandle h;  // a handle that drives a device: the reference refuses, never reads device memory
  Status s = g.execute(pack, {}, &h);
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(s.message().find("host buffers"), std::string::npos);
  VariantPack missing;
  missing.set(a->get_uid(), av.data());
  EXPECT_EQ(g.execute(missing).code(), ErrorCode::INVALID_VARIANT_PACK);
}

TEST(ReferenceEngine, PlannedGraphCannotMove) {
  Graph g;
  testing_fakes::build_matmul(g);
  Graph moved(std::move(g));  // before planning: fine
  ASSERT_TRUE(moved.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_THROW(Graph again(std::move(moved)), std::logic_error);
}

}  // namespace
}  // namespace opgraph
