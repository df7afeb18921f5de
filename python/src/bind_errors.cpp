// python/src/bind_errors.cpp — THE table from C++ ErrorCode to Python exception.
//
// cudnn.pygraph's mapping, kept so ported `except` clauses keep working:
//   declines and invalid graphs → GraphNotSupportedError (alias cudnnGraphNotSupportedError),
//   caller errors → ValueError, mutation of a frozen graph → FrozenGraphError,
//   everything else → RuntimeError. Messages pass through unchanged.
// Both custom exceptions derive from RuntimeError.
#include <Python.h>
#include <nanobind/stl/string.h>

#include <cstdlib>
#include <string_view>

#include "common.h"

namespace opgraph::py {
namespace {

PyObject* g_not_supported = nullptr;
// The message of the last error the binding raised on this thread (get_last_error_string).
thread_local std::string g_last_error;
PyObject* g_frozen = nullptr;

enum class PyKind { NOT_SUPPORTED, VALUE, FROZEN, RUNTIME };

// The one table. A code not listed is RuntimeError.
constexpr struct {
  ErrorCode code;
  PyKind kind;
} kErrorTable[] = {
    {ErrorCode::GRAPH_NOT_SUPPORTED, PyKind::NOT_SUPPORTED},
    {ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED, PyKind::NOT_SUPPORTED},
    {ErrorCode::HEURISTIC_QUERY_FAILED, PyKind::NOT_SUPPORTED},
    {ErrorCode::UNSUPPORTED_GRAPH_FORMAT, PyKind::NOT_SUPPORTED},
    {ErrorCode::ATTRIBUTE_NOT_SET, PyKind::VALUE},
    {ErrorCode::SHAPE_DEDUCTION_FAILED, PyKind::VALUE},
    {ErrorCode::INVALID_TENSOR_NAME, PyKind::VALUE},
    {ErrorCode::INVALID_VARIANT_PACK, PyKind::VALUE},
    {ErrorCode::INVALID_VALUE, PyKind::VALUE},
    {ErrorCode::GRAPH_FROZEN, PyKind::FROZEN},
};

// Every ErrorCode by name, for the test hook and the Python-side table listing.
constexpr ErrorCode kAllCodes[] = {
    ErrorCode::ATTRIBUTE_NOT_SET, ErrorCode::SHAPE_DEDUCTION_FAILED, ErrorCode::INVALID_TENSOR_NAME,
    ErrorCode::INVALID_VARIANT_PACK, ErrorCode::GRAPH_NOT_SUPPORTED, ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED,
    ErrorCode::GRAPH_EXECUTION_FAILED, ErrorCode::HEURISTIC_QUERY_FAILED, ErrorCode::UNSUPPORTED_GRAPH_FORMAT,
    ErrorCode::CUDA_API_FAILED, ErrorCode::CUDNN_BACKEND_API_FAILED, ErrorCode::INVALID_CUDA_DEVICE,
    ErrorCode::HANDLE_ERROR, ErrorCode::INVALID_VALUE, ErrorCode::NVRTC_COMPILATION_FAILED, ErrorCode::GRAPH_FROZEN,
    ErrorCode::IO_ERROR, ErrorCode::INTERNAL_ERROR,
};

}  // namespace

PyObject* g_binding_warning = nullptr;
bool g_bind_by_address = false;

PyObject* mapped_exception(ErrorCode code) {
  for (const auto& row : kErrorTable) {
    if (row.code != code) continue;
    switch (row.kind) {
      case PyKind::NOT_SUPPORTED: return g_not_supported;
      case PyKind::VALUE: return PyExc_ValueError;
      case PyKind::FROZEN: return g_frozen;
      case PyKind::RUNTIME: return PyExc_RuntimeError;
    }
  }
  return PyExc_RuntimeError;
}

void bind_errors(nb::module_& m) {
  g_not_supported = PyErr_NewExceptionWithDoc(
      "opgraph.GraphNotSupportedError",
      "No engine can run the graph, or the graph is invalid (cudnn.pygraph's cudnnGraphNotSupportedError).",
      PyExc_RuntimeError, nullptr);
  g_frozen = PyErr_NewExceptionWithDoc("opgraph.FrozenGraphError",
                                       "The graph was frozen by planning; it can no longer be changed.",
                                       PyExc_RuntimeError, nullptr);
  m.attr("GraphNotSupportedError") = nb::handle(g_not_supported);
  m.attr("cudnnGraphNotSupportedError") = nb::handle(g_not_supported);
  m.attr("FrozenGraphError") = nb::handle(g_frozen);
  g_binding_warning = PyErr_NewExceptionWithDoc(
      "opgraph.BindingWarning",
      "A variant pack buffer was bound by its address as cuDNN binds it: its element type is not the "
      "declared one but has the declared width, so the plan reads its bits as the declared type. "
      "warnings.simplefilter('error', opgraph.BindingWarning) makes it an error.",
      PyExc_UserWarning, nullptr);
  m.attr("BindingWarning") = nb::handle(g_binding_warning);
  // The binding policy: OPGRAPH_BINDING=cudnn at import, or set_binding_policy at any time.
  if (const char* e = std::getenv("OPGRAPH_BINDING"); e && std::string_view(e) == "cudnn") g_bind_by_address = true;
  m.def(
      "set_binding_policy",
      [](const std::string& policy) {
        if (policy != "strict" && policy != "cudnn")
          throw nb::value_error(("set_binding_policy: policy '" + policy + "' is not 'strict' or 'cudnn'").c_str());
        g_bind_by_address = policy == "cudnn";
      },
      nb::arg("policy"),
      "How execute binds a buffer whose element type is not the declared one. 'strict' (the default): "
      "refused, naming both types. 'cudnn': one of the declared width (bfloat16 for HALF, INT32 for "
      "FLOAT) is bound by its address as cuDNN binds every buffer, its bits read as the declared type, "
      "with an opgraph.BindingWarning; another width is refused under both. The environment variable "
      "OPGRAPH_BINDING=cudnn sets 'cudnn' at import.");
  m.def(
      "get_binding_policy", [] { return std::string(g_bind_by_address ? "cudnn" : "strict"); },
      "The binding policy execute applies ('strict' or 'cudnn'; set_binding_policy).");

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      g_last_error = e.status.message();
      PyErr_SetString(mapped_exception(e.status.code()), e.status.message().c_str());
    } catch (const FrozenError& e) {
      g_last_error = e.what();
      PyErr_SetString(g_frozen, e.what());
    }
  });

  m.def(
      "get_last_error_string", [] { return g_last_error; },
      "The message of the last error opgraph raised on this thread (\"\" before any).");
  m.def("_set_last_error", [](const std::string& s) { g_last_error = s; }, nb::arg("message"));

  // The code names, and a hook raising what `code` maps to (the table's tests walk it).
  nb::list names;
  for (ErrorCode c : kAllCodes) names.append(nb::str(std::string(to_string(c)).c_str()));
  m.attr("_error_code_names") = names;
  m.def(
      "_raise_for_code",
      [](const std::string& code, const std::string& message) {
        for (ErrorCode c : kAllCodes)
          if (to_string(c) == code) throw StatusError{Status(c, message)};
        throw nb::value_error(("unknown error code " + code).c_str());
      },
      nb::arg("code"), nb::arg("message"));
}

}  // namespace opgraph::py
