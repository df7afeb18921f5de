// bench/plan_chain.cpp — how long planning takes for a long graph:
// a chain of N pointwise relu nodes (default 100,000; FLOAT [4, 8]), planned for the
// host on the CPU reference engine. Prints seconds per stage:
//   build      the builder calls that make the graph
//   validate   OpGraph::validate()
//   plan       create_execution_plans({FALLBACK}): validate again, freeze, facts, rank
//   build_plan build_plans(): the reference engine's build
// and "plan total" = validate + plan + build_plan, the figure with a target
// (under 2 s for 100k nodes, RelWithDebInfo, one core). With several sizes given
// (`plan_chain 10000 100000`) the per-node cost of each shows whether a step grows
// faster than the graph. Also printed, outside the total: the graph's JSON round
// trip (serialize + deserialize). Not a test: nothing here asserts a time.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "opgraph/graph.h"
#include "timing.h"

namespace {

using namespace opgraph;
using bench::Clock;
double since(Clock::time_point t0) { return bench::seconds_since(t0); }

int run(std::int64_t n) {
  auto t0 = Clock::now();
  Graph g;
  g.set_name("chain").set_compute_data_type(DataType::FLOAT);
  auto t = g.tensor({4, 8}, DataType::FLOAT, "x");
  for (std::int64_t i = 0; i < n; ++i) t = g.relu(t);
  t->set_output(true).set_name("y").set_data_type(DataType::FLOAT);
  const double build = since(t0);

  t0 = Clock::now();
  Status v = g.validate();
  const double validate = since(t0);
  if (!v.is_good()) { std::fprintf(stderr, "validate: %s\n", v.to_string().c_str()); return 1; }

  t0 = Clock::now();
  Status c = g.create_execution_plans({HeurMode::FALLBACK});
  const double plan = since(t0);
  if (!c.is_good()) { std::fprintf(stderr, "create_execution_plans: %s\n", c.to_string().c_str()); return 1; }

  t0 = Clock::now();
  Status b = g.build_plans();
  const double built = since(t0);
  if (!b.is_good()) { std::fprintf(stderr, "build_plans: %s\n", b.to_string().c_str()); return 1; }

  // The JSON round trip of the same graph (the CLI's replay path; not in the total).
  t0 = Clock::now();
  auto text = g.serialize();
  auto back = text ? OpGraph::deserialize(text.value()) : Result<OpGraph>(text.status());
  const double json = since(t0);
  if (!back) { std::fprintf(stderr, "json round trip: %s\n", back.status().to_string().c_str()); return 1; }

  const double total = validate + plan + built;
  std::printf("nodes %8lld  build %.3f s  validate %.3f s  plan %.3f s  build_plan %.3f s  plan total %.3f s"
              "  (%.2f us/node)  json round trip %.3f s\n",
              static_cast<long long>(n), build, validate, plan, built, total, 1e6 * total / static_cast<double>(n), json);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes.push_back(100000);
  for (auto n : sizes) {
    if (n <= 0) { std::fprintf(stderr, "usage: plan_chain [nodes ...] (positive counts)\n"); return 2; }
    if (int rc = run(n)) return rc;
  }
  return 0;
}
