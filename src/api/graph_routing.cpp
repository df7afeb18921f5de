// api/graph_routing.cpp — which plan runs a call's buffers, and the host fallback
// policy (graph.h, "routing"). The one place the rules live: the Python binding and
// C++ callers both ask Graph::route.
#include "api/plan_state.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

// "uid 3 (tensor 'a')": the operand an error names.
std::string operand_label(const OpGraph& g, std::int64_t uid) {
  std::string s = "uid " + std::to_string(uid);
  if (TensorPtr t = g.tensor_by_uid(uid); t && !t->get_name().empty()) s += " (tensor '" + t->get_name() + "')";
  return s;
}

// The handle one call runs with: the caller's stream, and exactly the device the route
// drives (null for a host call, even when the caller's handle has a device), so an
// engine refuses memory of the wrong kind instead of reading it.
class RoutedHandle final : public Handle {
 public:
  RoutedHandle(const Handle* inner, const DeviceProperties* device) : inner_(inner), device_(device) {}
  Result<void*> stream() const override { return inner_ ? inner_->stream() : Result<void*>(nullptr); }
  const DeviceProperties* device() const override { return device_; }

 private:
  const Handle* inner_;
  const DeviceProperties* device_;
};

}  // namespace

std::int64_t Graph::host_plan_index() const { return st_->planned ? st_->host_plan : -1; }

Graph& Graph::set_host_fallback(bool allow) {
  st_->host_fallback = allow;
  return *this;
}

bool Graph::host_fallback() const noexcept { return st_->host_fallback; }

Result<Graph::BufferKinds> Graph::buffer_kinds(const VariantPack& pack) const {
  OPGRAPH_CHECK(check_planned(*st_, *this));
  VariantPack own;
  const VariantPack* use = &pack;
  if (!st_->layout->prepared(pack)) {
    OPGRAPH_CHECK(prepare_variant_pack(pack, own));
    use = &own;
  }
  BufferKinds k;
  const auto operands = use->operands();
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const OperandBuffer& b = operands[i];
    if (!b.bound) continue;
    k.host |= b.memory == MemoryKind::HOST;
    if (b.memory == MemoryKind::DEVICE && !k.device) {
      k.device = true;
      k.first_device_uid = st_->layout->slot(i).uid;
    }
  }
  return k;
}

Result<Graph::Route> Graph::route(const BufferKinds& kinds, std::int64_t index, const Handle* handle) {
  const PlanTarget& target = st_->target;
  if (kinds.device && !target.has_device())
    return Status(ErrorCode::INVALID_VARIANT_PACK,
                  "variant pack entry for " + operand_label(*this, kinds.first_device_uid) +
                      " is device memory but the graph was planned for the host (no device); plan it for the "
                      "device (set_device_properties, or a handle on the device) to run device buffers");
  // A call on the planned device whose handle drives another one is refused: its
  // stream belongs to that device, and a plan built for one device never runs on
  // another (both ordinals known: a target or handle made without a device, -1,
  // names none).
  if (kinds.device && handle && handle->device() && handle->device()->ordinal >= 0 && target.device->ordinal >= 0 &&
      handle->device()->ordinal != target.device->ordinal)
    return Status(ErrorCode::INVALID_CUDA_DEVICE,
                  "the call's handle drives device " + std::to_string(handle->device()->ordinal) +
                      " but the graph was planned for device " + std::to_string(target.device->ordinal) +
                      "; use a handle on device " + std::to_string(target.device->ordinal) +
                      " (or plan a graph for the other device)");
  Route r;
  // The device this call drives: the target's for device buffers, none for host
  // buffers (even with a device handle), the handle's for bare addresses.
  if (kinds.device) r.device = &*target.device;
  else if (!kinds.host && handle) r.device = handle->device();
  if (index >= 0) {
    OPGRAPH_CHECK(check_index(*st_, *this, index));
    r.index = index;
  } else {
    auto selected = get_selected_plan_index();
    if (selected.is_bad()) return selected.status();
    r.index = selected.value();
  }
  if (!target.has_device() || !(kinds.device || kinds.host)) return r;
  const std::int64_t host = st_->host_plan;
  if (kinds.device && r.index == host)
    return Status(ErrorCode::INVALID_VARIANT_PACK,
                  "variant pack entry for " + operand_label(*this, kinds.first_device_uid) +
                      " is device memory but the plan to run, " + st_->plans[static_cast<std::size_t>(host)].name +
                      ", executes host buffers (device buffers are never staged); select a GPU plan");
  // Host buffers on a graph planned for a device run on the host plan (built on first use).
  // A published plan is read without the lock (LivePlan), so a steady-state call takes none.
  if (!kinds.device && index < 0 && host >= 0 && r.index != host) {
    if (!st_->plans[static_cast<std::size_t>(host)].live.get()) OPGRAPH_CHECK(build_plan_at_index(host));
    r.index = host;
  }
  return r;
}

Status Graph::execute_routed(const VariantPack& pack, const BufferKinds& kinds, Workspace workspace,
                             const Handle* handle, std::int64_t index) {
  auto r = route(kinds, index, handle);
  if (r.is_bad()) return r.status();
  const bool any_handle = handle || r.value().device;
  RoutedHandle h(handle, r.value().device);
  return execute_plan_at_index(pack, workspace, r.value().index, any_handle ? &h : nullptr);
}

Status Graph::execute_routed(const VariantPack& pack, Workspace workspace, const Handle* handle, std::int64_t index) {
  OPGRAPH_CHECK(check_planned(*st_, *this));
  auto kinds = buffer_kinds(pack);
  if (kinds.is_bad()) return kinds.status();
  return execute_routed(pack, kinds.value(), workspace, handle, index);
}

}  // namespace opgraph
