// tests/exec/exec_support.h — what the execute-path tests share: a capture engine
// (its plan copies the normalised pack it was handed, so a test can read what
// Graph::execute produced) and the manifest that offers it as the only engine.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "opgraph/engine.h"
#include "opgraph/graph.h"
#include "plan/manifest.h"

namespace opgraph::exec_test {

struct Captured {
  std::mutex mu;
  const DeclaredLayout* build_layout = nullptr;        // what build_plan was handed
  std::vector<const DeclaredLayout*> execute_layouts;  // per execute
  std::vector<OperandBuffer> last;                     // the last call's operands, by position
};

class CapturePlan final : public CompiledPlan {
 public:
  explicit CapturePlan(std::shared_ptr<Captured> c) : c_(std::move(c)) {}
  std::int64_t workspace_size() const override { return 0; }
  Status execute(const VariantPack& pack, const ExecutionContext&) const override {
    std::lock_guard<std::mutex> lock(c_->mu);
    c_->execute_layouts.push_back(pack.layout());
    c_->last.assign(pack.operands().begin(), pack.operands().end());
    return Status::ok();
  }

 private:
  std::shared_ptr<Captured> c_;
};

class CaptureEngine final : public Engine {
 public:
  CaptureEngine(EngineIdentity id, std::shared_ptr<Captured> c) : Engine(std::move(id)), c_(std::move(c)) {
    caps_.needs_device = false;
  }
  const Capabilities& capabilities() const override { return caps_; }
  Status check_support(const OpGraph&, const PlanContext&) const override { return Status::ok(); }
  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph&, const PlanConfig&,
                                                   const PlanContext& ctx) const override {
    c_->build_layout = ctx.layout;
    return std::unique_ptr<CompiledPlan>(std::make_unique<CapturePlan>(c_));
  }

 private:
  Capabilities caps_;
  std::shared_ptr<Captured> c_;
};

// A manifest whose only engine is the universal family's slot `name`, made by `factory`.
inline plan::Manifest one_engine_manifest(std::string name, plan::EngineFactory factory) {
  plan::Manifest m;
  m.universal.name = "universal";
  m.universal.block = 0;
  plan::EngineSlot s;
  s.name = std::move(name);
  s.factory = std::move(factory);
  m.universal.slots.push_back(std::move(s));
  return m;
}

inline plan::Manifest capture_manifest(std::shared_ptr<Captured> c) {
  return one_engine_manifest("capture",
                             [c](EngineIdentity id) { return std::make_unique<CaptureEngine>(std::move(id), c); });
}

}  // namespace opgraph::exec_test
