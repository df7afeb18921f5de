// Per-call pointer arrays: threads executing ONE built plan with their own
// buffers each get their own results. A shared pointer array would hand a thread
// another's (individually valid) pointers: a wrong number, not a crash — so every
// output of every call is checked. A filter (deselect_engines, a note filter) applied while
// threads execute withdraws the plan without a race: each call either ran the
// plan fully (checked result) or was refused with "no built plan".
// scripts/hardening.sh runs this under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <random>
#include <thread>

#include "opgraph/graph.h"

namespace opgraph {
namespace {

constexpr std::int64_t M = 3, K = 5, N = 4;

// C = A·B on the reference plan, built.
struct Mm {
  Graph g;
  TensorPtr a, b, c;
  Mm() {
    g.set_name("mm").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    a = g.tensor({1, M, K}, DataType::FLOAT, "A");
    b = g.tensor({1, K, N}, DataType::FLOAT, "B");
    c = g.matmul(a, b);
    c->set_output(true).set_name("C");
  }
};

// Elements of c that differ from a·b computed in double.
int wrong_elements(const std::vector<float>& av, const std::vector<float>& bv, const std::vector<float>& cv) {
  int wrong = 0;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double want = 0;
      for (std::int64_t k = 0; k < K; ++k) want += double(av[i * K + k]) * double(bv[k * N + j]);
      if (std::fabs(cv[i * N + j] - want) > 1e-5 * (1 + std::fabs(want))) ++wrong;
    }
  return wrong;
}

TEST(ConcurrentExecute, ThreadsGetTheirOwnResults) {
  Mm mm;
  Graph& g = mm.g;
  auto &a = mm.a, &b = mm.b, &c = mm.c;
  ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());

  constexpr int kThreads = 4, kCalls = 150;
  std::atomic<int> bad{0}, ran{0};
  auto worker = [&](int tid) {
    std::mt19937 rng(1000 + tid);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> av(M * K), bv(K * N), cv(M * N);
    for (int call = 0; call < kCalls; ++call) {
      for (auto& x : av) x = d(rng);
      for (auto& x : bv) x = d(rng);
      std::fill(cv.begin(), cv.end(), 1e30f);
      // Alternate caller forms so both the uid and the tensor paths run concurrently.
      VariantPack p;
      if (call % 2) p.set(a, av.data()).set(b, bv.data()).set(c, cv.data());
      else p.set(a->get_uid(), OperandBuffer::make(av.data(), {M, K})).set(b->get_uid(), bv.data()).set(c->get_uid(), cv.data());
      if (g.execute(p).is_bad()) {
        ++bad;
        continue;
      }
      ++ran;
      bad += wrong_elements(av, bv, cv);
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) ts.emplace_back(worker, t);
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(ran.load(), kThreads * kCalls);
}

// Threads execute the built reference plan while `filter` withdraws it.
void filter_while_executing(const std::function<Status(Graph&)>& filter) {
  Mm mm;
  Graph& g = mm.g;
  auto &a = mm.a, &b = mm.b, &c = mm.c;
  ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  std::atomic<int> ran{0}, refused{0}, wrong{0};
  std::atomic<bool> stop{false};
  auto worker = [&](int tid) {
    std::mt19937 rng(77 + tid);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> av(M * K), bv(K * N), cv(M * N);
    while (!stop.load()) {
      for (auto& x : av) x = d(rng);
      for (auto& x : bv) x = d(rng);
      std::fill(cv.begin(), cv.end(), 1e30f);
      Status s = g.execute(VariantPack().set(a, av.data()).set(b, bv.data()).set(c, cv.data()));
      if (s.is_bad()) {
        if (s.message().find("no built plan") == std::string::npos) ++wrong;
        ++refused;
        continue;
      }
      ++ran;
      wrong += wrong_elements(av, bv, cv);
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; ++t) ts.emplace_back(worker, t);
  while (ran.load() < 50) std::this_thread::yield();
  ASSERT_TRUE(filter(g).is_good());
  while (refused.load() < 30) std::this_thread::yield();
  stop = true;
  for (auto& t : ts) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(ran.load(), 50);
  Status after = g.execute(VariantPack());
  EXPECT_TRUE(after.is_bad());
  EXPECT_NE(after.message().find("no built plan"), std::string::npos) << after.message();
}

TEST(ConcurrentExecute, DeselectWhileExecutingIsSafe) {
  filter_while_executing([](Graph& g) { return g.deselect_engines({"reference"}); });
}

// The note filters withdraw the same way (the reference declares no notes, so
// keeping only TENSOR_CORE plans removes it).
TEST(ConcurrentExecute, NoteFilterWhileExecutingIsSafe) {
  filter_while_executing([](Graph& g) { return g.select_numeric_notes({NumericalNote::TENSOR_CORE}); });
}

}  // namespace
}  // namespace opgraph
