// python/src/bind_enums.cpp — the C++ enums as Python enums, with cudnn.pygraph's names.
//
// data_type, tensor_reordering and scalar_type always; heur_mode, knob_type,
// build_plan_policy, numerical_note and behavior_note with the planning layer. Enum-valued op attributes
// (norm_forward_phase, reduction_mode, ...) are strings in the C++ IR and are
// defined in opgraph/_enums.py. Conversion from torch/numpy dtypes: opgraph/_dtypes.py.
#include "common.h"

#ifdef OPGRAPH_PY_HAS_PLANNING
#include "opgraph/knobs.h"
#include "opgraph/plan_notes.h"
#endif

namespace opgraph::py {

void bind_enums(nb::module_& m) {
  nb::enum_<DataType>(m, "data_type")
      .value("NOT_SET", DataType::NOT_SET)
      .value("FLOAT", DataType::FLOAT)
      .value("DOUBLE", DataType::DOUBLE)
      .value("HALF", DataType::HALF)
      .value("BFLOAT16", DataType::BFLOAT16)
      .value("INT8", DataType::INT8)
      .value("UINT8", DataType::UINT8)
      .value("INT32", DataType::INT32)
      .value("INT64", DataType::INT64)
      .value("BOOLEAN", DataType::BOOLEAN)
      .value("FP8_E4M3", DataType::FP8_E4M3)
      .value("FP8_E5M2", DataType::FP8_E5M2)
      .value("FP8_E8M0", DataType::FP8_E8M0)
      .value("FP4_E2M1", DataType::FP4_E2M1);
  m.def("bits_of", [](DataType t) { return bits_of(t); }, nb::arg("data_type"),
        "Bits per element (4 for FP4_E2M1, 0 for NOT_SET).");

  nb::enum_<TensorReordering>(m, "tensor_reordering")
      .value("NONE", TensorReordering::NONE)
      .value("INT8x32", TensorReordering::INT8x32)
      .value("F16x16", TensorReordering::F16x16)
      .value("F8_128x4", TensorReordering::F8_128x4);

  nb::enum_<ScalarKind>(m, "scalar_type")
      .value("RUNTIME_PARAM", ScalarKind::RUNTIME_PARAM)
      .value("COMPILE_TIME_CONST", ScalarKind::COMPILE_TIME_CONST);

#ifdef OPGRAPH_PY_HAS_PLANNING
  nb::enum_<HeurMode>(m, "heur_mode")
      .value("A", HeurMode::A)
      .value("B", HeurMode::B)
      .value("FALLBACK", HeurMode::FALLBACK)
      .value("OPENSOURCE", HeurMode::OPENSOURCE);
  nb::enum_<BuildPlanPolicy>(m, "build_plan_policy")
      .value("HEURISTICS_CHOICE", BuildPlanPolicy::HEURISTICS_CHOICE)
      .value("ALL", BuildPlanPolicy::ALL);
  auto knob = nb::enum_<KnobType>(m, "knob_type");
  for (const auto& [name, k] : all_knob_types()) knob.value(name.c_str(), k);
  knob.value("NOT_SET", KnobType::NOT_SET);
  auto numerical = nb::enum_<NumericalNote>(m, "numerical_note");
  for (int i = 0; i < kNumericalNoteCount; ++i) {
    auto n = static_cast<NumericalNote>(i);
    numerical.value(std::string(to_string(n)).c_str(), n);
  }
  auto behavior = nb::enum_<BehaviorNote>(m, "behavior_note");
  for (int i = 0; i < kBehaviorNoteCount; ++i) {
    auto n = static_cast<BehaviorNote>(i);
    behavior.value(std::string(to_string(n)).c_str(), n);
  }
#endif
}

}  // namespace opgraph::py
