// bench/timing.h — the one timing module of the C++ benchmarks (bench/*.cpp).
//
//   seconds_since(t0), ms_since(t0)     wall time on the host's steady clock
//   host_ns_per_call(burst, reps, drain, f)
//                                       host cost of enqueueing one call: the minimum over `reps`
//                                       bursts of `burst` calls, each burst from a drained queue
//                                       (drain()), of burst time / burst. Bursts are short, so the
//                                       launch queue never fills: the figure is the caller's cost.
//   host_ns_per_call_pair(burst, reps, drain, a, b)
//                                       the same for two callers interleaved rep by rep (a then b
//                                       on even reps, b then a on odd ones; each burst from a
//                                       drained queue): drift in clocks or caches over the run
//                                       reaches both sides alike. Returns {a's minimum, b's}.
//   time_kernels(api, stream, runs)     KERNEL time of each runner, like with like: every runner
//                                       (enqueues one call on `stream`) is captured `calls` times into
//                                       a CUDA graph, and the graphs' replays are timed with events,
//                                       interleaved: `rounds` rounds, each runner one sample per round
//                                       in an order shuffled per round (fixed seed); each figure is
//                                       the runner's median sample. A sample replays the graph once
//                                       untimed first, so the timed replay is enqueued while the GPU
//                                       is busy (no host gap inside the events). Where any runner
//                                       cannot be captured, every runner is timed the same other way
//                                       (events around `calls` back-to-back launches; method
//                                       "events", which includes launch gaps) and says so.
//
// The graph entry points are not in runtime::CudaDriverApi (the library never captures): they are
// looked up here, in the libcuda the runtime loaded. bench/timing.py is the Python counterpart.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/loader.h"

namespace opgraph::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
inline double ms_since(Clock::time_point t0) { return 1e3 * seconds_since(t0); }

// One burst of `burst` calls of f from a drained queue: host time / call, ns.
template <class Drain, class F>
double burst_ns_per_call(int burst, Drain&& drain, F&& f) {
  drain();
  const auto t0 = Clock::now();
  for (int i = 0; i < burst; ++i) f();
  const auto t1 = Clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / burst;
}

template <class Drain, class F>
double host_ns_per_call(int burst, int reps, Drain&& drain, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) best = std::min(best, burst_ns_per_call(burst, drain, f));
  return best;
}

template <class Drain, class A, class B>
std::pair<double, double> host_ns_per_call_pair(int burst, int reps, Drain&& drain, A&& a, B&& b) {
  double best_a = 1e300, best_b = 1e300;
  for (int r = 0; r < reps; ++r) {
    const bool a_first = r % 2 == 0;
    if (a_first) best_a = std::min(best_a, burst_ns_per_call(burst, drain, a));
    best_b = std::min(best_b, burst_ns_per_call(burst, drain, b));
    if (!a_first) best_a = std::min(best_a, burst_ns_per_call(burst, drain, a));
  }
  return {best_a, best_b};
}

// Stream capture and graph launch, from the libcuda the runtime opened.
struct GraphApi {
  decltype(&::cuStreamBeginCapture) begin_capture = nullptr;
  decltype(&::cuStreamEndCapture) end_capture = nullptr;
  decltype(&::cuGraphInstantiateWithFlags) instantiate = nullptr;
  decltype(&::cuGraphLaunch) launch = nullptr;
  decltype(&::cuGraphExecDestroy) exec_destroy = nullptr;
  decltype(&::cuGraphDestroy) destroy = nullptr;
  bool ok() const { return begin_capture && end_capture && instantiate && launch && exec_destroy && destroy; }
};

inline GraphApi graph_api(const runtime::CudaDriverApi& api) {
  GraphApi g;
  void* h = ::dlopen(api.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!h) h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) return g;
  auto sym = [h](auto& fn, const char* name) { fn = reinterpret_cast<std::decay_t<decltype(fn)>>(::dlsym(h, name)); };
  sym(g.begin_capture, "cuStreamBeginCapture_v2");
  if (!g.begin_capture) sym(g.begin_capture, "cuStreamBeginCapture");
  sym(g.end_capture, "cuStreamEndCapture");
  sym(g.instantiate, "cuGraphInstantiateWithFlags");
  sym(g.launch, "cuGraphLaunch");
  sym(g.exec_destroy, "cuGraphExecDestroy");
  sym(g.destroy, "cuGraphDestroy");
  return g;
}

struct KernelTimes {
  std::vector<double> seconds;  // per call, median over the rounds; NaN where a runner failed
  std::vector<double> spread;   // (max - min) / median of each runner's samples
  std::string method;           // "graph" or "events"
  int calls = 0;                // calls per sample
};

// `runs[i]()` enqueues one call of runner i on `stream` and returns false on failure.
inline KernelTimes time_kernels(const runtime::CudaDriverApi& api, CUstream stream,
                                const std::vector<std::function<bool()>>& runs, int rounds = 10,
                                double target_s = 2e-3, int max_calls = 64, unsigned seed = 20261202) {
  KernelTimes out;
  const std::size_t n = runs.size();
  out.seconds.assign(n, NAN);
  out.spread.assign(n, NAN);
  CUevent e0 = nullptr, e1 = nullptr;
  api.event_create(&e0, 0);
  api.event_create(&e1, 0);
  auto elapsed_s = [&] {
    api.event_synchronize(e1);
    float ms = 0;
    api.event_elapsed_time(&ms, e0, e1);
    return ms * 1e-3;
  };
  std::vector<bool> ok(n, true);
  double slowest = 1e-6;
  for (std::size_t r = 0; r < n; ++r) {  // warm-up (loads, scratch), then a rough per-call time
    for (int i = 0; i < 3 && ok[r]; ++i) ok[r] = runs[r]();
    if (!ok[r]) continue;
    api.event_record(e0, stream);
    for (int i = 0; i < 3 && ok[r]; ++i) ok[r] = runs[r]();
    api.event_record(e1, stream);
    const double s = elapsed_s() / 3;
    if (ok[r]) slowest = std::max(slowest, s);
  }
  out.calls = std::max(1, std::min(max_calls, static_cast<int>(std::ceil(target_s / slowest))));
  const GraphApi g = graph_api(api);
  std::vector<CUgraphExec> execs(n, nullptr);
  out.method = g.ok() ? "graph" : "events";
  for (std::size_t r = 0; r < n && out.method == "graph"; ++r) {
    if (!ok[r]) continue;
    api.stream_synchronize(stream);
    CUgraph graph = nullptr;
    bool captured = g.begin_capture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS;
    for (int i = 0; i < out.calls && captured; ++i) captured = runs[r]();
    const bool ended = g.end_capture(stream, &graph) == CUDA_SUCCESS;  // always end what began
    captured = captured && ended && graph && g.instantiate(&execs[r], graph, 0) == CUDA_SUCCESS;
    if (graph) g.destroy(graph);
    if (!captured) out.method = "events";
  }
  if (out.method != "graph")
    for (auto& x : execs)
      if (x) g.exec_destroy(x), x = nullptr;
  auto launch = [&](std::size_t r) {
    if (out.method == "graph") return g.launch(execs[r], stream) == CUDA_SUCCESS;
    bool good = true;
    for (int i = 0; i < out.calls && good; ++i) good = runs[r]();
    return good;
  };
  std::vector<std::vector<double>> samples(n);
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::mt19937 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    for (const std::size_t r : order) {
      if (!ok[r]) continue;
      api.stream_synchronize(stream);
      ok[r] = launch(r);  // untimed: the GPU busy while the timed one is enqueued
      api.event_record(e0, stream);
      ok[r] = ok[r] && launch(r);
      api.event_record(e1, stream);
      const double s = elapsed_s() / out.calls;
      if (ok[r]) samples[r].push_back(s);
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    auto& v = samples[r];
    if (!ok[r] || v.size() != static_cast<std::size_t>(rounds) || v.empty()) continue;
    std::sort(v.begin(), v.end());
    out.seconds[r] = v[v.size() / 2];
    out.spread[r] = (v.back() - v.front()) / out.seconds[r];
  }
  for (auto& x : execs)
    if (x) g.exec_destroy(x);
  api.event_destroy(e0);
  api.event_destroy(e1);
  return out;
}

}  // namespace opgraph::bench
