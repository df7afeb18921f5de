// api/graph_autotune.cpp — Graph::autotune: time the first k plans on the
// caller's buffers, select the fastest, record the choice (docs/autotune.md).
//
// Timing: a plan whose engine needs a device is bracketed by CUDA events on
// the call's stream (runtime/stream_timer.h, the one door to the driver's
// event calls); a host plan by the steady clock around execute. Rounds are
// interleaved (round r times every plan once, in list order) so a drift of
// the machine (clocks, another process) spreads over all plans instead of
// favouring whichever ran last; the median of a plan's rounds decides.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "api/plan_choices.h"
#include "api/plan_state.h"
#include "opgraph/graph.h"
#include "runtime/stream_timer.h"

namespace opgraph {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Candidate {
  std::size_t entry = 0;  // into result.entries
  bool device = false;    // timed with events
  std::vector<double> samples;
};

}  // namespace

Result<AutotuneResult> Graph::autotune(const VariantPack& pack, Workspace workspace, const Handle* handle,
                                       const AutotuneOptions& options) {
  OPGRAPH_CHECK(check_planned(*st_, *this));
  if (options.top_k < 1 || options.rounds < 1 || options.warmup < 0)
    return Status(ErrorCode::INVALID_VALUE, "autotune: top_k and rounds must be at least 1 and warmup at least 0 (got "
                                                "top_k " + std::to_string(options.top_k) + ", rounds " +
                                                std::to_string(options.rounds) + ", warmup " +
                                                std::to_string(options.warmup) + ")");
  auto kinds = buffer_kinds(pack);
  if (kinds.is_bad()) return kinds.status();
  // Normalised once (unless the caller prepared it): the rounds time the plans' execute alone.
  VariantPack own;
  if (!pack.normalized()) OPGRAPH_CHECK(prepare_variant_pack(pack, own));
  const VariantPack& prepared = pack.normalized() ? pack : own;
  auto ctx = ExecutionContext::make(handle, workspace);
  if (ctx.is_bad()) return ctx.status();

  AutotuneResult result;
  std::vector<Candidate> cands;
  for (std::size_t i = 0; i < st_->plans.size() && static_cast<std::int64_t>(result.entries.size()) < options.top_k;
       ++i) {
    const PlanRecord& p = st_->plans[i];
    if (!p.deselected.empty()) continue;
    AutotuneEntry e;
    e.index = static_cast<std::int64_t>(i);
    e.engine_id = p.config.engine_id;
    e.knobs = p.engine->knobs_to_public(p.config.knobs);
    e.name = p.name;
    const bool device = p.engine->capabilities().needs_device;
    e.timer = device ? "cuda events" : "host wall clock";
    if (device && kinds->host) {
      e.skipped = "the pack holds host buffers and this plan runs on a device";
    } else if (!device && (kinds->device || (!kinds->host && !st_->heuristics_may_take(i)))) {
      e.skipped = "this plan runs host buffers only and the pack's buffers are for the device";
    } else if (Status s = build_plan_at_index(e.index); s.is_bad()) {
      e.skipped = "build: " + s.message();
    } else if (auto ws = get_workspace_size_plan_at_index(e.index); ws.is_bad() || *ws > workspace.bytes) {
      e.skipped = ws.is_bad() ? ws.status().message()
                              : "needs " + std::to_string(*ws) + " workspace bytes, the call gives " +
                                    std::to_string(workspace.bytes);
    } else {
      cands.push_back(Candidate{result.entries.size(), device, {}});
    }
    result.entries.push_back(std::move(e));
  }

  std::unique_ptr<runtime::StreamTimer> timer;  // opened on the first device plan
  auto skip = [&](Candidate& c, const std::string& why) {
    result.entries[c.entry].skipped = why;
    c.samples.clear();
  };
  auto alive = [&](const Candidate& c) { return result.entries[c.entry].skipped.empty(); };
  // One execute of `c`, timed; a failure skips the plan.
  auto run = [&](Candidate& c, bool timed) {
    const AutotuneEntry& e = result.entries[c.entry];
    if (c.device && !timer) {
      const DeviceProperties* dev = handle && handle->device() ? handle->device()
                                    : st_->target.device      ? &*st_->target.device
                                                              : nullptr;
      auto t = runtime::StreamTimer::open(dev ? std::max(dev->ordinal, 0) : 0);
      if (t.is_bad()) return skip(c, "timer: " + t.status().message());
      timer = std::move(t.value());
    }
    if (c.device) {
      if (Status s = timer->start(ctx->stream); s.is_bad()) return skip(c, "timer: " + s.message());
    }
    const auto t0 = std::chrono::steady_clock::now();
    Status s = execute_plan_at_index(prepared, workspace, e.index, handle);
    const auto t1 = std::chrono::steady_clock::now();
    if (s.is_bad()) return skip(c, "execute: " + s.message());
    double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    if (c.device) {
      if (Status st = timer->stop(ctx->stream); st.is_bad()) return skip(c, "timer: " + st.message());
      auto el = timer->elapsed_ms();
      if (el.is_bad()) return skip(c, "timer: " + el.status().message());
      ms = *el;
    }
    if (timed) c.samples.push_back(ms);
  };
  for (Candidate& c : cands)
    for (int w = 0; w < options.warmup && alive(c); ++w) run(c, false);
  for (int r = 0; r < options.rounds; ++r)
    for (Candidate& c : cands)
      if (alive(c)) run(c, true);

  double best = 0;
  for (Candidate& c : cands) {
    if (!alive(c) || c.samples.empty()) continue;
    AutotuneEntry& e = result.entries[c.entry];
    e.median_ms = median(c.samples);
    e.rounds = static_cast<int>(c.samples.size());
    if (result.selected < 0 || e.median_ms < best) {
      result.selected = e.index;
      best = e.median_ms;
    }
  }
  if (result.selected < 0) {
    std::string why;
    for (const auto& e : result.entries) why += (why.empty() ? "" : "; ") + e.name + ": " + e.skipped;
    return Status(ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED,
                  "autotune: no plan of graph '" + context().name + "' could be timed" +
                      (why.empty() ? std::string(" (every plan is deselected)") : ": " + why));
  }
  OPGRAPH_CHECK(select_plan(result.selected));

  const runtime::PlanChoiceStore store = plan_choice_store(st_->target);
  auto key = plan_choice_key(*this, *st_);
  if (key.is_good()) result.record_path = store.record_path(*key).string();
  if (!options.persist) {
    result.record_note = "not asked to record (AutotuneOptions::persist is false)";
  } else if (key.is_bad()) {
    result.record_note = "the graph has no key: " + key.status().message();
  } else {
    const AutotuneEntry& w = result.entries[std::find_if(result.entries.begin(), result.entries.end(), [&](const auto& e) {
                                              return e.index == result.selected;
                                            }) - result.entries.begin()];
    runtime::PlanChoice choice;
    choice.engine_id = w.engine_id;
    choice.knobs = knobs_to_string(w.knobs);
    choice.name = w.name;
    choice.median_ms = w.median_ms;
    choice.rounds = w.rounds;
    Status s = store.record(*key, choice);
    result.recorded = s.is_good();
    if (s.is_bad()) result.record_note = s.message();
  }
  return result;
}

}  // namespace opgraph
