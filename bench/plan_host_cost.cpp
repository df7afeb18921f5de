// bench/plan_host_cost.cpp — host time of planning, building and executing a new graph
// (not a timed test). Two modes.
//
// plan_host_cost [N] [GRAPH.json ...] — planning on the CPU (nothing needs a GPU). For
// each graph file given (default: examples/graphs/*.json under OPGRAPH_SOURCE_DIR or the
// current folder), the median over N fresh graphs (each deserialised from the file's
// text) of:
//   parse            Graph::deserialize alone (the floor every row includes)
//   plan host        + create_execution_plans({A, FALLBACK}) for the host
//   plan sm_90a      + the same for a deviceless sm_90a target (ranking of our
//                    engines and the cudnn slot's decline; no GPU, so no build)
//   plan cached      + the same with set_plan_cache(true), the class already cached
//   choice lookup    plan sm_90a with the target's plan-choice folder present, so
//                    planning computes the graph key and reads a record
//   key              OpGraph::key() of a validated graph
//   class            layout_class_key() of a validated graph
// in MICROSECONDS. The columns are interleaved: round i times each column once,
// in turn, so a drift of the (shared) machine spreads over all of them.
// bench/plan_host_cost_ab.sh runs two builds of this program in turn (before/after).
//
// plan_host_cost --exec [--rounds N] [--host] [--small] [GRAPH.json ...] — the host cost
// of reaching a running plan (bench/run.sh host; docs/autotune.md "Measured host cost").
// On device 0 (the driver the runtime loads: OPGRAPH_LIBCUDA may name another, e.g. the
// tests' fake libcuda, whose launches do nothing) or, with --host or without a driver,
// on the host (the reference engine, host buffers). Every figure is HOST time, measured
// alone: the stream is drained before each timed call (so no kernel time and no full
// launch queue is in it), rounds interleaved over the columns, the median of N (200)
// warm rounds, in microseconds. Two tables:
//   1. per example graph: create_execution_plans({A, FALLBACK}) + build_plans() of a
//      graph deserialised from the file, with every kernel already compiled (one warm
//      plan + build first: the compiled-kernel cache on disk and the runtime's module
//      table hold them); columns parse, +plan, +plan+build; the figure is plan+build
//      above parse (target <= 200 us where the plan built is of our families).
//   2. a new shape of a known layout class, per family (gemm: bf16 matmul [1,M,K] x
//      [1,K,N] (B column-major, the Linear layout) at several M; cudnn: the same graph's
//      first cudnn plan; linear_attention: gdn_prefill_varlen at a new T):
//        exec       execute_plan_at_index of a built plan at its declared shape
//        override   the same plan executed with shape overrides at a new extent
//                   (docs/dynamic_shapes.md; an engine that declines prints its reason)
//        cached     a new graph at a new extent: build it, set_plan_cache(true) (the class
//                   already in the cache), create_execution_plans, build_plan_at_index of
//                   the family's first plan, bind the pack, execute
//        uncached   the same with the plan cache off (ranking included)
//      and each above exec (target: override or cached <= 20 us above exec). Each round
//      takes another extent of the class (M + 1 .. M + max(8, M/2), T + 1..64), so nothing per
//      shape is memoised across rounds but the compiled kernels (every extent's compiled first).
//   --small: small extents and shapes the host reference runs quickly (the CPU check,
//   bench/CMakeLists.txt's ctest); --rounds N: rounds per column.
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/stream_handle.h"
#include "opgraph/graph.h"
#include "runtime/device.h"
#include "runtime/device_buffer.h"
#include "runtime/plan_choice.h"

namespace {

using namespace opgraph;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Interleaved rounds: round i runs every column once; each column's median.
std::vector<double> interleaved_medians(int n, const std::vector<std::function<bool()>>& columns) {
  std::vector<std::vector<double>> t(columns.size());
  for (int i = 0; i < n; ++i)
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto t0 = Clock::now();
      const bool ok = columns[c]();
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      t[c].push_back(ok ? us : -1);
    }
  std::vector<double> out;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    out.push_back(v.front() < 0 ? -1 : v[v.size() / 2]);
  }
  return out;
}


std::vector<fs::path> example_graphs() {
  std::vector<fs::path> files;
  const char* src = std::getenv("OPGRAPH_SOURCE_DIR");
  const fs::path dir = fs::path(src ? src : ".") / "examples" / "graphs";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// ---- --exec: plan + build + execute host cost --------------------------------------------

template <class T>
T value_or(const Result<T>& r, T fallback) {
  return r.is_good() ? r.value() : fallback;
}

// Where plans run and buffers live: device 0 through the runtime, or the host.
struct Target {
  std::unique_ptr<runtime::KernelRuntime> rt;  // null: the host
  CUstream stream = nullptr;
  std::unique_ptr<gpu_testing::StreamHandle> handle;
  std::vector<std::unique_ptr<DeviceBuffer>> dev;
  std::vector<std::vector<std::uint64_t>> host;

  bool device() const { return rt != nullptr; }
  const Handle* h() const { return handle.get(); }
  void* alloc(std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 16);
    if (device()) {
      dev.push_back(std::make_unique<DeviceBuffer>(rt->api(), bytes));
      if (dev.back()->status().is_bad()) return nullptr;
      (void)rt->api().memset_d32(dev.back()->ptr(), 0, bytes / 4);
      return reinterpret_cast<void*>(dev.back()->ptr());
    }
    host.emplace_back((bytes + 7) / 8, 0);
    return host.back().data();
  }
  void upload(void* dst, const void* src, std::size_t n) {
    if (device()) (void)rt->api().memcpy_htod(reinterpret_cast<CUdeviceptr>(dst), src, n);
    else std::memcpy(dst, src, n);
  }
  void drain() const {
    if (device()) (void)rt->api().stream_synchronize(stream);
  }
  void target(Graph& g) const {
    if (device()) g.set_device_properties(rt->device());
  }
};

std::size_t span_bytes(const Tensor& t) {
  std::int64_t last = 0;
  for (std::size_t i = 0; i < t.get_dim().size(); ++i) last += (t.get_dim()[i] - 1) * t.get_stride()[i];
  return static_cast<std::size_t>(((last + 1) * bits_of(t.get_data_type()) + 7) / 8);
}

// Buffers by tensor name, allocated once at the largest shape a case binds; an INT32
// tensor named cu_seqlens gets its offsets per token count (bound by `tokens`).
struct Buffers {
  Target* t;
  std::map<std::string, std::pair<void*, std::size_t>> by_name;
  std::map<std::int64_t, void*> cu_seqlens;  // tokens -> {0, T/3, 2T/3, T}

  Status reserve(const Graph& g) {
    for (const TensorPtr& x : g.tensors()) {
      if (x->get_is_virtual() || x->get_is_pass_by_value()) continue;
      const std::size_t need = span_bytes(*x);
      auto& b = by_name[x->get_name()];
      if (b.second < need) b = {t->alloc(need), need};
      if (!b.first) return Status(ErrorCode::GRAPH_EXECUTION_FAILED, "allocation of " + x->get_name() + " failed");
    }
    return Status::ok();
  }
  void* seqlens(std::int64_t tokens) {
    auto& p = cu_seqlens[tokens];
    if (!p) {
      const std::int32_t v[4] = {0, static_cast<std::int32_t>(tokens / 3), static_cast<std::int32_t>(2 * tokens / 3),
                                 static_cast<std::int32_t>(tokens)};
      p = t->alloc(sizeof v);
      if (p) t->upload(p, v, sizeof v);
    }
    return p;
  }
  // Binds every non-virtual tensor of `g` (validated or planned); false if one has no buffer.
  bool bind(const Graph& g, VariantPack& pack, std::int64_t tokens) {
    for (const TensorPtr& x : g.tensors()) {
      if (x->get_is_virtual() || x->get_is_pass_by_value()) continue;
      if (x->get_name() == "cu_seqlens") {
        pack.set(x->get_uid(), seqlens(tokens));
        continue;
      }
      auto it = by_name.find(x->get_name());
      if (it == by_name.end() || it->second.second < span_bytes(*x)) return false;
      pack.set(x->get_uid(), it->second.first);
    }
    return true;
  }
};

// Interleaved rounds of columns that time themselves (a column returns its
// microseconds, or a negative number on failure); each column's median, -1 if any
// round failed.
std::vector<double> interleaved_timed(int n, const std::vector<std::function<double(int)>>& columns) {
  std::vector<std::vector<double>> t(columns.size());
  for (int i = 0; i < n; ++i)
    for (std::size_t c = 0; c < columns.size(); ++c) t[c].push_back(columns[c](i));
  std::vector<double> out;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    out.push_back(v.empty() || v.front() < 0 ? -1 : v[v.size() / 2]);
  }
  return out;
}

// Rounds for a row whose one round costs `round_us`: `rounds`, or fewer (at least 11) so the row
// takes about `budget_s` (cuDNN's plans build in milliseconds, ours in microseconds).
int capped_rounds(double round_us, int rounds, double budget_s = 4.0) {
  if (round_us <= 0 || round_us * rounds <= budget_s * 1e6) return rounds;
  return std::min(rounds, std::max(11, static_cast<int>(budget_s * 1e6 / round_us)));
}

std::string short_name(const Graph& g, std::int64_t i) {
  std::string s = value_or(g.get_plan_name_at_index(i), std::string("?"));
  return s.size() > 44 ? s.substr(0, 41) + "..." : s;
}

const char* fmt(double v, char* buf) {
  if (v < 0) return "-";
  std::snprintf(buf, 32, "%.1f", v);
  return buf;
}

struct ExecCtx {
  Target* t;
  int rounds;
  bool small;
  void* ws = nullptr;
  std::int64_t ws_bytes = 0;
  std::string notes;
};

// Table 1: create_execution_plans + build_plans per example graph, kernels cached.
void plan_build_table(ExecCtx& x, const std::vector<fs::path>& files) {
  std::printf("\n### create_execution_plans + build_plans per example graph, every kernel already compiled\n");
  std::printf("host us, median of n interleaved rounds (%d, fewer where a round takes milliseconds); target:\n"
              "plan+build <= 200 us above parse on our families\n", x.rounds);
  std::printf("%-28s %8s %9s %14s %12s %5s  %s\n", "graph", "parse", "+plan", "+plan+build", "plan+build", "n",
              "plan built");
  const std::vector<HeurMode> modes{HeurMode::A, HeurMode::FALLBACK};
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    std::string built = "(none)";
    auto steps = [&](bool plan, bool build) {
      return [&, plan, build](int) -> double {
        const auto t0 = Clock::now();
        auto g = Graph::deserialize(text);
        if (g.is_bad()) return -1;
        x.t->target(*g);
        if (plan && g->create_execution_plans(modes).is_bad()) return -1;
        if (build && g->build_plans().is_bad()) return -1;
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        return us;  // the graph (and its plans) is destroyed after the clock stopped
      };
    };
    {  // warm: the kernels compiled (or loaded from the disk cache) into the runtime
      auto g = Graph::deserialize(text);
      if (g.is_bad()) continue;
      x.t->target(*g);
      Status s = g->create_execution_plans(modes);
      if (s.is_good()) s = g->build_plans();
      if (s.is_bad()) {
        std::printf("%-28s plan/build failed: %s\n", f.filename().c_str(), s.to_string().substr(0, 160).c_str());
        continue;
      }
      for (std::int64_t i = 0; i < g->get_execution_plan_count(); ++i)
        if (g->build_plan_at_index(i).is_good()) {
          built = short_name(*g, i);
          break;
        }
    }
    const double one = steps(true, true)(0);
    const int n = capped_rounds(one > 0 ? 3 * one : 0, x.rounds);
    const auto m = interleaved_timed(n, {steps(false, false), steps(true, false), steps(true, true)});
    char a[32], b[32], c[32], d[32];
    std::printf("%-28s %8s %9s %14s %12s %5d  %s\n", f.filename().c_str(), fmt(m[0], a), fmt(m[1], b), fmt(m[2], c),
                fmt(m[2] >= 0 && m[0] >= 0 ? m[2] - m[0] : -1, d), n, built.c_str());
  }
}

// One family's new-shape case: make(extent) builds the graph at that extent (the class's
// varying axis: M for the matmul, T for gdn); overrides(pack, graph, extent) writes the
// shape overrides of a call at `extent` on the graph built at the declared extent.
struct ShapeCase {
  std::string label, prefix;
  std::int64_t declared;
  std::function<Result<Graph>(std::int64_t)> make;
  std::function<std::int64_t(std::int64_t declared, int round)> next;
  std::function<void(VariantPack&, const Graph&, std::int64_t)> overrides;
};

void new_shape_row(ExecCtx& x, const ShapeCase& c, Buffers& bufs) {
  const std::vector<HeurMode> modes{HeurMode::A, HeurMode::FALLBACK};
  Target& t = *x.t;
  auto fail = [&](const std::string& why) {
    std::printf("%-10s %-7lld %s\n", c.label.c_str(), static_cast<long long>(c.declared), why.c_str());
  };
  // Buffers at the largest extent a round binds.
  const int rounds_of_extents = 64;  // c.next cycles through at most this many extents
  std::int64_t largest = c.declared;
  for (int r = 0; r < rounds_of_extents; ++r) largest = std::max(largest, c.next(c.declared, r));
  {
    auto big = c.make(largest);
    if (big.is_bad() || big->validate().is_bad()) return fail("the graph at the largest extent does not validate");
    if (Status s = bufs.reserve(*big); s.is_bad()) return fail(s.to_string());
  }
  auto declared = c.make(c.declared);
  if (declared.is_bad()) return fail(declared.status().to_string());
  Graph& g = *declared;
  t.target(g);
  if (Status s = g.create_execution_plans(modes); s.is_bad()) return fail("plan: " + s.to_string().substr(0, 160));
  // The family's first plan that builds and executes here (the decline walk build_plans makes).
  const Workspace ws{x.ws, x.ws_bytes};
  VariantPack pack;
  if (!bufs.bind(g, pack, c.declared)) return fail("a tensor has no buffer");
  std::int64_t idx = -1;
  std::string why = "no " + c.prefix + " plan in the list";
  for (std::int64_t i = 0; i < g.get_execution_plan_count() && idx < 0; ++i) {
    if (t.device() && value_or(g.get_plan_name_at_index(i), std::string()).rfind(c.prefix, 0) != 0) continue;
    Status s = g.build_plan_at_index(i);
    if (s.is_good() && value_or(g.get_workspace_size_plan_at_index(i), std::int64_t{0}) > x.ws_bytes)
      s = Status(ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED, "needs more workspace than the bench holds");
    if (s.is_good()) s = g.execute_plan_at_index(pack, ws, i, t.h());
    t.drain();
    if (s.is_good()) idx = i;
    else why = short_name(g, i) + ": " + s.to_string().substr(0, 200);
  }
  if (idx < 0) return fail(why);
  const std::string plan_name = value_or(g.get_plan_name_at_index(idx), std::string());
  // The override call, tried once: an engine that declines says why.
  std::string override_note;
  if (c.overrides) {
    VariantPack o;
    const std::int64_t e = c.next(c.declared, 0);
    (void)bufs.bind(g, o, e);
    c.overrides(o, g, e);
    if (Status s = g.execute_plan_at_index(o, ws, idx, t.h()); s.is_bad()) override_note = s.to_string();
    t.drain();
  } else {
    override_note = "(no override form for this case)";
  }
  auto exec = [&](int) -> double {
    t.drain();
    const auto t0 = Clock::now();
    const bool ok = g.execute_plan_at_index(pack, ws, idx, t.h()).is_good();
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    return ok ? us : -1;
  };
  auto over = [&](int r) -> double {
    if (!override_note.empty()) return -1;
    const std::int64_t e = c.next(c.declared, r);
    t.drain();
    const auto t0 = Clock::now();
    VariantPack o;
    bool ok = bufs.bind(g, o, e);
    c.overrides(o, g, e);
    ok = ok && g.execute_plan_at_index(o, ws, idx, t.h()).is_good();
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    return ok ? us : -1;
  };
  auto fresh = [&](bool cached) {
    return [&, cached](int r) -> double {
      const std::int64_t e = c.next(c.declared, r);
      (void)bufs.seqlens(e);  // the caller's offsets, written before the clock starts
      t.drain();
      const auto t0 = Clock::now();
      auto ng = c.make(e);
      bool ok = ng.is_good();
      std::int64_t i = -1;
      if (ok) {
        t.target(*ng);
        ng->set_plan_cache(cached);
        ok = ng->create_execution_plans(modes).is_good();
        // The declared plan's config; where the list (ranked again, uncached) lacks it, the
        // family's first plan.
        for (std::int64_t j = 0; ok && j < ng->get_execution_plan_count() && i < 0; ++j)
          if (value_or(ng->get_plan_name_at_index(j), std::string()) == plan_name) i = j;
        for (std::int64_t j = 0; ok && j < ng->get_execution_plan_count() && i < 0; ++j)
          if (!t.device() || value_or(ng->get_plan_name_at_index(j), std::string()).rfind(c.prefix, 0) == 0) i = j;
        ok = ok && i >= 0 && ng->build_plan_at_index(i).is_good();
        VariantPack p;
        ok = ok && bufs.bind(*ng, p, e) && ng->execute_plan_at_index(p, ws, i, t.h()).is_good();
      }
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      t.drain();
      return ok ? us : -1;  // the graph is destroyed here, after the clock stopped
    };
  };
  // Warm: the class's list in the cache, and every extent's kernels (a list ranked again may pick
  // another config) compiled into the runtime, so no round compiles.
  const double one = fresh(true)(0) + fresh(false)(0);
  const int n = capped_rounds(one > 0 ? one : 0, x.rounds);
  for (int r = 1; r < std::min(rounds_of_extents, n); ++r) {
    (void)fresh(true)(r);
    (void)fresh(false)(r);
  }
  const auto m = interleaved_timed(n, {exec, over, fresh(true), fresh(false)});
  char a[32], b[32], cc[32], d[32], e1[32], f1[32], g1[32];
  auto above = [&](double v) { return v >= 0 && m[0] >= 0 ? v - m[0] : -1; };
  std::int64_t lo = c.next(c.declared, 0), hi = lo;
  for (int r = 0; r < std::min(rounds_of_extents, n); ++r) hi = std::max(hi, c.next(c.declared, r));
  std::printf("%-10s %-7lld %-9s %8s %9s %9s %9s %9s %9s %9s %5d  %s\n", c.label.c_str(),
              static_cast<long long>(c.declared), (std::to_string(lo) + ".." + std::to_string(hi)).c_str(),
              fmt(m[0], a), fmt(m[1], b), fmt(above(m[1]), cc), fmt(m[2], d), fmt(above(m[2]), e1), fmt(m[3], f1),
              fmt(above(m[3]), g1), n, short_name(g, idx).c_str());
  if (!override_note.empty() && c.overrides)
    x.notes += "  " + c.label + " " + std::to_string(c.declared) + " override: " + override_note.substr(0, 400) + "\n";
}

// The libcudnn this process mapped (the cudnn engine's copy) and its cudnnGetVersion, or "none".
std::string loaded_cudnn() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto p = line.find('/');
    if (p == std::string::npos || line.find("libcudnn.so", p) == std::string::npos) continue;
    const std::string path = line.substr(p);
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    auto get = h ? reinterpret_cast<std::size_t (*)()>(::dlsym(h, "cudnnGetVersion")) : nullptr;
    const std::size_t v = get ? get() : 0;
    if (h) ::dlclose(h);
    if (!v) continue;  // a sub-library (libcudnn_graph, ...): the main one names the version
    return path + " (" + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
           std::to_string(v % 100) + ")";
  }
  return "none mapped";
}

Result<Graph> matmul_graph(std::int64_t m, std::int64_t n, std::int64_t k) {
  Graph g;
  g.set_name("mm").set_io_data_type(DataType::BFLOAT16).set_intermediate_data_type(DataType::FLOAT)
      .set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({1, m, k}, DataType::BFLOAT16, "a");
  auto b = g.tensor({1, k, n}, DataType::BFLOAT16, "b", {k * n, 1, k});  // W^T: the Linear layout
  auto y = g.matmul(a, b);
  y->set_output(true).set_data_type(DataType::BFLOAT16).set_name("y");
  return g;
}

int exec_main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int rounds = 200;
  bool host = false, small = false;
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--host") host = true;
    else if (a == "--small") small = true;
    else files.emplace_back(a);
  }
  if (files.empty()) files = example_graphs();
  Target t;
  std::string where = "the host (reference engine, host buffers)";
  if (!host) {
    auto rt = runtime::KernelRuntime::open(0, runtime::CacheOptions::from_env());
    if (rt.is_good()) {
      t.rt = std::move(rt.value());
      const auto& api = t.rt->api();
      if (api.stream_create(&t.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        return std::fprintf(stderr, "cuStreamCreate failed\n"), 1;
      t.handle = std::make_unique<gpu_testing::StreamHandle>(t.stream, &t.rt->device());
      where = "device 0: " + t.rt->device().name + " (sm_" + std::to_string(t.rt->device().major) +
              std::to_string(t.rt->device().minor) + ", driver " + t.rt->api().path + ")";
    } else {
      where += "; no device: " + rt.status().message().substr(0, 120);
    }
  }
  ExecCtx x{&t, rounds, small};
  x.ws_bytes = small || !t.device() ? (16 << 20) : (std::int64_t{1} << 30);
  x.ws = t.alloc(static_cast<std::size_t>(x.ws_bytes));
  if (!x.ws) return std::fprintf(stderr, "workspace allocation failed\n"), 1;
  std::printf("# plan_host_cost --exec on %s; %d rounds%s\n", where.c_str(), rounds, small ? "; --small shapes" : "");
  plan_build_table(x, files);

  std::printf("\n### a new shape of a known layout class: host us above a plain execute of a built plan\n");
  std::printf("median of n interleaved rounds (%d, fewer where a round takes milliseconds), the stream drained\n"
              "before each call; each round another extent of the class (new: the extents); target: override or\n"
              "cached <= 20 us above exec (our families)\n", rounds);
  std::printf("%-10s %-7s %-9s %8s %9s %9s %9s %9s %9s %9s %5s  %s\n", "family", "decl", "new", "exec", "override",
              "above", "cached", "above", "uncached", "above", "n", "plan");
  Buffers bufs{&t, {}, {}};
  const std::int64_t nk = small ? 64 : 4096;
  auto mm = [nk](std::int64_t m) { return matmul_graph(m, nk, nk); };
  // New extents near the declared one (d + 1 .. d + max(8, d / 2)), so a list ranked again mostly
  // keeps the declared config (the gemm heuristics pick tiles by M).
  auto next_m = [](std::int64_t d, int r) {
    const std::int64_t span = std::max<std::int64_t>(8, d / 2);
    return d + 1 + (r % std::min<std::int64_t>(64, span)) * std::max<std::int64_t>(1, span / 64);
  };
  auto mm_over = [nk](VariantPack& p, const Graph& g, std::int64_t m) {
    for (const TensorPtr& x2 : g.tensors()) {
      if (x2->get_name() == "a") p.override_shape(x2->get_uid(), {1, m, nk});
      if (x2->get_name() == "y") p.override_shape(x2->get_uid(), {1, m, nk});
    }
  };
  const std::vector<std::int64_t> ms = small ? std::vector<std::int64_t>{8, 32}
                                             : std::vector<std::int64_t>{16, 128, 1024, 4096};
  for (std::int64_t m : ms) new_shape_row(x, {"gemm", "gemm", m, mm, next_m, mm_over}, bufs);
  for (std::int64_t m : {ms.front(), ms.back()}) new_shape_row(x, {"cudnn", "cudnn", m, mm, next_m, mm_over}, bufs);
  // gdn: examples/graphs/gdn_prefill_varlen.json at T tokens (its first extent; strides do not
  // depend on T), 3 sequences.
  fs::path gdn_file;
  for (const fs::path& f : example_graphs())
    if (f.filename() == "gdn_prefill_varlen.json") gdn_file = f;
  std::ifstream in(gdn_file);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string gdn_text = ss.str();
  if (gdn_text.find("\"dim\":[40,") != std::string::npos) {
    auto gdn = [gdn_text](std::int64_t tokens) {
      std::string s = gdn_text;
      const std::string from = "\"dim\":[40,", to = "\"dim\":[" + std::to_string(tokens) + ",";
      for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
      return Graph::deserialize(s);
    };
    auto next_t = [small](std::int64_t d, int r) { return d + 1 + r % (small ? 4 : 64); };
    auto gdn_over = [](VariantPack& p, const Graph& g, std::int64_t tokens) {
      for (const TensorPtr& x2 : g.tensors()) {
        if (x2->get_is_virtual() || x2->get_is_pass_by_value() || x2->get_name() == "cu_seqlens") continue;
        std::vector<std::int64_t> d = x2->get_dim();
        d[0] = tokens;
        p.override_shape(x2->get_uid(), d, x2->get_stride());
      }
    };
    for (std::int64_t tk : small ? std::vector<std::int64_t>{40} : std::vector<std::int64_t>{40, 4096})
      new_shape_row(x, {"gdn", "linear_attention", tk, gdn, next_t, gdn_over}, bufs);
  } else {
    std::printf("gdn        (examples/graphs/gdn_prefill_varlen.json not found or changed: row skipped)\n");
  }
  if (!x.notes.empty()) std::printf("overrides declined (the engine's reason; the cached column is its path):\n%s",
                                    x.notes.c_str());
  std::printf("cuDNN loaded by this process: %s\n", loaded_cudnn().c_str());
  if (t.device()) {
    t.drain();
    (void)t.rt->api().stream_destroy(t.stream);
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--exec") == 0) return exec_main(argc, argv);
  int n = 200;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i == 1 && !a.empty() && std::all_of(a.begin(), a.end(), ::isdigit)) n = std::max(1, std::stoi(a));
    else files.emplace_back(a);
  }
  if (files.empty()) files = example_graphs();
  char tmpl[] = "/tmp/opgraph_plan_cost_XXXXXX";
  if (!::mkdtemp(tmpl)) return std::fprintf(stderr, "mkdtemp failed\n"), 1;
  const std::string no_record = std::string(tmpl) + "/empty", with_record = std::string(tmpl) + "/record";
  fs::create_directories(no_record);
  const DeviceProperties h200 = DeviceProperties::for_arch("sm_90a").value();
  const std::vector<HeurMode> modes{HeurMode::A, HeurMode::FALLBACK};

  std::printf("host time of planning one new graph, median of %d interleaved rounds, microseconds (CPU, no GPU)\n", n);
  std::printf("%-30s %8s %10s %12s %12s %14s %8s %8s\n", "graph", "parse", "plan_host", "plan_sm90a", "plan_cached",
              "choice_lookup", "key", "class");
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    auto make = [&]() { return Graph::deserialize(text); };
    // An empty plan-choice root (no record: no key computed at planning) or one with a record.
    auto root = [](const std::string& dir) { ::setenv("OPGRAPH_PLAN_CHOICES", dir.c_str(), 1); };
    auto plan = [&](bool device, bool cached, const std::string& choices) {
      return [&, device, cached, choices]() {
        root(choices);
        auto g = make();
        if (g.is_bad()) return false;
        if (device) g->set_device_properties(h200);
        g->set_plan_cache(cached);
        Status s = g->create_execution_plans(modes);
        if (s.is_bad()) std::fprintf(stderr, "%s: %s\n", f.filename().c_str(), s.to_string().c_str());
        return s.is_good();
      };
    };
    clear_plan_cache();
    (void)plan(true, true, no_record)();  // the class's first graph ranks and stores the list
    // A record for this graph on the target: planning there reads the key and the record.
    {
      root(with_record);
      auto g = make();
      runtime::PlanChoiceStore store(runtime::PlanChoiceOptions::from_env(), runtime::plan_choice_environment(h200));
      runtime::PlanChoice c;
      c.engine_id = 1;  // names no plan: read, then ignored
      if (g.is_good() && g->validate().is_good()) (void)store.record(g->key().value(), c);
    }
    auto validated = make();
    if (validated.is_bad() || validated->validate().is_bad()) continue;
    const auto m = interleaved_medians(n, {
        [&]() { return make().is_good(); },
        plan(false, false, no_record),
        plan(true, false, no_record),
        plan(true, true, no_record),
        plan(true, false, with_record),
        [&]() { return validated->key().is_good(); },
        [&]() { return layout_class_key(*validated).is_good(); },
    });
    std::printf("%-30s %8.1f %10.1f %12.1f %12.1f %14.1f %8.1f %8.1f\n", f.filename().c_str(), m[0], m[1], m[2],
                m[3], m[4], m[5], m[6]);
  }
  std::error_code ec;
  fs::remove_all(tmpl, ec);
  return 0;
}
