// engines/reference_adapter/reference_engine.cpp — Engine over reference::execute.
#include "engines/reference_adapter/reference_engine.h"

#include <algorithm>
#include <span>
#include <string>
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
  // `json`: the frozen graph's canonical JSON, the source of the per-call copy an
  // execute-time shape override re-infers ("" : overrides are declined).
  ReferencePlan(const OpGraph& g, const DeclaredLayout& layout, reference::Prepared prepared, std::string json)
      : graph_(&g),
        table_(layout, OperandNeeds{true, true, true, MemoryKind::HOST, 0}, "reference"),
        prepared_(std::move(prepared)),
        pos_(positions(layout, prepared_)),
        json_(std::move(json)) {
    table_.decline_overrides(
        "reference: execute-time shape overrides need the graph's canonical JSON, which this plan could not read");
  }
  std::int64_t workspace_size() const override { return 0; }

  // Per call: one pointer per prepared tensor, read from its position.
  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (ctx.device)
      return {ErrorCode::INVALID_VALUE, "engine reference executes host buffers; this call's handle drives device '" +
                                            ctx.device->name + "' (staging device buffers needs the runtime layer)"};
    if (pack.has_overrides() && !json_.empty()) return execute_overridden(pack);
    if (!table_.accepts(pack)) return table_.explain(pack);
    std::vector<void*> data(pos_.size(), nullptr);
    for (std::size_t i = 0; i < pos_.size(); ++i)
      if (pos_[i] >= 0) data[i] = pack.operand(static_cast<std::size_t>(pos_[i])).data;
    const std::span<void* const> all(data);
    const std::size_t inputs = prepared_.inputs.size();
    return reference::run(*graph_, prepared_, all.first(inputs), all.subspan(inputs));
  }

 private:
  // Execute-time shape overrides (docs/dynamic_shapes.md): a copy of the graph
  // with the overridden operands' extents and strides set, validated again (shape
  // inference re-derives every other tensor), checked against the call's buffers
  // (an operand whose extents change at the new shape must be overridden to them),
  // prepared and run. Per call: a parse, a validation and a prepare (the reference
  // is a float64 oracle; its cost is not the point). Refusals name the operand,
  // its port and the rule; nothing is written.
  Status execute_overridden(const VariantPack& pack) const {
    if (!table_.accepts_overridden(pack)) return table_.explain_overridden(pack);
    const DeclaredLayout& layout = *pack.layout();
    auto parsed = OpGraph::deserialize(json_);
    if (parsed.is_bad())
      return {ErrorCode::INTERNAL_ERROR, "engine reference: the plan's graph JSON does not parse: " +
                                             parsed.status().message()};
    OpGraph& copy = parsed.value();
    auto who = [&](const DeclaredSlot& s) {
      return "operand '" + s.tensor->get_name() + "' (uid " + std::to_string(s.uid) + ", " + s.port + ")";
    };
    for (std::size_t p = 0; p < layout.size(); ++p) {
      const OperandBuffer& b = pack.operand(p);
      if (!b.overridden) continue;
      const DeclaredSlot& s = layout.slot(p);
      if (s.dtype == DataType::FP4_E2M1)
        return {ErrorCode::GRAPH_NOT_SUPPORTED, "engine reference: " + who(s) +
                                                    ": execute-time shape overrides of fp4 tensors are not taken; "
                                                    "nothing was launched"};
      TensorPtr t = copy.tensor_by_uid(s.uid);
      if (!t) return {ErrorCode::INTERNAL_ERROR, "engine reference: uid " + std::to_string(s.uid) + " is not in the copy"};
      t->set_dim({b.dims.begin(), b.dims.begin() + b.rank});
      t->set_stride({b.strides.begin(), b.strides.begin() + b.rank});
    }
    if (Status v = copy.validate(); v.is_bad())
      return {ErrorCode::INVALID_VARIANT_PACK,
              "engine reference: the graph does not validate at the overridden extents (override every operand an "
              "axis spans, consistently): " + v.message() + "; nothing was launched"};
    for (std::size_t p = 0; p < layout.size(); ++p) {
      const OperandBuffer& b = pack.operand(p);
      const DeclaredSlot& s = layout.slot(p);
      const TensorPtr t = copy.tensor_by_uid(s.uid);
      const auto& d = t->get_dim();
      const std::int64_t* want = b.overridden ? b.dims.data() : s.dims.data();
      if (static_cast<int>(d.size()) != s.rank || !std::equal(d.begin(), d.end(), want)) {
        std::string got;
        for (std::size_t i = 0; i < d.size(); ++i) got += (i ? ", " : "") + std::to_string(d[i]);
        return {ErrorCode::INVALID_VARIANT_PACK,
                "engine reference: " + who(s) + ": at the overridden extents its extents are [" + got +
                    "], not its buffer's (" + (b.overridden ? "its override" : "its declaration") +
                    "); override it to [" + got + "]; nothing was launched"};
      }
    }
    auto prepared = reference::prepare(copy);
    if (prepared.is_bad()) return prepared.status();
    std::vector<void*> data;
    data.reserve(prepared->inputs.size() + prepared->outputs.size());
    for (const auto* ts : {&prepared->inputs, &prepared->outputs})
      for (const Tensor* t : *ts) {
        const std::int64_t i = layout.index_of(t->get_uid());
        data.push_back(i >= 0 ? pack.operand(static_cast<std::size_t>(i)).data : nullptr);
      }
    const std::span<void* const> all(data);
    const std::size_t inputs = prepared->inputs.size();
    return reference::run(copy, *prepared, all.first(inputs), all.subspan(inputs));
  }

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
  std::string json_;               // the frozen graph's canonical JSON ("" : overrides declined)
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
    // A frozen graph's serialize() assigns nothing (its uids are final): it only reads.
    std::string json;
    if (g.is_frozen())
      if (auto j = const_cast<OpGraph&>(g).serialize(); j.is_good()) json = std::move(j.value());
    return std::unique_ptr<CompiledPlan>(
        std::make_unique<ReferencePlan>(g, *ctx.layout, std::move(prepared.value()), std::move(json)));
  }

 private:
  Capabilities caps_;
};

}  // namespace

std::unique_ptr<Engine> make_reference_engine(EngineIdentity identity) {
  return std::make_unique<ReferenceEngine>(std::move(identity));
}

}  // namespace opgraph::engines
