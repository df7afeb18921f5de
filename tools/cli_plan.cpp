// tools/cli_plan.cpp — `opgraph plan GRAPH.json`: the ranked plan list.
//
// Every plan is built (to learn its workspace); a plan that declines shows why.
// The last column lists the plan's numerical and behaviour notes ("-": none).
#include <cstdio>

#include "cli_common.h"
#include "opgraph/device.h"

namespace opgraph::cli {

int cmd_plan(int argc, char** argv) {
  const std::string cmd = "plan";
  auto args = parse_args(cmd, argc, argv, {"--modes", "--device"}, {});
  if (!args) return 2;
  if (args->positional.size() != 1) return fail(cmd, "expected one graph file: opgraph plan GRAPH.json", 2);
  auto modes = parse_modes(cmd, args->get("--modes"));
  if (!modes) return 2;
  auto g = load_graph(cmd, args->positional[0]);
  if (!g) return 1;
  if (!apply_device(cmd, *args, *g)) return 1;
  // As `opgraph run` does: with a device target on a machine that has a GPU, load
  // the driver first, so the list shows the cuDNN plans `run` would rank (the
  // backend is not queried without libcuda). Without a GPU this is a no-op.
  if (g->plan_target().has_device()) (void)device_count();
  Status s = g->create_execution_plans(*modes);
  if (s.is_bad()) return fail(cmd, "'" + clip(args->positional[0]) + "': " + s.to_string());
  const auto& t = g->plan_target();
  std::printf("graph '%s': %zu node(s), family %s, target %s\n", g->context().name.c_str(), g->nodes().size(),
              g->family_name().empty() ? "none" : g->family_name().c_str(),
              t.has_device() ? ("sm" + std::to_string(t.device->sm_version())).c_str() : "host (no GPU)");
  // Notes that begin "plan " (a recorded autotune choice, a list from the plan cache) are not about left-out engines.
  for (const auto& n : g->planning_notes())
    std::printf("  # %s%s\n", n.rfind("plan ", 0) == 0 ? "" : "not offered: ", n.c_str());
  std::printf("%-5s %-9s %-10s %-12s %-40s %s\n", "index", "engine_id", "mode", "workspace", "plan", "notes");
  for (std::int64_t i = 0; i < g->get_execution_plan_count(); ++i) {
    auto c = g->get_engine_and_knobs_at_index(i).value();
    std::string ws;
    if (Status b = g->build_plan_at_index(i); b.is_good())
      ws = std::to_string(g->get_workspace_size_plan_at_index(i).value());
    else if (b.code() == ErrorCode::GRAPH_NOT_SUPPORTED)
      ws = "declined";
    else
      return fail(cmd, g->get_plan_name_at_index(i).value() + ": " + b.to_string());
    std::string notes = notes_to_string(c.notes);
    std::printf("%-5lld %-9lld %-10s %-12s %-40s %s\n", static_cast<long long>(i), static_cast<long long>(c.engine_id),
                c.mode ? std::string(to_string(*c.mode)).c_str() : "-", ws.c_str(),
                g->get_plan_name_at_index(i).value().c_str(), notes.empty() ? "-" : notes.c_str());
    if (ws == "declined") std::printf("      # %s\n", g->get_plan_status_at_index(i).value().c_str());
  }
  return 0;
}

}  // namespace opgraph::cli
