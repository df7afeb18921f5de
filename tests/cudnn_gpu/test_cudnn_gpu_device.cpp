// tests/cudnn_gpu/test_cudnn_gpu_device.cpp — device ordinals for the cuDNN
// engine on the GPU (part of test_cudnn_gpu; run on the H200 only, where device
// 1 does not exist): nothing silently falls back to device 0, or to whatever
// context the caller has current.
//  * a target naming a device that does not exist: the heuristics query
//    declines naming it and a build is refused (INVALID_CUDA_DEVICE), never
//    built on device 0;
//  * a build from a fresh thread with no context current works in device 0's
//    primary context, made current for the build, and leaves none current
//    (before, cudnnCreate initialised the runtime and left device 0's primary
//    context current on the caller's thread); the plan then runs on device 0;
//  * a plan built on device 0 refuses an execute whose handle names another
//    device, before running (the poisoned output stays poisoned); with a handle
//    on device 0, or one naming no device, it runs and matches the reference.
// (A caller's own context on the target device is kept for the build:
// CudnnGpuThreads.OneThreadTwoContexts. Another device's context is replaced
// for the build and put back after: tests/runtime/test_device_ordinal.cpp, with
// a fake two-device driver.)
// The graph: matmul [1, M, K] x [1, K, N] + bias [1, 1, N], relu, fp32, with M,
// K, N fresh multiples of 8 per run; inputs uniform in [-1, 1]; the output
// poisoned (0xFF bytes: NaN) before each run and compared with the CPU
// reference engine: |got - want| <= 2e-2 + 2e-2 |want| (TF32 allowed); NaN
// never passes.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cudnn_gpu/gpu_harness.h"
#include "engines/cudnn/cudnn_engine.h"
#include "exec/declared_layout.h"
#include "opgraph/device.h"

using namespace opgraph;
using namespace cudnn_gpu;

namespace {

constexpr double kTol = 2e-2;

CUcontext current() {
  CUcontext c = reinterpret_cast<CUcontext>(1);  // "unknown" if the query fails
  driver()->ctx_get_current(&c);
  return c;
}

Io build_graph(Graph& g, std::int64_t m, std::int64_t k, std::int64_t n) {
  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto a = g.tensor({1, m, k}, DataType::FLOAT, "A");
  auto b = g.tensor({1, k, n}, DataType::FLOAT, "B");
  auto bias = g.tensor({1, 1, n}, DataType::FLOAT, "bias");
  return Io{{a, b, bias}, {out(g.relu(g.add(g.matmul(a, b), bias)), "Y")}};
}

// The graph (validated) with its layout, and the same graph for the reference.
struct Problem {
  std::int64_t m = 0, k = 0, n = 0;
  Graph gd, gh;
  Io iod, ioh;
  std::unique_ptr<DeclaredLayout> layout;
};

std::unique_ptr<Problem> problem(std::mt19937& rng) {
  auto p = std::make_unique<Problem>();
  p->m = 8 * (4 + static_cast<std::int64_t>(rng() % 12));
  p->k = 8 * (4 + static_cast<std::int64_t>(rng() % 8));
  p->n = 8 * (4 + static_cast<std::int64_t>(rng() % 12));
  p->iod = build_graph(p->gd, p->m, p->k, p->n);
  p->ioh = build_graph(p->gh, p->m, p->k, p->n);
  Status v = p->gd.validate();
  EXPECT_TRUE(v.is_good()) << v.to_string();
  if (v.is_bad()) return nullptr;
  auto layout = DeclaredLayout::compute(p->gd);
  EXPECT_TRUE(layout.is_good()) << layout.status().to_string();
  if (layout.is_bad()) return nullptr;
  p->layout = std::make_unique<DeclaredLayout>(std::move(layout.value()));
  EXPECT_TRUE(p->gh.create_execution_plans({HeurMode::FALLBACK}).is_good());
  EXPECT_TRUE(p->gh.build_plans().is_good());
  return p;
}

// The engine's own plan for `target`: the first heuristics config (mode A) that
// builds (engine.build_plan; the plan executes a normalised pack).
struct Built {
  std::unique_ptr<CompiledPlan> plan;
  Status status = Status::ok();  // the first refusal (query or build) when none built
};

Built build_for(plan::BackendProvider& provider, const Problem& p, const DeviceProperties& target) {
  FactsCache facts(p.gd, PlanTarget{target});
  PlanContext ctx{&facts, p.layout.get()};
  Built b;
  auto configs = provider.entries(p.gd, HeurMode::A, ctx);
  if (configs.is_bad()) {
    b.status = configs.status();
    return b;
  }
  for (const PlanConfig& config : configs.value()) {
    auto plan = provider.engine().build_plan(p.gd, config, ctx);
    if (plan.is_good()) {
      b.plan = std::move(plan.value());
      return b;
    }
    if (b.status.is_good()) b.status = plan.status();
  }
  return b;
}

// Random inputs on device 0, the output buffer, the reference output, the
// normalised device pack.
struct Operands {
  std::vector<std::unique_ptr<DevMem>> dev;
  std::unique_ptr<DevMem> y;
  std::vector<float> want;
  VariantPack pack;
};

std::unique_ptr<Operands> operands(Problem& p, std::mt19937& rng) {
  auto o = std::make_unique<Operands>();
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  VariantPack caller, ph;
  std::vector<std::vector<float>> in;
  for (std::size_t i = 0; i < p.iod.inputs.size(); ++i) {
    auto& h = in.emplace_back(static_cast<std::size_t>(p.iod.inputs[i]->element_count()));
    for (float& v : h) v = u(rng);
    o->dev.push_back(std::make_unique<DevMem>(h.size() * 4));
    EXPECT_TRUE(o->dev.back()->upload(h.data(), h.size() * 4).is_good());
    caller.set(p.iod.inputs[i]->get_uid(), o->dev.back()->data());
    ph.set(p.ioh.inputs[i]->get_uid(), h.data());
  }
  o->want.assign(static_cast<std::size_t>(p.iod.outputs[0]->element_count()), std::nanf(""));
  o->y = std::make_unique<DevMem>(o->want.size() * 4);
  caller.set(p.iod.outputs[0]->get_uid(), o->y->data());
  ph.set(p.ioh.outputs[0]->get_uid(), o->want.data());
  Status ref = p.gh.execute(ph);
  EXPECT_TRUE(ref.is_good()) << ref.to_string();
  Status norm = VariantPack::normalize(caller, *p.layout, o->pack);
  EXPECT_TRUE(norm.is_good()) << norm.to_string();
  return o;
}

void poison(const Operands& o) {
  EXPECT_EQ(driver()->memset_d32(o.y->ptr(), 0xFFFFFFFFu, o.want.size()), CUDA_SUCCESS);
  EXPECT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
}

// Output elements off the reference (synchronises first).
std::size_t bad_elements(const Operands& o) {
  EXPECT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
  std::vector<float> got(o.want.size());
  EXPECT_TRUE(o.y->download(got.data(), got.size() * 4).is_good());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - o.want[i]) <= kTol + kTol * std::fabs(o.want[i]))) ++bad;
  return bad;
}

// Whether every output word is still the poison.
bool still_poisoned(const Operands& o) {
  EXPECT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
  std::vector<std::uint32_t> got(o.want.size());
  EXPECT_TRUE(o.y->download(got.data(), got.size() * 4).is_good());
  for (std::uint32_t w : got)
    if (w != 0xFFFFFFFFu) return false;
  return true;
}

class CudnnGpuDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(driver(), nullptr) << "no CUDA device: these tests run on the H200 only";
    auto props = read_device(0);
    ASSERT_TRUE(props.is_good()) << props.status().to_string();
    props_ = props.value();
    ASSERT_EQ(props_.ordinal, 0);
    provider_ = engines::make_cudnn_provider();
  }
  Status execute(const CompiledPlan& plan, const Operands& o, const DevMem& ws, std::int64_t ws_bytes,
                 const DeviceProperties* device) const {
    ExecutionContext ec;
    ec.workspace = Workspace{ws.data(), ws_bytes};
    ec.device = device;
    return plan.execute(o.pack, ec);
  }
  std::mt19937 rng_{std::random_device{}()};
  DeviceProperties props_;
  std::shared_ptr<plan::BackendProvider> provider_;
};

}  // namespace

TEST_F(CudnnGpuDevice, ATargetOnADeviceThatDoesNotExistIsRefusedNotBuiltOnDevice0) {
  auto count = device_count();
  ASSERT_TRUE(count.is_good()) << count.status().to_string();
  auto p = problem(rng_);
  ASSERT_NE(p, nullptr);
  const std::string named = "device " + std::to_string(*count) + " does not exist";
  DeviceProperties ghost = props_;  // device 0's figures, an ordinal no device has
  ghost.ordinal = *count;
  Built declined = build_for(*provider_, *p, ghost);
  EXPECT_EQ(declined.plan, nullptr) << "planned for device " << *count << " (it does not exist): on device 0?";
  EXPECT_EQ(declined.status.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << declined.status.to_string();
  EXPECT_NE(declined.status.message().find(named), std::string::npos) << declined.status.to_string();
  // A config found for device 0, built for the missing device: refused at build.
  FactsCache zero_facts(p->gd, PlanTarget{props_});
  PlanContext zero{&zero_facts, p->layout.get()};
  auto configs = provider_->entries(p->gd, HeurMode::A, zero);
  ASSERT_TRUE(configs.is_good()) << configs.status().to_string();
  ASSERT_FALSE(configs->empty());
  FactsCache ghost_facts(p->gd, PlanTarget{ghost});
  PlanContext at_ghost{&ghost_facts, p->layout.get()};
  auto refused = provider_->engine().build_plan(p->gd, configs->front(), at_ghost);
  ASSERT_TRUE(refused.is_bad()) << "built a plan for device " << *count << " (it does not exist)";
  EXPECT_EQ(refused.status().code(), ErrorCode::INVALID_CUDA_DEVICE) << refused.status().to_string();
  EXPECT_NE(refused.status().message().find(named), std::string::npos) << refused.status().to_string();
}

TEST_F(CudnnGpuDevice, ABuildOnAThreadWithNoContextLeavesNoneCurrentAndRunsOnDevice0) {
  auto p = problem(rng_);
  ASSERT_NE(p, nullptr);
  Built b;
  CUcontext before = reinterpret_cast<CUcontext>(1), after = reinterpret_cast<CUcontext>(1);
  std::thread planner([&] {
    before = current();
    b = build_for(*provider_, *p, props_);
    after = current();
  });
  planner.join();
  EXPECT_EQ(before, nullptr) << "a fresh thread had a context current; the test proves nothing";
  ASSERT_NE(b.plan, nullptr) << b.status.to_string();
  EXPECT_EQ(after, nullptr) << "the build left a context current on the planning thread";
  auto o = operands(*p, rng_);
  DevMem ws(static_cast<std::size_t>(b.plan->workspace_size()));
  poison(*o);
  Status ran = execute(*b.plan, *o, ws, b.plan->workspace_size(), &props_);
  ASSERT_TRUE(ran.is_good()) << ran.to_string();
  EXPECT_EQ(bad_elements(*o), 0u) << p->m << "x" << p->k << "x" << p->n;
}

TEST_F(CudnnGpuDevice, APlanRefusesAHandleOnAnotherDeviceAndRunsOnItsOwn) {
  auto p = problem(rng_);
  ASSERT_NE(p, nullptr);
  Built b = build_for(*provider_, *p, props_);
  ASSERT_NE(b.plan, nullptr) << b.status.to_string();
  auto o = operands(*p, rng_);
  const std::int64_t ws_bytes = b.plan->workspace_size();
  DevMem ws(static_cast<std::size_t>(ws_bytes));
  DeviceProperties other = props_;
  other.ordinal = 1;
  poison(*o);
  Status refused = execute(*b.plan, *o, ws, ws_bytes, &other);
  EXPECT_EQ(refused.code(), ErrorCode::INVALID_CUDA_DEVICE) << refused.to_string();
  EXPECT_NE(refused.message().find("built on device 0"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("drives device 1"), std::string::npos) << refused.message();
  EXPECT_TRUE(still_poisoned(*o)) << "the refused execute wrote its output";
  DeviceProperties unnamed = props_;  // a handle that names no device
  unnamed.ordinal = -1;
  for (const DeviceProperties* device : {&props_, &unnamed}) {
    poison(*o);
    Status ran = execute(*b.plan, *o, ws, ws_bytes, device);
    ASSERT_TRUE(ran.is_good()) << "handle ordinal " << device->ordinal << ": " << ran.to_string();
    EXPECT_EQ(bad_elements(*o), 0u) << "handle ordinal " << device->ordinal << ", " << p->m << "x" << p->k << "x"
                                    << p->n;
  }
}
