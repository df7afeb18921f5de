// engines/reference_adapter/reference_engine.cpp — Engine over reference::execute.
#include "engines/reference_adapter/reference_engine.h"

#include <map>

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
  ReferencePlan(const OpGraph& g, const DeclaredLayout& layout)
      : graph_(&g), table_(layout, OperandNeeds{true, true, true, MemoryKind::HOST, 0}, "reference") {}
  std::int64_t workspace_size() const override { return 0; }

  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (ctx.device)
      return {ErrorCode::INVALID_VALUE, "engine reference executes host buffers; this call's handle drives device '" +
                                            ctx.device->name + "' (staging device buffers needs the runtime layer)"};
    if (!table_.accepts(pack)) return table_.explain(pack);
    std::map<std::int64_t, reference::HostBuffer> buffers;
    const DeclaredLayout& layout = *pack.layout();
    for (const OperandRow& r : table_.rows())
      buffers.emplace(layout.slot(static_cast<std::size_t>(r.position)).uid,
                      reference::HostBuffer{pack.operand(static_cast<std::size_t>(r.position)).data});
    return reference::execute(*graph_, buffers);
  }

 private:
  const OpGraph* graph_;
  OperandTable table_;
};

class ReferenceEngine final : public Engine {
 public:
  explicit ReferenceEngine(EngineIdentity id) : Engine(std::move(id)) { caps_.needs_device = false; }
  const Capabilities& capabilities() const override { return caps_; }

  Status check_support(const OpGraph& g, const PlanContext&) const override {
    for (const auto& n : g.nodes())
      if (!reference::find_kernel(n->op()))
        return {ErrorCode::GRAPH_NOT_SUPPORTED,
                "engine reference: op '" + std::string(n->op()) + "' (node '" + n->name() + "') has no reference kernel"};
    return Status::ok();
  }

  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph& g, const PlanConfig&,
                                                   const PlanContext& ctx) const override {
    OPGRAPH_CHECK(check_support(g, ctx));
    if (!ctx.layout) return Status(ErrorCode::INTERNAL_ERROR, "engine reference: built without the graph's layout");
    return std::unique_ptr<CompiledPlan>(std::make_unique<ReferencePlan>(g, *ctx.layout));
  }

 private:
  Capabilities caps_;
};

}  // namespace

std::unique_ptr<Engine> make_reference_engine(EngineIdentity identity) {
  return std::make_unique<ReferenceEngine>(std::move(identity));
}

}  // namespace opgraph::engines
