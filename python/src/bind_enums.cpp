// python/src/bind_enums.cpp — the C++ enums as Python enums, with cudnn.pygraph's names.
//
// data_type, tensor_reordering, scalar_type, heur_mode, knob_type, build_plan_policy,
// numerical_note and behavior_note. Enum-valued op attributes
// (norm_forward_phase, reduction_mode, ...) are strings in the C++ IR and are
// defined in opgraph/_enums.py. Conversion from torch/numpy dtypes: opgraph/_dtypes.py.
#include "common.h"
#include "opgraph/knobs.h"
#include "opgraph/plan_notes.h"

namespace opgraph::py {

namespace {
// One member under its C++ to_string name: each name is spelled once, in the core.
template <class E>
void add_named(nb::enum_<E>& e, E v) {
  e.value(std::string(to_string(v)).c_str(), v);
}
}  // namespace

void bind_enums(nb::module_& m) {
  auto data_type = nb::enum_<DataType>(m, "data_type");
  add_named(data_type, DataType::NOT_SET);
  for (DataType t : kAllDataTypes) add_named(data_type, t);
  // cudnn's members the IR has no element type for: values outside DataType's range, so no
  // engine can take them; the binding refuses them wherever a tensor or a graph would hold one
  // (opgraph._dtypes.check_supported names the rule).
  nb::list unsupported;
  int next = 200;
  for (const char* name : {"INT8x4", "UINT8x4", "INT8x32", "FAST_FLOAT_FOR_FP8", "INT4", "FP8_E5M3"}) {
    data_type.value(name, static_cast<DataType>(next++));
    unsupported.append(data_type.attr(name));
  }
  m.attr("_unsupported_data_types") = unsupported;
  m.def("bits_of", [](DataType t) { return bits_of(t); }, nb::arg("data_type"),
        "Bits per element (4 for FP4_E2M1, 0 for NOT_SET).");

  auto reordering = nb::enum_<TensorReordering>(m, "tensor_reordering");
  for (auto r : {TensorReordering::NONE, TensorReordering::INT8x32, TensorReordering::F16x16, TensorReordering::F8_128x4})
    add_named(reordering, r);

  nb::enum_<ScalarKind>(m, "scalar_type")
      .value("RUNTIME_PARAM", ScalarKind::RUNTIME_PARAM)
      .value("COMPILE_TIME_CONST", ScalarKind::COMPILE_TIME_CONST);

  auto heur = nb::enum_<HeurMode>(m, "heur_mode");
  for (auto h : {HeurMode::A, HeurMode::B, HeurMode::FALLBACK, HeurMode::OPENSOURCE}) add_named(heur, h);
  nb::enum_<BuildPlanPolicy>(m, "build_plan_policy")
      .value("HEURISTICS_CHOICE", BuildPlanPolicy::HEURISTICS_CHOICE)
      .value("ALL", BuildPlanPolicy::ALL);
  auto knob = nb::enum_<KnobType>(m, "knob_type");
  for (const auto& [name, k] : all_knob_types()) knob.value(name.c_str(), k);
  knob.value("NOT_SET", KnobType::NOT_SET);
  // cudnn-frontend's names for opgraph's frontend knob band (values the backend never sees).
  m.attr("FRONTEND_KNOB_TYPE_BASE") = kFrontendKnobBase;
  m.def("is_frontend_knob_type", [](KnobType k) { return is_frontend_knob(k); }, nb::arg("knob_type"),
        "Whether the knob is a frontend one (at or above FRONTEND_KNOB_TYPE_BASE), never sent to the backend.");
  auto numerical = nb::enum_<NumericalNote>(m, "numerical_note");
  for (int i = 0; i < kNumericalNoteCount; ++i) add_named(numerical, static_cast<NumericalNote>(i));
  auto behavior = nb::enum_<BehaviorNote>(m, "behavior_note");
  for (int i = 0; i < kBehaviorNoteCount; ++i) add_named(behavior, static_cast<BehaviorNote>(i));
}

}  // namespace opgraph::py
