// bench/plan_host_cost.cpp — host time of planning a new graph, on the CPU (not a
// timed test; nothing here needs a GPU). For each graph file given (default:
// examples/graphs/*.json under OPGRAPH_SOURCE_DIR or the current folder), the
// median over N fresh graphs (each deserialised from the file's text) of:
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
// `build_plans` with every kernel in the compiled cache needs the device:
// bench/run.sh on the H200 (issue 26's host-cost table).
// bench/plan_host_cost_ab.sh runs two builds of this program in turn (before/after).
// Usage: plan_host_cost [N] [GRAPH.json ...]
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "opgraph/graph.h"
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

}  // namespace

int main(int argc, char** argv) {
  int n = 200;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i == 1 && !a.empty() && std::all_of(a.begin(), a.end(), ::isdigit)) n = std::max(1, std::stoi(a));
    else files.emplace_back(a);
  }
  if (files.empty()) {
    const char* src = std::getenv("OPGRAPH_SOURCE_DIR");
    const fs::path dir = fs::path(src ? src : ".") / "examples" / "graphs";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
  }
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
