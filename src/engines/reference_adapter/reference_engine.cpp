// engines/reference_adapter/reference_engine.cpp — Engine over reference::execute.
#include "engines/reference_adapter/reference_engine.h"

#include <span>
#include <vector>

#include "engines/reference/executor.h"
#include "engines/reference/ref_kernel.h"
#include "exec/operand_table.h"
#include "opgraph/op_graph.h"

namespace opgraph::engines {
namespace {

class ReferencePlan final : public CompiledPlan {
 public:
  // The reference reads every operand through its declaration (declared extents,
  // strides and dtype, host memory), so that is what its operand table asks for.
  // What depends on the graph alone (kernels, the tensors read and written, and
  // each one's position in the normalised pack) is decided here, once.
  ReferencePlan(const OpGraph& g, const DeclaredLayout& layout, reference::Prepared prepared)
      : graph_(&g),
        table_(layout, OperandNeeds{true, true, true, MemoryKind::HOST, 0}, "reference"),
        prepared_(std::move(prepared)),
        pos_(positions(layout, prepared_)) {
    table_.decline_overrides(
        "reference: execute-time shape overrides need the graph re-inferred at the new extents (every tensor, "
        "virtual ones included, is read through its declaration); plan a graph of the new shape");
  }
  std::int64_t workspace_size() const override { return 0; }

  // Per call: one pointer per prepared tensor, read from its position.
  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (ctx.device)
      return {ErrorCode::INVALID_VALUE, "engine reference executes host buffers; this call's handle drives device '" +
                                            ctx.device->name + "' (staging device buffers needs the runtime layer)"};
    if (!table_.accepts(pack)) return table_.explain(pack);
    std::vector<void*> data(pos_.size(), nullptr);
    for (std::size_t i = 0; i < pos_.size(); ++i)
      if (pos_[i] >= 0) data[i] = pack.operand(static_cast<std::size_t>(pos_[i])).data;
    const std::span<void* const> all(data);
    const std::size_t inputs = prepared_.inputs.size();
    return reference::run(*graph_, prepared_, all.first(inputs), all.subspan(inputs));
  }

 private:
  // Each prepared tensor's position in the layout, inputs then outputs; -1 where it has
  // none (pass-by-value: not read through a buffer; anything else reads as a missing
  // buffer, as reference::execute says).
  static std::vector<std::int64_t> positions(const DeclaredLayout& layout, const reference::Prepared& p) {
    std::vector<std::int64_t> pos;
    pos.reserve(p.inputs.size() + p.outputs.size());
    for (const auto* ts : {&p.inputs, &p.outputs})
      for (const Tensor* t : *ts) pos.push_back(layout.index_of(t->get_uid()));
    return pos;
  }

  const OpGraph* graph_;
  OperandTable table_;
  reference::Prepared prepared_;
  std::vector<std::int64_t> pos_;  // per prepared tensor: inputs, then outputs
};

class ReferenceEngine final : public Engine {
 public:
  explicit ReferenceEngine(EngineIdentity id) : Engine(std::move(id)) { caps_.needs_device = false; }
  const Capabilities& capabilities() const override { return caps_; }

  Status check_support(const OpGraph& g, const PlanContext&) const override {
    for (const auto& n : g.nodes())
      if (!reference::find_kernel(n->spec()))
        return {ErrorCode::GRAPH_NOT_SUPPORTED,
                "engine reference: op '" + std::string(n->op()) + "' (node '" + n->name() + "') has no reference kernel"};
    return Status::ok();
  }

  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph& g, const PlanConfig&,
                                                   const PlanContext& ctx) const override {
    OPGRAPH_CHECK(check_support(g, ctx));
    if (!ctx.layout) return Status(ErrorCode::INTERNAL_ERROR, "engine reference: built without the graph's layout");
    auto prepared = reference::prepare(g);
    if (prepared.is_bad()) return prepared.status();
    return std::unique_ptr<CompiledPlan>(std::make_unique<ReferencePlan>(g, *ctx.layout, std::move(prepared.value())));
  }

 private:
  Capabilities caps_;
};

}  // namespace

std::unique_ptr<Engine> make_reference_engine(EngineIdentity identity) {
  return std::make_unique<ReferenceEngine>(std::move(identity));
}

}  // namespace opgraph::engines
