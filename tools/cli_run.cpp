// tools/cli_run.cpp — `opgraph run`: execute one plan on random inputs and compare
// every output with the reference engine.
//
// The plan: --plan I (an index of the ranked list), or --engine ID --knobs K=V,...
// (a replay), else what build_plans chooses. Inputs come from a fixed seed
// (cli_inputs.h). The reference runs the same inputs through run_reference
// into separate output buffers. Tolerance per output dtype, |got - ref| <=
// atol + rtol * |ref|: FLOAT/DOUBLE 1e-5, HALF 2e-3, BFLOAT16 1e-2, fp8 1.25e-1,
// fp4 0.5, integer/boolean exact. Exit: 0 all within tolerance, 3 otherwise.
// With --device DEV.json a device plan (any but the reference) runs on the
// device DEV.json names ("ordinal", device 0 without one; cli_run_device.h).
//
// When the selected plan IS the reference (no GPU, no --device, or the only plan
// that built: `run` turns the graph's host fallback on) there is no second engine: the run says so plainly and prints no
// error figures, instead of comparing the reference with itself ("max_abs_err 0"
// read as a passed check). Exit 0: the run itself succeeded.
//
// Nothing is allocated before the layout is checked (cli_layout.h): an extent,
// stride or byte count that overflows is an error line; so is a run whose host
// buffers, reference copies and workspace together exceed --max-bytes (default
// 1 GiB), naming the total and the largest tensor.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "cli_common.h"
#include "cli_inputs.h"
#include "cli_layout.h"
#include "cli_run_device.h"
#include "opgraph/device.h"
#include "opgraph/engine_info.h"
#include "opgraph/reference.h"

namespace opgraph::cli {
namespace {

double tolerance(DataType t) {
  switch (t) {
    case DataType::FLOAT:
    case DataType::DOUBLE: return 1e-5;
    case DataType::HALF: return 2e-3;
    case DataType::BFLOAT16: return 1e-2;
    case DataType::FP8_E4M3:
    case DataType::FP8_E5M2:
    case DataType::FP8_E8M0: return 1.25e-1;
    case DataType::FP4_E2M1: return 0.5;
    default: return 0.0;
  }
}

struct Err {
  double abs = 0, rel = 0;
  bool ok = true;
};

Err compare(const Tensor& t, const void* got, const void* ref) {
  Err e;
  const double tol = tolerance(t.get_data_type());
  for_each_offset(t, [&](std::int64_t off) {
    double g = read_element(got, off, t.get_data_type());
    double r = read_element(ref, off, t.get_data_type());
    if (std::isnan(g) && std::isnan(r)) return;
    double a = std::fabs(g - r);
    if (std::isnan(a)) a = INFINITY;
    e.abs = std::max(e.abs, a);
    e.rel = std::max(e.rel, a / std::max(std::fabs(r), 1e-30));
    if (a > tol + tol * std::fabs(r)) e.ok = false;
  });
  return e;
}

// Non-finite values of an output (NaN, +-Inf) through its declared layout.
std::int64_t count_non_finite(const Tensor& t, const void* data) {
  std::int64_t n = 0;
  for_each_offset(t, [&](std::int64_t off) {
    if (!std::isfinite(read_element(data, off, t.get_data_type()))) ++n;
  });
  return n;
}

// Whether plan `index` runs on the reference engine (the manifest's universal row).
bool is_reference_plan(const Graph& g, std::int64_t index) {
  auto config = g.get_engine_and_knobs_at_index(index);
  if (config.is_bad()) return false;
  auto engine = engine_info(config->engine_id);
  return engine.is_good() && engine->universal;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  const std::string cmd = "run";
  auto args = parse_args(cmd, argc, argv,
                         {"--plan", "--engine", "--knobs", "--iters", "--seed", "--modes", "--device", "--max-bytes"}, {});
  if (!args) return 2;
  if (args->positional.size() != 1) return fail(cmd, "expected one graph file: opgraph run GRAPH.json", 2);
  if (args->has("--plan") && args->has("--engine")) return fail(cmd, "give --plan or --engine, not both", 2);
  if (args->has("--knobs") && !args->has("--engine")) return fail(cmd, "--knobs needs --engine", 2);
  auto modes = parse_modes(cmd, args->get("--modes"));
  if (!modes) return 2;
  std::int64_t iters = 1, seed = 0;
  if (auto s = args->get("--iters")) {
    auto v = parse_int(cmd, "--iters", *s);
    if (!v || *v == 0) return v ? fail(cmd, "--iters must be at least 1", 2) : 2;
    iters = *v;
  }
  if (auto s = args->get("--seed")) {
    auto v = parse_int(cmd, "--seed", *s);
    if (!v) return 2;
    seed = *v;
  }
  std::int64_t max_bytes = kDefaultMaxBytes;
  if (auto s = args->get("--max-bytes")) {
    auto v = parse_bytes(cmd, "--max-bytes", *s);
    if (!v) return 2;
    max_bytes = *v;
  }
  const std::string& path = args->positional[0];
  auto g = load_graph(cmd, path);
  if (!g) return 1;
  // Before planning: a layout whose arithmetic overflows is refused first, whatever an engine says of it.
  auto layout = layout_buffers(*g);
  if (layout.is_bad()) return fail(cmd, "'" + clip(path) + "': " + layout.status().message());
  if (!apply_device(cmd, *args, *g)) return 1;
  // A device target executes on its device: load the driver now, so the planning
  // that follows may query the cuDNN backend (it is not queried without libcuda).
  if (g->plan_target().has_device()) (void)device_count();

  if (auto e = args->get("--engine")) {
    auto id = parse_int(cmd, "--engine", *e);
    if (!id) return 2;
    auto knobs = knobs_from_string(args->get("--knobs").value_or(""));
    if (knobs.is_bad()) return fail(cmd, "--knobs: " + knobs.status().message(), 2);
    if (Status s = g->create_execution_plan(*id, knobs.value()); s.is_bad()) return fail(cmd, s.to_string());
  } else if (Status s = g->create_execution_plans(*modes); s.is_bad()) {
    return fail(cmd, "'" + clip(path) + "': " + s.to_string());
  }
  if (auto p = args->get("--plan")) {
    auto i = parse_int(cmd, "--plan", *p);
    if (!i) return 2;
    if (Status s = g->select_plan(*i); s.is_bad()) return fail(cmd, "--plan: " + s.message(), 2);
  }
  // `run` checks graphs: where no device engine accepts a device-planned graph, the
  // host reference runs (and the run says nothing was compared) instead of failing.
  g->set_host_fallback(true);
  if (Status s = g->build_plans(); s.is_bad()) return fail(cmd, s.to_string());
  auto selected = g->get_selected_plan_index();
  if (selected.is_bad()) return fail(cmd, selected.status().to_string());
  const std::int64_t index = *selected;
  const std::string name = g->get_plan_name_at_index(index).value();
  auto ws_bytes = g->get_workspace_size();
  if (ws_bytes.is_bad()) return fail(cmd, ws_bytes.status().to_string());
  const std::int64_t workspace_bytes = std::max<std::int64_t>(*ws_bytes, 0);

  // A second engine to compare with exists only when the plan is not the reference.
  const bool compared = !is_reference_plan(*g, index);
  if (Status s = check_cap(*layout, compared ? 2 : 1, workspace_bytes, max_bytes); s.is_bad())
    return fail(cmd, "'" + clip(path) + "': " + s.message());

  auto bufs = make_buffers(*g, *layout, static_cast<std::uint64_t>(seed));
  std::vector<HostTensor> ref;
  if (compared) ref = bufs;  // same inputs; outputs written separately by the reference
  VariantPack pack;
  std::map<std::int64_t, void*> ref_pack;
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    pack.set(bufs[i].tensor->get_uid(), bufs[i].bytes.data());
    if (compared) ref_pack[ref[i].tensor->get_uid()] = ref[i].bytes.data();
  }
  std::vector<char> ws(static_cast<std::size_t>(workspace_bytes));
  Workspace workspace{workspace_bytes > 0 ? ws.data() : nullptr, workspace_bytes};

  double best_ms = INFINITY, total_ms = 0;
  // A device target runs device plans on its device; the reference runs on the host.
  const bool on_device = g->plan_target().has_device() && compared;
  if (on_device) {
    if (Status s = run_on_device(*g, bufs, iters, &best_ms, &total_ms); s.is_bad())
      return fail(cmd, name + " on the device: " + s.to_string());
  }
  for (std::int64_t it = 0; it < iters && !on_device; ++it) {
    auto t0 = std::chrono::steady_clock::now();
    if (Status s = g->execute(pack, workspace); s.is_bad()) return fail(cmd, name + ": " + s.to_string());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best_ms = std::min(best_ms, ms);
    total_ms += ms;
  }
  if (compared)
    if (Status s = run_reference(*g, ref_pack); s.is_bad()) return fail(cmd, "reference: " + s.to_string());

  std::printf("graph '%s': plan %lld %s, %lld iter(s), seed %lld\n", clip(g->context().name).c_str(),
              static_cast<long long>(index), name.c_str(), static_cast<long long>(iters), static_cast<long long>(seed));
  std::printf("time: mean %.3f ms, min %.3f ms per execute (host wall clock)\n", total_ms / iters, best_ms);
  if (!compared) {
    std::printf("not compared: the reference engine ran with no second engine to compare with (%s)\n",
                g->plan_target().has_device()
                    ? "the selected plan is the reference itself"
                    : "planning targeted the host, where the reference is the only engine; pass --device DEV.json "
                      "on a machine with a GPU to check a GPU plan against it");
    for (const HostTensor& b : bufs) {
      if (b.is_input) continue;
      const Tensor& t = *b.tensor;
      std::printf("output '%s' %s %s: not compared (%lld non-finite values)\n", clip(t.get_name()).c_str(),
                  dims_to_string(t.get_dim()).c_str(), std::string(to_string(t.get_data_type())).c_str(),
                  static_cast<long long>(count_non_finite(t, b.bytes.data())));
    }
    return 0;
  }
  bool all_ok = true;
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    if (bufs[i].is_input) continue;
    const Tensor& t = *bufs[i].tensor;
    Err e = compare(t, bufs[i].bytes.data(), ref[i].bytes.data());
    all_ok = all_ok && e.ok;
    std::printf("output '%s' %s %s: max_abs_err %.3g max_rel_err %.3g (tol %.3g) %s\n", clip(t.get_name()).c_str(),
                dims_to_string(t.get_dim()).c_str(), std::string(to_string(t.get_data_type())).c_str(), e.abs, e.rel,
                tolerance(t.get_data_type()), e.ok ? "OK" : "EXCEEDS");
  }
  if (!all_ok) return fail(cmd, "'" + clip(path) + "': an output exceeds its tolerance against the reference", 3);
  return 0;
}

}  // namespace opgraph::cli
