// tests/exec/test_workspace_for_overrides.cpp — the workspace of a call with
// execute-time shape overrides: Graph::get_workspace_size(pack) answers at the
// call's extents (CompiledPlan::workspace_size_for), and execute checks the
// caller's workspace against the same figure — larger than built is refused
// naming the bytes, smaller than built is enough when the call needs less.
#include <gtest/gtest.h>

#include <array>
#include <memory>

#include "exec_support.h"

namespace opgraph {
namespace {

// A plan whose scratch is 4 bytes per element of operand 0's extent along dim 1
// (as the la engine's follows T): what it was built for, or the call's override.
class ScaledPlan final : public CompiledPlan {
 public:
  explicit ScaledPlan(std::int64_t n, std::shared_ptr<std::int64_t> ran) : n_(n), ran_(std::move(ran)) {}
  std::int64_t workspace_size() const override { return 4 * n_; }
  Result<std::int64_t> workspace_size_for(const VariantPack& pack) const override {
    if (!pack.has_overrides()) return workspace_size();
    const OperandBuffer& b = pack.operand(0);
    if (b.overridden && b.dims[1] > 1000)
      return Status(ErrorCode::INVALID_VARIANT_PACK, "scaled: rule at_most_1000: an override past 1000 elements");
    return 4 * (b.overridden ? b.dims[1] : n_);
  }
  Status execute(const VariantPack&, const ExecutionContext& ctx) const override {
    *ran_ = ctx.workspace.bytes;
    return Status::ok();
  }

 private:
  std::int64_t n_;
  std::shared_ptr<std::int64_t> ran_;
};

class ScaledEngine final : public Engine {
 public:
  ScaledEngine(EngineIdentity id, std::shared_ptr<std::int64_t> ran) : Engine(std::move(id)), ran_(std::move(ran)) {
    caps_.needs_device = false;
  }
  const Capabilities& capabilities() const override { return caps_; }
  Status check_support(const OpGraph&, const PlanContext&) const override { return Status::ok(); }
  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph& g, const PlanConfig&,
                                                   const PlanContext&) const override {
    const std::int64_t n = g.nodes().front()->input("IN_0")->get_dim()[1];
    return std::unique_ptr<CompiledPlan>(std::make_unique<ScaledPlan>(n, ran_));
  }

 private:
  Capabilities caps_;
  std::shared_ptr<std::int64_t> ran_;
};

TEST(WorkspaceForOverrides, AnsweredAtTheCallsExtentsAndCheckedAlike) {
  auto ran = std::make_shared<std::int64_t>(-1);
  plan::testing::ScopedManifest scope(exec_test::one_engine_manifest(
      "scaled", [ran](EngineIdentity id) { return std::make_unique<ScaledEngine>(std::move(id), ran); }));
  Graph g;
  g.set_name("add").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  TensorPtr x = g.tensor({1, 8}, DataType::FLOAT, "X");
  TensorPtr y = g.tensor({1, 8}, DataType::FLOAT, "Y");
  TensorPtr z = g.add(x, y);
  z->set_output(true).set_name("Z");
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  ASSERT_EQ(g.get_workspace_size().value(), 32);

  std::array<float, 64> buf{};
  std::array<unsigned char, 256> ws{};
  auto pack_of = [&](std::int64_t n) {
    VariantPack p;
    p.set(x, buf.data()).set(y, buf.data() + 16).set(z, buf.data() + 32);
    if (n != 8)
      for (const TensorPtr& t : {x, y, z}) p.override_shape(t->get_uid(), {1, n});
    return p;
  };
  // Without overrides: the built figure.
  auto same = g.get_workspace_size(pack_of(8));
  ASSERT_TRUE(same.is_good()) << same.status().to_string();
  EXPECT_EQ(same.value(), 32);
  // A larger call: 64 bytes; a workspace of the built 32 is refused naming them, nothing runs.
  auto more = g.get_workspace_size(pack_of(16));
  ASSERT_TRUE(more.is_good()) << more.status().to_string();
  EXPECT_EQ(more.value(), 64);
  EXPECT_EQ(g.get_workspace_size_plan_at_index(0, pack_of(16)).value(), 64);
  *ran = -1;
  Status refused = g.execute(pack_of(16), Workspace{ws.data(), 32});
  EXPECT_EQ(refused.code(), ErrorCode::INVALID_VALUE) << refused.to_string();
  EXPECT_NE(refused.message().find("needs 64 bytes"), std::string::npos) << refused.message();
  EXPECT_EQ(*ran, -1);
  Status ok = g.execute(pack_of(16), Workspace{ws.data(), 64});
  EXPECT_TRUE(ok.is_good()) << ok.to_string();
  EXPECT_EQ(*ran, 64);
  // A smaller call needs less than built, and that is enough.
  EXPECT_EQ(g.get_workspace_size(pack_of(4)).value(), 16);
  EXPECT_TRUE(g.execute(pack_of(4), Workspace{ws.data(), 16}).is_good());
  // An override the plan refuses is refused by the question alike, naming the rule.
  auto bad = g.get_workspace_size(pack_of(2000));
  ASSERT_TRUE(bad.is_bad());
  EXPECT_NE(bad.status().message().find("rule at_most_1000"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace opgraph
