// python/src/bind_plans.cpp — the planning half of the graph class: create_execution_plans,
// the at-index API, filters, build_plans, execute.
//
// execute(variant_pack, workspace=None, handle=None) normalises the dict ONCE, here, into
// the C++ VariantPack: keys are opgraph.tensor or int uids; values are anything
// normalize_buffer reads (buffers.h). A device buffer handed to a graph planned for the
// host is INVALID_VARIANT_PACK (ValueError) naming the uid, never a fault; element types follow the C++ variant pack's rules (an engine refuses a mismatch). Workspace: None, an int address (trusted to be large enough), or a buffer
// (its size in bytes is checked against the plan's need).
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "buffers.h"
#include "handle.h"

namespace opgraph::py {

#ifdef OPGRAPH_PY_HAS_PLANNING
namespace {

struct Normalized {
  VariantPack pack;
  bool device_buffers = false;  // some entry is device memory
};

Normalized to_variant_pack(const PyGraph& g, nb::dict d) {
  const bool device_plan = g.plan_target().has_device();
  Normalized n;
  VariantPack& pack = n.pack;
  for (auto [k, v] : d) {
    std::int64_t uid;
    Tensor* t = nullptr;
    if (nb::try_cast<Tensor*>(k, t) && t) uid = t->get_uid();
    else if (PyLong_Check(k.ptr())) uid = nb::cast<std::int64_t>(k);
    else throw nb::type_error("variant pack keys must be opgraph.tensor objects or int uids");
    Buffer b = normalize_buffer(v, uid, /*fast=*/true);
    (void)t;
    // Element types are judged by the C++ pack's rules (equal slot width reads as
    // the declared type: uint8 for packed fp4 / e4m3 scales), not here.
    // Planned for the host, only host engines hold plans: device memory would be read as host memory.
    if (b.device == BufferDevice::CUDA && !device_plan)
      throw StatusError{Status(ErrorCode::INVALID_VARIANT_PACK,
                               "variant pack entry for uid " + std::to_string(uid) +
                                   " is device memory but the graph was planned for the host (no device); "
                                   "plan for the device (sm_version / device_property) to run device buffers")};
    n.device_buffers |= b.device == BufferDevice::CUDA;
    // The memory kind travels in the OperandBuffer: an engine's operand table refuses the wrong kind.
    const MemoryKind mem = b.device == BufferDevice::CUDA   ? MemoryKind::DEVICE
                           : b.device == BufferDevice::HOST ? MemoryKind::HOST
                                                            : MemoryKind::UNKNOWN;
    if (b.dims.empty() && b.nbytes < 0) pack.set(uid, b.data);  // a bare address lends the declaration
    else pack.set(uid, OperandBuffer::make(b.data, b.dims, b.strides, b.dtype, mem));
  }
  return n;
}

// The handle one call runs with: the caller's stream; as device, the planning target's when the
// buffers are device memory (so a host engine refuses them instead of reading device memory).
class CallHandle final : public Handle {
 public:
  CallHandle(const Handle* inner, const DeviceProperties* device) : inner_(inner), device_(device) {}
  Result<void*> stream() const override { return inner_ ? inner_->stream() : Result<void*>(nullptr); }
  const DeviceProperties* device() const override { return device_ ? device_ : inner_ ? inner_->device() : nullptr; }

 private:
  const Handle* inner_;
  const DeviceProperties* device_;
};

Workspace to_workspace(nb::handle w) {
  if (w.is_none()) return {};
  if (is_torch_tensor(w))  // the hot path: no DLPack round trip for the usual torch workspace
    return {reinterpret_cast<void*>(nb::cast<std::uintptr_t>(w.attr("data_ptr")())),
            nb::cast<std::int64_t>(w.attr("nbytes"))};
  Buffer b = normalize_buffer(w, -1, /*fast=*/false);
  if (b.nbytes < 0) b.nbytes = INT64_MAX;  // a bare address: the caller vouches for its size
  return {b.data, b.nbytes};
}

const Handle* to_handle(nb::handle h, nb::handle graph) {
  if (h.is_none() && nb::hasattr(graph, "handle")) h = graph.attr("handle");
  if (h.is_none()) return nullptr;
  return nb::cast<PyHandle*>(h);
}

// execute / execute_plan_at_index (index < 0: the selected plan), normalising everything once.
void run(nb::handle self, nb::dict variant_pack, nb::handle workspace, nb::handle handle, std::int64_t index) {
  PyGraph& g = nb::cast<PyGraph&>(self);
  Normalized n = to_variant_pack(g, variant_pack);
  Workspace ws = to_workspace(workspace);
  const Handle* inner = to_handle(handle, self);
  const auto& target = g.plan_target();
  CallHandle call(inner, n.device_buffers && target.has_device() ? &*target.device : nullptr);
  const Handle* h = (inner || n.device_buffers) ? &call : nullptr;
  nb::gil_scoped_release release;
  throw_if(index < 0 ? g.execute(n.pack, ws, h) : g.execute_plan_at_index(n.pack, ws, index, h));
}

std::vector<HeurMode> to_modes(nb::handle modes) {
  std::vector<HeurMode> out;
  if (nb::isinstance<HeurMode>(modes)) return {nb::cast<HeurMode>(modes)};
  for (nb::handle m : modes) {
    if (nb::isinstance<nb::str>(m)) {
      auto parsed = heur_mode_from_string(nb::cast<std::string>(m));
      if (!parsed) throw StatusError{Status(ErrorCode::INVALID_VALUE, "unknown heur_mode '" + nb::cast<std::string>(m) + "'")};
      out.push_back(*parsed);
    } else {
      out.push_back(nb::cast<HeurMode>(m));
    }
  }
  return out;
}

nb::dict knobs_to_python(const Knobs& k) {
  nb::dict d;
  for (const auto& [type, value] : k) d[nb::cast(type)] = value;
  return d;
}

}  // namespace

void bind_plans(nb::module_& m, nb::class_<PyGraph>& cls) {
  (void)m;
  cls.def("_set_device_properties",
          [](PyGraph& g, const std::string& json) { g.set_device_properties(unwrap(DeviceProperties::from_json(json))); })
      .def("create_execution_plans", [](PyGraph& g, nb::handle modes) { throw_if(g.create_execution_plans(to_modes(modes))); },
           nb::arg("heur_modes"), "Validates, freezes and ranks every engine into ONE plan list (one-shot).")
      .def("create_execution_plan",
           [](PyGraph& g, std::int64_t engine_id, const std::map<KnobType, std::int64_t>& knobs) {
             throw_if(g.create_execution_plan(engine_id, knobs));
           },
           nb::arg("engine_id"), nb::arg("knobs") = std::map<KnobType, std::int64_t>{})
      .def_prop_ro("is_planned", &PyGraph::is_planned)
      .def_prop_ro("family_name", [](const PyGraph& g) { return g.family_name(); })
      .def_prop_ro("planning_notes", [](const PyGraph& g) { return g.planning_notes(); })
      .def("get_execution_plan_count", &PyGraph::get_execution_plan_count)
      .def("get_plan_name_at_index", [](const PyGraph& g, std::int64_t i) { return unwrap(g.get_plan_name_at_index(i)); },
           nb::arg("index"))
      .def("get_engine_and_knobs_at_index",
           [](const PyGraph& g, std::int64_t i) {
             PlanConfig c = unwrap(g.get_engine_and_knobs_at_index(i));
             return nb::make_tuple(c.engine_id, knobs_to_python(c.knobs));
           },
           nb::arg("index"), "(engine_id, {knob_type: value}) of plan `index`.")
      .def("get_plan_status_at_index", [](const PyGraph& g, std::int64_t i) { return unwrap(g.get_plan_status_at_index(i)); },
           nb::arg("index"))
      .def("check_support", [](PyGraph& g) { throw_if(g.check_support()); })
      .def("build_plans", [](PyGraph& g, BuildPlanPolicy p) { throw_if(g.build_plans(p)); },
           nb::arg("policy") = BuildPlanPolicy::HEURISTICS_CHOICE)
      .def("build_plan_at_index", [](PyGraph& g, std::int64_t i) { throw_if(g.build_plan_at_index(i)); }, nb::arg("index"))
      .def("select_plan", [](PyGraph& g, std::int64_t i) { throw_if(g.select_plan(i)); }, nb::arg("index"))
      .def("get_selected_plan_index", [](const PyGraph& g) { return unwrap(g.get_selected_plan_index()); })
      .def("get_workspace_size", [](const PyGraph& g) { return unwrap(g.get_workspace_size()); })
      .def("get_workspace_size_plan_at_index",
           [](const PyGraph& g, std::int64_t i) { return unwrap(g.get_workspace_size_plan_at_index(i)); }, nb::arg("index"))
      .def("deselect_workspace_greater_than", [](PyGraph& g, std::int64_t b) { throw_if(g.deselect_workspace_greater_than(b)); },
           nb::arg("workspace"))
      .def("deselect_engines", [](PyGraph& g, const std::vector<std::string>& s) { throw_if(g.deselect_engines(s)); },
           nb::arg("engine_names"))
      .def("execute",
           [](nb::handle self, nb::dict variant_pack, nb::handle workspace, nb::handle handle) {
             run(self, variant_pack, workspace, handle, -1);
           },
           nb::arg("variant_pack"), nb::arg("workspace").none() = nb::none(), nb::arg("handle").none() = nb::none(),
           "Runs the selected plan on the buffers of `variant_pack` ({tensor or uid: buffer}).")
      .def("_normalize_only",
           [](nb::handle self, nb::dict variant_pack, nb::handle workspace, nb::handle handle) {
             PyGraph& g = nb::cast<PyGraph&>(self);
             Normalized n = to_variant_pack(g, variant_pack);
             Workspace ws = to_workspace(workspace);
             const Handle* h = to_handle(handle, self);
             nb::gil_scoped_release release;
             (void)h;
             return static_cast<std::int64_t>(n.pack.size()) + (ws.data ? 1 : 0);
           },
           nb::arg("variant_pack"), nb::arg("workspace").none() = nb::none(), nb::arg("handle").none() = nb::none(),
           "execute() without the run: the binding's own per-call cost (bench/python_overhead.py).")
      .def("execute_plan_at_index",
           [](nb::handle self, nb::dict variant_pack, nb::handle workspace, std::int64_t index, nb::handle handle) {
             if (index < 0)
               throw StatusError{Status(ErrorCode::INVALID_VALUE, "plan index " + std::to_string(index) + " is negative")};
             run(self, variant_pack, workspace, handle, index);
           },
           nb::arg("variant_pack"), nb::arg("workspace").none(), nb::arg("index"),
           nb::arg("handle").none() = nb::none());
}

#else

void bind_plans(nb::module_& m, nb::class_<PyGraph>& cls) {
  (void)m;
  (void)cls;
}

#endif

}  // namespace opgraph::py
