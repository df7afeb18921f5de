// tools/cli_autotune.cpp — `opgraph autotune GRAPH.json`: time the first k plans
// on random inputs (Graph::autotune), print the table, select and record the
// fastest in the plan-choice file (docs/autotune.md).
//
// Buffers are made as `opgraph run` makes them (cli_inputs.h, the same seed
// rule and --max-bytes check). Without --device the graph is planned for the
// host and its host plans run on host buffers; with --device DEV.json it is
// planned for that target and, on a machine with that GPU, the buffers are
// device copies on device DEV.json's "ordinal" (device 0 without one), with a
// handle on the default stream. The workspace is the largest any of the first
// k plans that build needs.
#include <algorithm>
#include <cstdio>

#include "cli_common.h"
#include "cli_inputs.h"
#include "cli_layout.h"
#include "opgraph/device.h"

namespace opgraph::cli {

int cmd_autotune(int argc, char** argv) {
  const std::string cmd = "autotune";
  auto args = parse_args(cmd, argc, argv, {"--top", "--rounds", "--seed", "--modes", "--device", "--max-bytes"},
                         {"--no-record"});
  if (!args) return 2;
  if (args->positional.size() != 1) return fail(cmd, "expected one graph file: opgraph autotune GRAPH.json", 2);
  auto modes = parse_modes(cmd, args->get("--modes"));
  if (!modes) return 2;
  AutotuneOptions options;
  std::int64_t seed = 0, max_bytes = kDefaultMaxBytes;
  if (auto s = args->get("--top")) {
    auto v = parse_int(cmd, "--top", *s);
    if (!v || *v == 0) return v ? fail(cmd, "--top must be at least 1", 2) : 2;
    options.top_k = *v;
  }
  if (auto s = args->get("--rounds")) {
    auto v = parse_int(cmd, "--rounds", *s);
    if (!v || *v == 0 || *v > 100000) return v ? fail(cmd, "--rounds must be between 1 and 100000", 2) : 2;
    options.rounds = static_cast<int>(*v);
  }
  if (auto s = args->get("--seed")) {
    auto v = parse_int(cmd, "--seed", *s);
    if (!v) return 2;
    seed = *v;
  }
  if (auto s = args->get("--max-bytes")) {
    auto v = parse_bytes(cmd, "--max-bytes", *s);
    if (!v) return 2;
    max_bytes = *v;
  }
  options.persist = !args->has("--no-record");
  const std::string& path = args->positional[0];
  auto g = load_graph(cmd, path);
  if (!g) return 1;
  auto layout = layout_buffers(*g);
  if (layout.is_bad()) return fail(cmd, "'" + clip(path) + "': " + layout.status().message());
  if (!apply_device(cmd, *args, *g)) return 1;
  if (g->plan_target().has_device()) (void)device_count();  // as `run`: the cuDNN backend is queried
  if (Status s = g->create_execution_plans(*modes); s.is_bad()) return fail(cmd, "'" + clip(path) + "': " + s.to_string());

  // The workspace: the largest need among the first k plans that build (autotune builds them again: cached).
  std::int64_t workspace_bytes = 0, seen = 0;
  for (std::int64_t i = 0; i < g->get_execution_plan_count() && seen < options.top_k; ++i, ++seen) {
    if (g->build_plan_at_index(i).is_bad()) continue;
    if (auto ws = g->get_workspace_size_plan_at_index(i); ws.is_good()) workspace_bytes = std::max(workspace_bytes, *ws);
  }
  if (Status s = check_cap(*layout, 1, workspace_bytes, max_bytes); s.is_bad())
    return fail(cmd, "'" + clip(path) + "': " + s.message());
  auto bufs = make_buffers(*g, *layout, static_cast<std::uint64_t>(seed));

  VariantPack pack;
  Result<AutotuneResult> r = Status(ErrorCode::INTERNAL_ERROR, "autotune did not run");
  if (g->plan_target().has_device()) {
    const int ordinal = std::max(g->plan_target().device->ordinal, 0);
    auto device = Device::open(ordinal);
    if (device.is_bad()) return fail(cmd, "device " + std::to_string(ordinal) + ": " + device.status().to_string());
    std::vector<DeviceMemory> dev;
    for (const HostTensor& b : bufs) {
      auto d = DeviceMemory::allocate(*device, std::max<std::size_t>(b.bytes.size(), 1));
      if (d.is_bad()) return fail(cmd, d.status().to_string());
      if (Status s = d->upload(b.bytes.data(), b.bytes.size()); s.is_bad()) return fail(cmd, s.to_string());
      pack.set(b.tensor->get_uid(), d->data());
      dev.push_back(std::move(*d));
    }
    auto ws = DeviceMemory::allocate(*device, static_cast<std::size_t>(workspace_bytes));
    if (ws.is_bad()) return fail(cmd, ws.status().to_string());
    const DeviceHandle handle(*device);
    r = g->autotune(pack, Workspace{ws->data(), workspace_bytes}, &handle, options);
  } else {
    for (HostTensor& b : bufs) pack.set(b.tensor->get_uid(), b.bytes.data());
    std::vector<char> ws(static_cast<std::size_t>(workspace_bytes));
    r = g->autotune(pack, Workspace{workspace_bytes > 0 ? ws.data() : nullptr, workspace_bytes}, nullptr, options);
  }
  if (r.is_bad()) return fail(cmd, "'" + clip(path) + "': " + r.status().to_string());

  std::printf("graph '%s': the first %lld plan(s), %d round(s) each, median per execute\n",
              clip(g->context().name).c_str(), static_cast<long long>(options.top_k), options.rounds);
  std::printf("%-5s %-9s %-12s %-6s %-15s %s\n", "index", "engine_id", "median_ms", "rounds", "timer", "plan");
  for (const AutotuneEntry& e : r->entries) {
    if (!e.skipped.empty()) {
      std::printf("%-5lld %-9lld %-12s %-6s %-15s %s\n      # skipped: %s\n", static_cast<long long>(e.index),
                  static_cast<long long>(e.engine_id), "-", "-", e.timer.c_str(), e.name.c_str(), e.skipped.c_str());
      continue;
    }
    std::printf("%-5lld %-9lld %-12.4f %-6d %-15s %s%s\n", static_cast<long long>(e.index),
                static_cast<long long>(e.engine_id), e.median_ms, e.rounds, e.timer.c_str(), e.name.c_str(),
                e.index == r->selected ? "  <- fastest" : "");
  }
  std::printf("selected plan %lld %s\n", static_cast<long long>(r->selected),
              g->get_plan_name_at_index(r->selected).value().c_str());
  if (r->recorded)
    std::printf("recorded in %s: a later plan of this graph on this target lists it first\n", r->record_path.c_str());
  else
    std::printf("not recorded: %s\n", r->record_note.c_str());
  return 0;
}

}  // namespace opgraph::cli
