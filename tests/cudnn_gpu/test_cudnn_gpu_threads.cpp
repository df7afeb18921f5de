// tests/cudnn_gpu/test_cudnn_gpu_threads.cpp — the cuDNN engine's execute off
// the planning thread (part of test_cudnn_gpu; run on the H200 only).
//
// One graph: matmul [1, M, K] x [1, K, N] + bias [1, 1, N], relu (M, K, N fresh
// multiples of 8 per run), planned for device 0 and built on its first cudnn
// plan on the gtest main thread (device 0's primary context current). Checked:
//   * one plan executed concurrently from two threads on two streams (one
//     thread with the plan's context current, one with none), each thread
//     alternating two operand sets so the variant-pack cache both hits and
//     misses under contention;
//   * execute from fresh threads with no context current;
//   * the caller's current context is the same after execute: none, the
//     plan's own, or another context of the device;
//   * one thread executing, alternately, a plan built in the primary context
//     and one built in a second context (one cuDNN handle per context).
// Every output is poisoned (0xFF bytes: NaN) before the run and compared with
// the CPU reference engine on the same fresh random inputs in [-1, 1];
// tolerance |got - want| <= 2e-2 + 2e-2 |want| (TF32 allowed, as the
// matmul_bias_relu case of cases_core.cpp); NaN never passes.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "cudnn_gpu/gpu_harness.h"
#include "gpu/second_context.h"
#include "gpu/stream_handle.h"
#include "runtime/context_scope.h"
#include "runtime/device.h"

using namespace opgraph;
using namespace cudnn_gpu;

namespace {

constexpr double kTol = 2e-2;

// A caller's handle: a stream of device 0.
using gpu_testing::StreamHandle;

CUcontext current() {
  CUcontext c = reinterpret_cast<CUcontext>(1);  // "unknown" if the query fails
  driver()->ctx_get_current(&c);
  return c;
}

// A second context on device 0 (gpu/second_context.h); nullptr when refused.
CUcontext second_context(std::string* why = nullptr) {
  const auto* d = driver();
  if (!d) {
    if (why) *why = "no driver";
    return nullptr;
  }
  return gpu_testing::second_context(*d, why);
}

Io build_graph(Graph& g, std::int64_t m, std::int64_t k, std::int64_t n) {
  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto a = g.tensor({1, m, k}, DataType::FLOAT, "A");
  auto b = g.tensor({1, k, n}, DataType::FLOAT, "B");
  auto bias = g.tensor({1, 1, n}, DataType::FLOAT, "bias");
  return Io{{a, b, bias}, {out(g.relu(g.add(g.matmul(a, b), bias)), "Y")}};
}

// The graph planned for the device and built on its first cudnn plan (in the
// context current on this thread), plus the same graph for the reference.
struct Planned {
  std::int64_t m = 0, k = 0, n = 0;
  DeviceProperties props;
  Graph gd, gh;
  Io iod, ioh;
  std::int64_t bi = -1, ws = 0;
};

std::unique_ptr<Planned> plan(std::mt19937& rng) {
  auto p = std::make_unique<Planned>();
  p->m = 8 * (4 + static_cast<std::int64_t>(rng() % 12));
  p->k = 8 * (4 + static_cast<std::int64_t>(rng() % 8));
  p->n = 8 * (4 + static_cast<std::int64_t>(rng() % 12));
  auto props = runtime::read_device_properties(0);
  EXPECT_TRUE(props.is_good());
  if (props.is_bad()) return nullptr;
  p->props = props.value();
  p->iod = build_graph(p->gd, p->m, p->k, p->n);
  p->ioh = build_graph(p->gh, p->m, p->k, p->n);
  p->gd.set_device_properties(p->props);
  EXPECT_TRUE(p->gd.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_good());
  for (std::int64_t i = 0; i < p->gd.get_execution_plan_count() && p->bi < 0; ++i)
    if (p->gd.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) == 0 && p->gd.build_plan_at_index(i).is_good())
      p->bi = i;
  EXPECT_GE(p->bi, 0) << "no cudnn plan built for " << p->m << "x" << p->k << "x" << p->n;
  if (p->bi < 0) return nullptr;
  p->ws = p->gd.get_workspace_size_plan_at_index(p->bi).value();
  EXPECT_TRUE(p->gh.create_execution_plans({HeurMode::FALLBACK}).is_good());
  EXPECT_TRUE(p->gh.build_plans().is_good());
  return p;
}

// One operand set in the context current on this thread: random inputs on the
// device, the output buffer, the reference output, the device pack.
struct Operands {
  std::vector<std::vector<float>> in;
  std::vector<std::unique_ptr<DevMem>> dev;
  std::unique_ptr<DevMem> y;
  std::vector<float> want;
  VariantPack pack;
};

std::unique_ptr<Operands> operands(Planned& p, std::mt19937& rng) {
  auto o = std::make_unique<Operands>();
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  VariantPack ph;
  for (std::size_t i = 0; i < p.iod.inputs.size(); ++i) {
    auto& h = o->in.emplace_back(static_cast<std::size_t>(p.iod.inputs[i]->element_count()));
    for (float& v : h) v = u(rng);
    o->dev.push_back(std::make_unique<DevMem>(h.size() * 4));
    EXPECT_TRUE(o->dev.back()->upload(h.data(), h.size() * 4).is_good());
    o->pack.set(p.iod.inputs[i]->get_uid(), o->dev.back()->data());
    ph.set(p.ioh.inputs[i]->get_uid(), h.data());
  }
  o->want.assign(static_cast<std::size_t>(p.iod.outputs[0]->element_count()), std::nanf(""));
  o->y = std::make_unique<DevMem>(o->want.size() * 4);
  o->pack.set(p.iod.outputs[0]->get_uid(), o->y->data());
  ph.set(p.ioh.outputs[0]->get_uid(), o->want.data());
  Status ref = p.gh.execute(ph);
  EXPECT_TRUE(ref.is_good()) << ref.to_string();
  return o;
}

// 0xFF bytes (NaN) into the output, in the context current on this thread; synchronous.
void poison(const Operands& o) {
  EXPECT_EQ(driver()->memset_d32(o.y->ptr(), 0xFFFFFFFFu, o.want.size()), CUDA_SUCCESS);
  EXPECT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
}

// Output elements off the reference (the work that wrote it must be finished).
std::size_t bad_elements(const Operands& o) {
  std::vector<float> got(o.want.size());
  EXPECT_TRUE(o.y->download(got.data(), got.size() * 4).is_good());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - o.want[i]) <= kTol + kTol * std::fabs(o.want[i]))) ++bad;
  return bad;
}

class CudnnGpuThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(driver(), nullptr) << "no CUDA device: these tests run on the H200 only";
    primary_ = current();
    ASSERT_NE(primary_, nullptr);
  }
  std::mt19937 rng_{std::random_device{}()};
  CUcontext primary_ = nullptr;
};

}  // namespace

// One built plan, two threads, two non-blocking streams, 100 executes each,
// alternating two operand sets per thread (own workspace per thread).
TEST_F(CudnnGpuThreads, OnePlanTwoThreadsTwoStreams) {
  auto p = plan(rng_);
  ASSERT_NE(p, nullptr);
  std::unique_ptr<Operands> o[2][2];
  CUstream s[2] = {nullptr, nullptr};
  std::unique_ptr<DevMem> ws[2];
  for (int t = 0; t < 2; ++t) {
    ASSERT_EQ(driver()->stream_create(&s[t], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ws[t] = std::make_unique<DevMem>(static_cast<std::size_t>(p->ws));
    for (int j = 0; j < 2; ++j) {
      o[t][j] = operands(*p, rng_);
      poison(*o[t][j]);
    }
  }
  const StreamHandle h[2] = {{s[0], &p->props}, {s[1], &p->props}};
  constexpr int kRounds = 100;
  Status ran[2] = {Status::ok(), Status::ok()};
  CUcontext after[2] = {nullptr, nullptr};
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t)
    workers.emplace_back([&, t] {
      if (t == 0) driver()->ctx_set_current(primary_);  // thread 1 keeps none current
      for (int r = 0; r < kRounds && ran[t].is_good(); ++r)
        ran[t] = p->gd.execute_plan_at_index(o[t][r % 2]->pack, Workspace{ws[t]->data(), p->ws}, p->bi, &h[t]);
      after[t] = current();
    });
  for (auto& w : workers) w.join();
  for (int t = 0; t < 2; ++t) {
    EXPECT_TRUE(ran[t].is_good()) << "thread " << t << ": " << ran[t].to_string();
    ASSERT_EQ(driver()->stream_synchronize(s[t]), CUDA_SUCCESS);
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(bad_elements(*o[t][j]), 0u) << "thread " << t << ", operand set " << j << " (" << p->m << "x" << p->k
                                            << "x" << p->n << ")";
  }
  EXPECT_EQ(after[0], primary_);
  EXPECT_EQ(after[1], nullptr) << "execute left a context current on a thread that had none";
  for (CUstream st : s) driver()->stream_destroy(st);
}

// Two fresh threads in turn (each with no context current, each its own cuDNN
// handle), default stream; the thread has no context current afterwards.
TEST_F(CudnnGpuThreads, ExecuteFromThreadsWithoutAContext) {
  auto p = plan(rng_);
  ASSERT_NE(p, nullptr);
  auto o = operands(*p, rng_);
  DevMem ws(static_cast<std::size_t>(p->ws));
  for (int attempt = 0; attempt < 2; ++attempt) {
    poison(*o);
    CUcontext before = reinterpret_cast<CUcontext>(1), after = reinterpret_cast<CUcontext>(1);
    Status ran = Status::ok();
    std::thread worker([&] {
      before = current();
      ran = p->gd.execute_plan_at_index(o->pack, Workspace{ws.data(), p->ws}, p->bi, nullptr);
      after = current();
    });
    worker.join();
    EXPECT_EQ(before, nullptr) << "a fresh thread had a context current; the test proves nothing";
    EXPECT_TRUE(ran.is_good()) << ran.to_string();
    EXPECT_EQ(after, nullptr) << "execute left the plan's context current on the caller's thread";
    ASSERT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
    EXPECT_EQ(bad_elements(*o), 0u) << "attempt " << attempt;
  }
}

// The caller's current context after execute is the one before: the plan's own
// (this thread), and another context of the device (a worker thread).
TEST_F(CudnnGpuThreads, CallersContextIsUnchanged) {
  auto p = plan(rng_);
  ASSERT_NE(p, nullptr);
  auto o = operands(*p, rng_);
  DevMem ws(static_cast<std::size_t>(p->ws));
  poison(*o);
  ASSERT_TRUE(p->gd.execute_plan_at_index(o->pack, Workspace{ws.data(), p->ws}, p->bi, nullptr).is_good());
  EXPECT_EQ(current(), primary_);
  ASSERT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(bad_elements(*o), 0u) << "on the planning thread";

  std::string why;
  const CUcontext other = second_context(&why);
  ASSERT_NE(other, nullptr) << "no second context on device 0: " << why;
  ASSERT_NE(other, primary_);
  poison(*o);
  CUcontext after = nullptr;
  Status ran = Status::ok();
  std::thread worker([&] {
    driver()->ctx_set_current(other);
    ran = p->gd.execute_plan_at_index(o->pack, Workspace{ws.data(), p->ws}, p->bi, nullptr);
    after = current();
  });
  worker.join();
  EXPECT_TRUE(ran.is_good()) << ran.to_string();
  EXPECT_EQ(after, other) << "execute did not put back the caller's (other) context";
  ASSERT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(bad_elements(*o), 0u) << "from a thread with another context current";
}

// Plan A built in the primary context, plan B in a second context of the
// device (each with its buffers there); one worker thread executes them
// alternately, 20 times each, on each context's default stream.
TEST_F(CudnnGpuThreads, OneThreadTwoContexts) {
  std::string why;
  const CUcontext other = second_context(&why);
  ASSERT_NE(other, nullptr) << "no second context on device 0: " << why;
  auto pa = plan(rng_);
  ASSERT_NE(pa, nullptr);
  auto oa = operands(*pa, rng_);
  DevMem wsa(static_cast<std::size_t>(pa->ws));
  poison(*oa);
  std::unique_ptr<Planned> pb;
  std::unique_ptr<Operands> ob;
  std::unique_ptr<DevMem> wsb;
  {
    const runtime::ContextScope in_other(*driver(), other);
    ASSERT_TRUE(in_other.status().is_good());
    pb = plan(rng_);
    ASSERT_NE(pb, nullptr);
    ob = operands(*pb, rng_);
    wsb = std::make_unique<DevMem>(static_cast<std::size_t>(pb->ws));
    poison(*ob);
  }
  Status ran = Status::ok();
  CUcontext after = reinterpret_cast<CUcontext>(1);
  std::thread worker([&] {
    for (int r = 0; r < 40 && ran.is_good(); ++r)
      ran = r % 2 ? pb->gd.execute_plan_at_index(ob->pack, Workspace{wsb->data(), pb->ws}, pb->bi, nullptr)
                  : pa->gd.execute_plan_at_index(oa->pack, Workspace{wsa.data(), pa->ws}, pa->bi, nullptr);
    after = current();
  });
  worker.join();
  EXPECT_TRUE(ran.is_good()) << ran.to_string();
  EXPECT_EQ(after, nullptr);
  ASSERT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(bad_elements(*oa), 0u) << "plan built in the primary context";
  {
    const runtime::ContextScope in_other(*driver(), other);
    ASSERT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
    EXPECT_EQ(bad_elements(*ob), 0u) << "plan built in the second context";
    ob.reset();  // its buffers are freed in the context that allocated them
    wsb.reset();
    pb.reset();
  }
}
