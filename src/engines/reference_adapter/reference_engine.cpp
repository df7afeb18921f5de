// engines/reference_adapter/reference_engine.cpp — Engine over reference::execute.
#include "engines/reference_adapter/reference_engine.h"

#include <map>

#include "engines/reference/executor.h"
#include "engines/reference/ref_kernel.h"
#include "opgraph/op_graph.h"

namespace opgraph::engines {
namespace {

class ReferencePlan final : public CompiledPlan {
 public:
  explicit ReferencePlan(const OpGraph& g) : graph_(&g) {}
  std::int64_t workspace_size() const override { return 0; }

  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (ctx.device)
      return {ErrorCode::INVALID_VALUE, "engine reference executes host buffers; this call's handle drives device '" +
                                            ctx.device->name + "' (staging device buffers needs the runtime layer)"};
    std::map<std::int64_t, reference::HostBuffer> buffers;
    for (const auto& [uid, b] : pack.buffers()) {
      if (b.described()) {
        TensorPtr t = graph_->tensor_by_uid(uid);
        if (t && (b.dims != t->get_dim() || (!b.strides.empty() && b.strides != t->get_stride())))
          return {ErrorCode::INVALID_VARIANT_PACK,
                  "engine reference: buffer for tensor '" + t->get_name() + "' (uid " + std::to_string(uid) +
                      ") describes other dims/strides than its declaration; the reference reads the declaration"};
      }
      buffers[uid] = reference::HostBuffer{b.data};
    }
    return reference::execute(*graph_, buffers);
  }

 private:
  const OpGraph* graph_;
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
    return std::unique_ptr<CompiledPlan>(std::make_unique<ReferencePlan>(g));
  }

 private:
  Capabilities caps_;
};

}  // namespace

std::unique_ptr<Engine> make_reference_engine(EngineIdentity identity) {
  return std::make_unique<ReferenceEngine>(std::move(identity));
}

}  // namespace opgraph::engines
