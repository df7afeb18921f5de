// tests/cudnn/test_cudnn_planned_dynamic.cpp — a graph planned dynamic
// (Graph::set_dynamic_shapes, PlanContext::dynamic_shapes), without a GPU: the
// lowering options the cuDNN engine plans with (planning_options: the same
// for its heuristics query, notes, build, and what an override re-lowers from)
// carry the dynamic-shape flag when the graph is planned dynamic and not
// otherwise, so the lowered operation graph record has
// CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED at build (lowered_dynamic,
// which decides the build-time kernel cache) exactly then; a static graph's
// lowering is the one of before.
#include <cstdlib>

#include "cudnn/sdpa_lowering_util.h"
#include "engines/cudnn/dynamic_shapes.h"

namespace opgraph {
namespace {

namespace cu = engines::cudnn;
using D = std::vector<std::int64_t>;

struct Mm {
  Graph g;
  Mm() {
    g.set_name("mm_planned_dyn").set_compute_data_type(DataType::FLOAT);
    auto a = g.tensor({1, 64, 32}, DataType::HALF, "A");
    auto b = g.tensor({1, 32, 48}, DataType::HALF, "B");
    g.matmul(a, b)->set_output(true).set_name("C").set_data_type(DataType::HALF);
    EXPECT_TRUE(g.validate().is_good());
  }
};

const cu::AttrRecord* flag_of(const cu::LoweringPlan& p) {
  return p.records[static_cast<std::size_t>(p.operation_graph)].find(CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED);
}

// A causal SDPA forward (fp16, stats), validated.
struct CausalSdpa {
  sdpa_lowering_test::Fwd f{sdpa_lowering_test::Shape{1, 4, 4, 64, 64, 64}, DataType::HALF};
  CausalSdpa() {
    f.a.set("use_causal_mask", true);
    f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
    f.out.O->set_output(true).set_data_type(DataType::HALF);
    if (f.out.Stats) f.out.Stats->set_output(true);
    EXPECT_TRUE(f.g.validate().is_good());
  }
};

TEST(CudnnPlannedDynamic, PlanningOptionsCarryTheGraphsOptionAndNothingElseChanges) {
  unsetenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
  const cu::LoweringOptions fixed = cu::planning_options(91400, 90, false);
  const cu::LoweringOptions dyn = cu::planning_options(91400, 90, true);
  EXPECT_FALSE(fixed.dynamic_shapes);
  EXPECT_TRUE(dyn.dynamic_shapes);
  for (const cu::LoweringOptions* o : {&fixed, &dyn}) {
    EXPECT_EQ(o->cudnn_version, 91400);
    EXPECT_EQ(o->sm_version, 90);
    EXPECT_FALSE(o->include_unverified);
    EXPECT_FALSE(o->include_failed_variants);
  }
  setenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED", "1", 1);
  EXPECT_TRUE(cu::planning_options(91400, 90, true).include_unverified);
  unsetenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
}

TEST(CudnnPlannedDynamic, TheMatmulIsLoweredWithTheFlagAtBuildOnlyWhenPlannedDynamic) {
  Mm m;
  auto fixed = cu::lower(m.g, cu::planning_options(91400, 90, false));
  auto dyn = cu::lower(m.g, cu::planning_options(91400, 90, true));
  ASSERT_TRUE(fixed.is_good()) << fixed.status().message();
  ASSERT_TRUE(dyn.is_good()) << dyn.status().message();
  EXPECT_EQ(flag_of(*fixed), nullptr);
  EXPECT_FALSE(cu::lowered_dynamic(*fixed)) << "a static graph gets no kernel cache at build";
  const cu::AttrRecord* f = flag_of(*dyn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, CUDNN_TYPE_BOOLEAN);
  EXPECT_EQ(f->ints, D{1});
  EXPECT_TRUE(cu::lowered_dynamic(*dyn)) << "a graph planned dynamic is built with its kernel cache";
  EXPECT_EQ(cu::lowering_difference(*fixed, *dyn), "");
  EXPECT_EQ(fixed->records.size(), dyn->records.size());
  // The static graph's lowering is exactly the one the engine made before the option existed.
  cu::LoweringOptions before;
  before.cudnn_version = 91400;
  before.sm_version = 90;
  auto old = cu::lower(m.g, before);
  ASSERT_TRUE(old.is_good());
  ASSERT_EQ(old->records.size(), fixed->records.size());
  for (std::size_t i = 0; i < old->records.size(); ++i) EXPECT_EQ(old->records[i].attrs.size(), fixed->records[i].attrs.size()) << i;
}

TEST(CudnnPlannedDynamic, TheCausalSdpaForwardIsLoweredWithTheFlagAtBuildOnlyWhenPlannedDynamic) {
  CausalSdpa s;
  auto fixed = cu::lower(s.f.g, cu::planning_options(91400, 90, false));
  auto dyn = cu::lower(s.f.g, cu::planning_options(91400, 90, true));
  ASSERT_TRUE(fixed.is_good()) << fixed.status().message();
  ASSERT_TRUE(dyn.is_good()) << dyn.status().message();
  EXPECT_FALSE(cu::lowered_dynamic(*fixed));
  EXPECT_TRUE(cu::lowered_dynamic(*dyn));
  EXPECT_EQ(cu::lowering_difference(*fixed, *dyn), "");
}

TEST(CudnnPlannedDynamic, ACudnnWithoutDynamicShapesDeclinesAGraphPlannedDynamicNamingTheVersions) {
  Mm m;
  auto old = cu::lower(m.g, cu::planning_options(90300, 90, true));
  ASSERT_TRUE(old.is_bad());
  EXPECT_EQ(old.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(old.status().message().find("9.4.0"), std::string::npos) << old.status().message();
  EXPECT_NE(old.status().message().find("9.3.0"), std::string::npos) << old.status().message();
  EXPECT_TRUE(cu::lower(m.g, cu::planning_options(90300, 90, false)).is_good());  // planned static: as before
}

TEST(CudnnPlannedDynamic, AHandMadeLoweringWithoutAnOperationGraphIsNotDynamic) {
  cu::LoweringPlan empty;
  EXPECT_FALSE(cu::lowered_dynamic(empty));
}

}  // namespace
}  // namespace opgraph
