// tests/plan/fakes.h — stand-in engines, families and backend for dispatch tests.
//
// Stand-ins do no arithmetic: what dispatch is responsible for is reaching the
// right engine with the right (engine_id, knobs) and the caller's buffers. A
// stand-in's execute records which plan ran (engine id and knobs) in a shared log
// and writes its engine id into the buffer of uid 1, so a test can tell which
// plan an at-index call really reached. They enter planning through the same
// path production engines do: a manifest swapped in by ScopedManifest.
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "opgraph/engine.h"
#include "opgraph/graph.h"
#include "plan/manifest.h"

namespace opgraph::testing_fakes {

struct FakeSpec {
  std::vector<KnobDomain> knobs;
  Status support;                 // what check_support returns
  Status build;                   // what build_plan returns when support is OK
  std::int64_t workspace = 0;     // bytes
  bool needs_device = false;
  int sm_lo = 0;
  int sm_hi = INT_MAX;
  bool any_knobs = false;         // accept any knobs (a backend's engine)
  Analyzer reads = nullptr;        // an analyzer its check_support and mismatch read
  PlanNotes notes;                 // Capabilities::notes
  // Serialised form: 0 none (the default hook), 1 "fake-plan:<id>" loaded back
  // when the id matches, 2 serialize_backend refuses.
  int blob = 0;
};

struct FakeLog {
  std::vector<std::int64_t> checked;               // engine ids, per check_support call
  std::vector<std::pair<std::int64_t, Knobs>> built;
  std::vector<std::pair<std::int64_t, Knobs>> executed;
  std::vector<std::int64_t> loaded;                // engine ids, per accepted load_serialized
};

class FakePlan final : public CompiledPlan {
 public:
  FakePlan(std::int64_t id, Knobs k, std::int64_t ws, std::shared_ptr<FakeLog> log, int blob = 0)
      : id_(id), knobs_(std::move(k)), ws_(ws), log_(std::move(log)), blob_(blob) {}
  Result<std::string> serialize_backend() const override {
    if (blob_ == 2) return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "fake: this plan has no serialised form"};
    return blob_ == 1 ? "fake-plan:" + std::to_string(id_) : std::string();
  }
  std::int64_t workspace_size() const override { return ws_; }
  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (ctx.workspace.bytes < ws_) return {ErrorCode::INVALID_VALUE, "fake: workspace too small"};
    log_->executed.emplace_back(id_, knobs_);
    if (const OperandBuffer* b = pack.find(1)) *static_cast<std::int64_t*>(b->data) = id_;
    return Status::ok();
  }

 private:
  std::int64_t id_;
  Knobs knobs_;
  std::int64_t ws_;
  std::shared_ptr<FakeLog> log_;
  int blob_;
};

class FakeEngine final : public Engine {
 public:
  FakeEngine(EngineIdentity id, FakeSpec spec, std::shared_ptr<FakeLog> log)
      : Engine(std::move(id)), spec_(std::move(spec)), log_(std::move(log)) {
    caps_.knobs = spec_.knobs;
    caps_.needs_device = spec_.needs_device;
    caps_.sm_lo = spec_.sm_lo;
    caps_.sm_hi = spec_.sm_hi;
    caps_.notes = spec_.notes;
  }
  const Capabilities& capabilities() const override { return caps_; }
  std::optional<std::string> mismatch(const PlanContext& ctx) const override {
    if (spec_.reads) (void)ctx.facts->get(spec_.reads);
    return Engine::mismatch(ctx);
  }
  Status check_support(const OpGraph&, const PlanContext& ctx) const override {
    log_->checked.push_back(id());
    if (spec_.reads) (void)ctx.facts->get(spec_.reads);
    return spec_.support;
  }
  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph&, const PlanConfig& c,
                                                   const PlanContext&) const override {
    if (spec_.build.is_bad()) return spec_.build;
    log_->built.emplace_back(c.engine_id, c.knobs);
    return std::unique_ptr<CompiledPlan>(
        std::make_unique<FakePlan>(c.engine_id, c.knobs, spec_.workspace, log_, spec_.blob));
  }
  Result<std::unique_ptr<CompiledPlan>> load_serialized(const OpGraph& g, const PlanConfig& c, std::string_view blob,
                                                        const PlanContext& ctx) const override {
    if (spec_.blob != 1) return Engine::load_serialized(g, c, blob, ctx);
    if (blob != "fake-plan:" + std::to_string(c.engine_id))
      return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "fake: '" + std::string(blob) + "' is not a plan of this engine"};
    log_->loaded.push_back(c.engine_id);
    return std::unique_ptr<CompiledPlan>(
        std::make_unique<FakePlan>(c.engine_id, c.knobs, spec_.workspace, log_, spec_.blob));
  }
  Result<Knobs> knobs_from_public(const Knobs& k) const override {
    return spec_.any_knobs ? Result<Knobs>(k) : Engine::knobs_from_public(k);
  }
  std::string label(const PlanConfig& c) const override {
    return spec_.any_knobs ? name() + "_eng" + std::to_string(c.engine_id) : name();
  }

 private:
  FakeSpec spec_;
  Capabilities caps_;
  std::shared_ptr<FakeLog> log_;
};

inline plan::EngineSlot fake_slot(std::string name, FakeSpec spec, std::shared_ptr<FakeLog> log, bool opt_in = false) {
  plan::EngineSlot s;
  s.name = std::move(name);
  s.opt_in = opt_in;
  s.factory = [spec, log](EngineIdentity id) { return std::make_unique<FakeEngine>(std::move(id), spec, log); };
  return s;
}

inline plan::Family fake_family(std::string name, int block, std::vector<std::string> anchors) {
  plan::Family f;
  f.name = std::move(name);
  f.block = block;
  f.anchors = std::move(anchors);
  return f;
}

// A backend whose entries per mode are set by the test.
class FakeBackend final : public plan::BackendProvider {
 public:
  explicit FakeBackend(std::shared_ptr<FakeLog> log, int blob = 0) {
    FakeSpec s;
    s.any_knobs = true;
    s.blob = blob;
    engine_ = std::make_unique<FakeEngine>(EngineIdentity{0, "cudnn"}, s, std::move(log));
  }
  const Engine& engine() const override { return *engine_; }
  Result<std::vector<PlanConfig>> entries(const OpGraph&, HeurMode mode, const PlanContext&) override {
    ++queries;
    std::vector<PlanConfig> out;
    for (const auto& [m, c] : per_mode)
      if (m == mode) out.push_back(c);
    return out;
  }
  std::optional<PlanConfig> delegating_entry(const OpGraph&, const PlanContext&) override { return delegate; }

  std::vector<std::pair<HeurMode, PlanConfig>> per_mode;
  std::optional<PlanConfig> delegate;
  int queries = 0;

 private:
  std::unique_ptr<FakeEngine> engine_;
};

inline Status decline(const std::string& why) { return {ErrorCode::GRAPH_NOT_SUPPORTED, why}; }

// A small matmul graph: A[1,4,8] @ B[1,8,4] -> C (output).
inline void build_matmul(OpGraph& g) {
  g.set_name("mm").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({1, 4, 8}, DataType::FLOAT, "A");
  auto b = g.tensor({1, 8, 4}, DataType::FLOAT, "B");
  g.matmul(a, b)->set_output(true).set_name("C");
}

// A pointwise graph: relu(X) -> Y.
inline void build_relu(OpGraph& g) {
  g.set_name("pw").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({2, 3}, DataType::FLOAT, "X");
  g.relu(x)->set_output(true).set_name("Y");
}

inline DeviceProperties sm(int major, int minor) {
  DeviceProperties p;
  p.major = major;
  p.minor = minor;
  p.sm_count = 132;
  p.name = "fake";
  return p;
}

}  // namespace opgraph::testing_fakes
