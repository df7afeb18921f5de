// bench/host_overhead.cpp — per-execute HOST cost of a built 3-operand plan (not a
// timed test; bench/run.sh host runs it; timing: bench/timing.h).
//
// Method (seed, "What a per-execute path costs"): a burst of B calls is timed
// from a drained queue; the figure is the minimum over 25 repetitions of
// (burst time / B), swept over B = 1..256. Rows:
//   empty call       a noinline function taking the same three pointers (the floor)
//   execute          Graph::execute on a caller pack filled once: normalise + dispatch
//                    + the engine's fast-path loop, through a no-op engine injected
//                    with the manifest's test hook (plan::testing::ScopedManifest)
//   fill + execute   the same, the caller filling a fresh VariantPack every call
//   prepared         Graph::execute on a pack normalised once (Graph::prepare_variant_pack):
//                    dispatch + the engine's loop, no per-call normalisation
// Target: execute < 0.3 us per call for 3 operands.
// The GPU rows (a one-kernel plan vs a raw cuLaunchKernelEx of the same kernel)
// are bench/host_overhead_gpu.cpp.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/operand_table.h"
#include "opgraph/graph.h"
#include "plan/manifest.h"
#include "timing.h"

namespace {

using namespace opgraph;

// A plan that does what a real engine's execute does before it launches: loop
// over its build-time operand table (and hand a refusal to the checker).
class NoopPlan final : public CompiledPlan {
 public:
  explicit NoopPlan(const DeclaredLayout& l) : table_(l, OperandNeeds{true, false, true, MemoryKind::UNKNOWN, 16}, "noop") {}
  std::int64_t workspace_size() const override { return 0; }
  Status execute(const VariantPack& pack, const ExecutionContext&) const override {
    if (!table_.accepts(pack)) return table_.explain(pack);
    return Status::ok();
  }

 private:
  OperandTable table_;
};

class NoopEngine final : public Engine {
 public:
  explicit NoopEngine(EngineIdentity id) : Engine(std::move(id)) { caps_.needs_device = false; }
  const Capabilities& capabilities() const override { return caps_; }
  Status check_support(const OpGraph&, const PlanContext&) const override { return Status::ok(); }
  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph&, const PlanConfig&,
                                                   const PlanContext& ctx) const override {
    return std::unique_ptr<CompiledPlan>(std::make_unique<NoopPlan>(*ctx.layout));
  }

 private:
  Capabilities caps_;
};

__attribute__((noinline)) int empty_call(void* a, void* b, void* c) {
  asm volatile("" : : "r"(a), "r"(b), "r"(c) : "memory");
  return 0;
}

}  // namespace

int main() {
  plan::Manifest m;
  m.universal.name = "universal";
  m.universal.block = 0;
  plan::EngineSlot s;
  s.name = "noop";
  s.factory = [](EngineIdentity id) { return std::make_unique<NoopEngine>(std::move(id)); };
  m.universal.slots.push_back(std::move(s));
  plan::testing::ScopedManifest scope(std::move(m));

  Graph g;
  g.set_name("add3").set_io_data_type(DataType::BFLOAT16).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({1, 256, 128}, DataType::BFLOAT16, "X");
  auto y = g.tensor({1, 256, 128}, DataType::BFLOAT16, "Y");
  auto z = g.add(x, y);
  z->set_output(true).set_name("Z");
  if (Status st = g.create_execution_plans({HeurMode::A}); st.is_bad()) return std::fprintf(stderr, "%s\n", st.to_string().c_str()), 1;
  if (Status st = g.build_plans(); st.is_bad()) return std::fprintf(stderr, "%s\n", st.to_string().c_str()), 1;

  alignas(64) static std::uint16_t xb[256 * 128], yb[256 * 128], zb[256 * 128];
  VariantPack filled;
  filled.set(x, xb).set(y, yb).set(z, zb);
  if (Status st = g.execute(filled); st.is_bad()) return std::fprintf(stderr, "%s\n", st.to_string().c_str()), 1;
  VariantPack prepared;
  if (Status st = g.prepare_variant_pack(filled, prepared); st.is_bad())
    return std::fprintf(stderr, "%s\n", st.to_string().c_str()), 1;
  int failures = 0;
  constexpr int kReps = 25;
  std::printf("host overhead per call, ns (min over %d reps of a burst / burst size), 3 operands\n", kReps);
  std::printf("%-6s %12s %12s %16s %14s %10s\n", "burst", "empty_call", "execute", "fill+execute", "execute-empty",
              "prepared");
  for (int burst : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    double e = bench::host_ns_per_call(burst, kReps, [] {}, [&] { empty_call(xb, yb, zb); });
    double ex = bench::host_ns_per_call(burst, kReps, [] {}, [&] { failures += g.execute(filled).is_bad(); });
    double fx = bench::host_ns_per_call(burst, kReps, [] {}, [&] {
      VariantPack p;
      p.set(x, xb).set(y, yb).set(z, zb);
      failures += g.execute(p).is_bad();
    });
    double px = bench::host_ns_per_call(burst, kReps, [] {}, [&] { failures += g.execute(prepared).is_bad(); });
    std::printf("%-6d %12.1f %12.1f %16.1f %14.1f %10.1f\n", burst, e, ex, fx, ex - e, px);
  }
  std::printf("target: execute < 300 ns per call (normalise + dispatch, 3 operands)\n");
  return failures ? (std::fprintf(stderr, "%d executes failed\n", failures), 1) : 0;
}
