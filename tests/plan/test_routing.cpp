// tests/plan/test_routing.cpp — the routing policy in Graph (graph.h, "routing"):
// which plan runs host and device buffers, the host plan found by its engine's
// capability (never by name), and the host fallback policy on a device target.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "fakes.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using namespace testing_fakes;

// A universal family of two stand-ins: "gpu" (needs a device) ranked first, then
// "host" (needs none, as the reference). `gpu_support` is what gpu's check_support says.
struct World {
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  plan::Manifest m;
  explicit World(Status gpu_support = Status::ok()) {
    m.universal = fake_family("universal", 0, {});
    FakeSpec gpu;
    gpu.needs_device = true;
    gpu.support = gpu_support;
    m.universal.slots.push_back(fake_slot("gpu", gpu, log));
    m.universal.slots.push_back(fake_slot("host", {}, log));
  }
};

std::int64_t uid_of(const Graph& g, const std::string& name) {
  for (const auto& t : g.tensors())
    if (t->get_name() == name) return t->get_uid();
  return -1;
}

Graph planned_relu(bool device) {
  Graph g;
  build_relu(g);
  if (device) g.set_device_properties(sm(9, 0));
  return g;
}

TEST(Routing, HostPlanIsFoundByCapabilityNotByName) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g = planned_relu(true);
  EXPECT_EQ(g.host_plan_index(), -1);  // not planned
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_EQ(g.get_execution_plan_count(), 2);
  EXPECT_EQ(g.get_plan_name_at_index(0).value(), "gpu[]");
  EXPECT_EQ(g.host_plan_index(), 1);  // "host[]": no "reference[" prefix, found by needs_device == false
}

TEST(Routing, HostBuffersOnADeviceGraphRunTheHostPlanBuiltOnFirstUse) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g = planned_relu(true);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  ASSERT_EQ(g.get_selected_plan_index().value(), 0);
  Graph::BufferKinds host;
  host.host = true;
  auto r = g.route(host);
  ASSERT_TRUE(r.is_good()) << r.status().message();
  EXPECT_EQ(r.value().index, 1);
  EXPECT_EQ(r.value().device, nullptr);  // host buffers: no device, even with a device handle
  EXPECT_TRUE(g.get_workspace_size_plan_at_index(1).is_good());  // built by route
  // A pinned index is run as asked.
  EXPECT_EQ(g.route(host, 0).value().index, 0);
  // Device buffers run the selected plan on the target's device; on the host plan they are refused.
  Graph::BufferKinds dev;
  dev.device = true;
  dev.first_device_uid = uid_of(g, "X");
  auto d = g.route(dev);
  ASSERT_TRUE(d.is_good());
  EXPECT_EQ(d.value().index, 0);
  ASSERT_NE(d.value().device, nullptr);
  EXPECT_EQ(d.value().device->sm_version(), 90);
  auto refused = g.route(dev, 1);
  EXPECT_EQ(refused.status().code(), ErrorCode::INVALID_VARIANT_PACK);
  EXPECT_NE(refused.status().message().find("(tensor 'X') is device memory"), std::string::npos);
  EXPECT_NE(refused.status().message().find("host[]"), std::string::npos);
}

TEST(Routing, ExecuteRoutedReadsTheKindsOffThePack) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g = planned_relu(true);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  float x[6] = {}, y[6] = {};
  VariantPack pack;
  pack.set(uid_of(g, "X"), OperandBuffer::make(x, {2, 3}, {}, DataType::FLOAT, MemoryKind::HOST));
  pack.set(uid_of(g, "Y"), OperandBuffer::make(y, {2, 3}, {}, DataType::FLOAT, MemoryKind::HOST));
  auto kinds = g.buffer_kinds(pack);
  ASSERT_TRUE(kinds.is_good()) << kinds.status().message();
  EXPECT_TRUE(kinds.value().host);
  EXPECT_FALSE(kinds.value().device);
  ASSERT_TRUE(g.execute_routed(pack).is_good());
  ASSERT_FALSE(w.log->executed.empty());
  EXPECT_EQ(w.log->executed.back().first, g.get_engine_and_knobs_at_index(1).value().engine_id);  // the host plan
}

TEST(Routing, DeviceBuffersOnAHostGraphAreRefusedNamingTheOperand) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g = planned_relu(false);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  Graph::BufferKinds dev;
  dev.device = true;
  dev.first_device_uid = uid_of(g, "X");
  auto r = g.route(dev);
  EXPECT_EQ(r.status().code(), ErrorCode::INVALID_VARIANT_PACK);
  EXPECT_NE(r.status().message().find("planned for the host"), std::string::npos);
}

// cudnn-frontend's behaviour: planned for a device that no device engine accepts is
// not supported at check_support / build_plans; the host plan is not taken silently.
// (Ranking leaves the declining "gpu" out: the list holds only the host plan.)
TEST(HostFallback, DeviceGraphWithoutADeviceEngineIsNotSupported) {
  World w(decline("gpu never serves"));
  plan::testing::ScopedManifest scope(w.m);
  Graph g = planned_relu(true);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_FALSE(g.host_fallback());
  Status c = g.check_support();
  EXPECT_EQ(c.code(), ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED);
  EXPECT_NE(c.message().find("host[] runs host buffers only"), std::string::npos) << c.message();
  Status b = g.build_plans();
  EXPECT_EQ(b.code(), ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED);
  EXPECT_NE(b.message().find("set_host_fallback(true)"), std::string::npos) << b.message();
}

TEST(HostFallback, TheHostPlanIsTakenWhenAskedFor) {
  World w(decline("gpu never serves"));
  plan::testing::ScopedManifest scope(w.m);
  Graph a = planned_relu(true);  // by policy
  a.set_host_fallback(true);
  ASSERT_TRUE(a.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_TRUE(a.check_support().is_good());
  ASSERT_TRUE(a.build_plans().is_good());
  EXPECT_EQ(a.get_selected_plan_index().value(), a.host_plan_index());

  Graph b = planned_relu(true);  // by pinning it
  ASSERT_TRUE(b.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(b.select_plan(b.host_plan_index()).is_good());
  EXPECT_TRUE(b.check_support().is_good());
  ASSERT_TRUE(b.build_plans().is_good());
  EXPECT_EQ(b.get_selected_plan_index().value(), b.host_plan_index());

  Graph c = planned_relu(true);  // by replaying it
  ASSERT_TRUE(c.create_execution_plan(a.get_engine_and_knobs_at_index(a.host_plan_index()).value().engine_id, {}).is_good());
  ASSERT_TRUE(c.build_plans().is_good());
  EXPECT_EQ(c.host_plan_index(), 0);
}

TEST(HostFallback, AHostGraphStillTakesTheHostPlan) {
  World w(decline("gpu never serves"));
  plan::testing::ScopedManifest scope(w.m);
  Graph g = planned_relu(false);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(g.get_selected_plan_index().value(), g.host_plan_index());
}

}  // namespace
}  // namespace opgraph

namespace opgraph {
namespace {

// A handle on device `ordinal` (its properties otherwise the target's).
class OrdinalHandle final : public Handle {
 public:
  explicit OrdinalHandle(int ordinal) : props_(testing_fakes::sm(9, 0)) { props_.ordinal = ordinal; }
  Result<void*> stream() const override { return static_cast<void*>(nullptr); }
  const DeviceProperties* device() const override { return &props_; }

 private:
  DeviceProperties props_;
};

// A graph planned for device `ordinal` (-1: a target that names no device).
Graph planned_on(int ordinal) {
  Graph g;
  testing_fakes::build_relu(g);
  DeviceProperties p = testing_fakes::sm(9, 0);
  p.ordinal = ordinal;
  g.set_device_properties(p);
  return g;
}

TEST(Routing, DeviceBuffersWithAHandleOnAnotherDeviceAreRefusedNamingBoth) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g = planned_on(0);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  Graph::BufferKinds dev;
  dev.device = true;
  dev.first_device_uid = uid_of(g, "X");
  const OrdinalHandle other(1), same(0), unnamed(-1);
  auto refused = g.route(dev, -1, &other);
  ASSERT_TRUE(refused.is_bad());
  EXPECT_EQ(refused.status().code(), ErrorCode::INVALID_CUDA_DEVICE);
  EXPECT_NE(refused.status().message().find("handle drives device 1"), std::string::npos) << refused.status().message();
  EXPECT_NE(refused.status().message().find("planned for device 0"), std::string::npos) << refused.status().message();
  // The same refusal through execute_routed, before any engine runs.
  const std::size_t runs = w.log->executed.size();
  Status s = g.execute_routed(VariantPack{}, dev, Workspace{}, &other, -1);
  EXPECT_EQ(s.code(), ErrorCode::INVALID_CUDA_DEVICE) << s.to_string();
  EXPECT_EQ(w.log->executed.size(), runs);
  // The planned device, or a handle (or target) that names none, routes as before.
  for (const Handle* h : {static_cast<const Handle*>(&same), static_cast<const Handle*>(&unnamed)}) {
    auto r = g.route(dev, -1, h);
    ASSERT_TRUE(r.is_good()) << r.status().message();
    EXPECT_EQ(r.value().device->ordinal, 0);
  }
  Graph unnamed_target = planned_on(-1);
  ASSERT_TRUE(unnamed_target.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(unnamed_target.build_plans().is_good());
  EXPECT_TRUE(unnamed_target.route(dev, -1, &other).is_good());
  // Host buffers run on the host whatever the handle's device.
  Graph::BufferKinds host;
  host.host = true;
  EXPECT_TRUE(g.route(host, -1, &other).is_good());
}

}  // namespace
}  // namespace opgraph
