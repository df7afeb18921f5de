// python/src/common.h — what the bind_*.cpp files share: the graph class the
// binding exposes, the status → exception bridge and the per-file entry points.
//
// The binding is thin: Python-facing names and kwargs live in opgraph/*.py; the
// C++ side offers the generic node path (_add_node by op name), introspection,
// the buffer normalisation of execute and the one error table.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "opgraph/graph.h"
#include "opgraph/op_graph.h"
#include "opgraph/status.h"

namespace opgraph::py {

namespace nb = nanobind;

using CoreGraph = Graph;

// The graph behind opgraph.pygraph. It only opens the generic node path that the
// C++ builders use (NodeSink::add_node) so one binding serves every op record.
class PyGraph : public CoreGraph {
 public:
  PyGraph() = default;
  using CoreGraph::add_node;
  // Replaces this graph's content with `other`'s (deserialize into an existing object).
  void replace_with(CoreGraph&& other) {
    static_cast<CoreGraph&>(*this) = std::move(other);
    declared_.clear();
    pass_by_value_.reset();
    last_pack_.reset();
  }
  // What execute judges a buffer of `uid` against: the tensor holding the uid (null: none),
  // its data type, whether a node writes it (an output), the bytes its declared layout spans
  // and whether that layout is row-major dense. Looked up each call until the graph is
  // frozen, then from a table built once (a frozen graph's tensors cannot change).
  struct Declared {
    const Tensor* tensor = nullptr;
    DataType dtype = DataType::NOT_SET;
    bool output = false;
    // The declaration's span in bytes (storage slots, as the core's DeclaredLayout counts
    // it); meaningful only when row_major.
    std::int64_t bytes = 0;
    // Row-major dense (packed strides on every axis of extent > 1, a known dtype, a slot
    // spelling): a contiguous buffer covering `bytes` reads exactly as declared from its
    // address, so the torch fast path binds it by address after one byte count.
    bool row_major = false;
  };
  Declared declared(std::int64_t uid) const;  // bind_plans.cpp

  // Whether a tensor with a uid is pass-by-value (pygraph strips and checks those
  // entries of a dict pack in Python: _graph.py _host_pack); cached once frozen.
  bool has_pass_by_value() const;  // bind_plans.cpp

  // The last dict execute's buffers as the binding read them (per entry, in the dict's
  // order: the uid and the OperandBuffer it made) and the pack the core normalised from
  // them (Graph::prepare_variant_pack). A call whose entries read exactly the same (every
  // fact the checks look at: address, extents, strides, dtype, memory kind, read-only)
  // hands that normalised pack to execute instead of normalising again: the key is what
  // is checked, never the Python objects, so a tensor resized or moved in place misses.
  // Read and replaced with the GIL held; a call keeps its own reference while it runs.
  struct LastPack {
    std::vector<std::pair<std::int64_t, OperandBuffer>> facts;
    VariantPack ready;
  };
  std::shared_ptr<const LastPack> last_pack() const { return last_pack_; }
  void set_last_pack(std::shared_ptr<const LastPack> p) const { last_pack_ = std::move(p); }

  // Whether pygraph has stored (or may store) one of the attributes that send a dict pack
  // through its Python-level handling (_deferred, _aliases, _keys_by_uid: see
  // needs_python_hooks in bind_plans.cpp). Set by pygraph where it writes them
  // (_mark_python_hooks) and never cleared; until set, execute does not look them up.
  // It describes the Python object, so deserialize into this graph (replace_with) keeps it.
  bool python_hooks() const { return python_hooks_; }
  void mark_python_hooks() { python_hooks_ = true; }

  // pygraph.handle: the handle execute uses when a call names none (None: none). A property
  // of the native class, so execute reads it without an attribute lookup. It belongs to the
  // Python object, so deserialize into this graph (replace_with) keeps it. Set and read with
  // the GIL held; the graph is destroyed with it held (the Python object's deallocation).
  nb::handle handle_object() const { return handle_object_; }
  void set_handle_object(nb::object h) { handle_object_ = std::move(h); }

 private:
  mutable std::unordered_map<std::int64_t, Declared> declared_;  // frozen graphs: uid -> declaration
  mutable std::optional<bool> pass_by_value_;                    // frozen graphs: has_pass_by_value()
  mutable std::shared_ptr<const LastPack> last_pack_;
  bool python_hooks_ = false;
  nb::object handle_object_ = nb::none();
};

// A bad Status on its way to Python; the translator in bind_errors.cpp maps the
// code through the one table (mapped_exception) and keeps the message unchanged.
struct StatusError {
  Status status;
};

// Throws StatusError for a bad status; returns for a good one.
inline void throw_if(const Status& s) {
  if (s.is_bad()) throw StatusError{s};
}
template <class T>
T unwrap(Result<T>&& r) {
  if (r.is_bad()) throw StatusError{r.status()};
  return std::move(r).value();
}

// The Python exception type the table gives `code` (borrowed reference).
PyObject* mapped_exception(ErrorCode code);
// opgraph.BindingWarning (a UserWarning): a buffer bound by address as cuDNN binds it (an
// element type of the declared width that is not the declared type); bind_plans.cpp.
extern PyObject* g_binding_warning;
// The binding policy (set_binding_policy): false "strict" (the default: a buffer holds the
// declared element type), true "cudnn" (another type of the declared width is bound by address).
extern bool g_bind_by_address;

// Registration, one per bind_*.cpp file, called in this order by module.cpp.
void bind_errors(nb::module_& m);
void bind_enums(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_specs(nb::module_& m);
void bind_handle(nb::module_& m);
void bind_buffers(nb::module_& m);
nb::class_<PyGraph> bind_graph(nb::module_& m);
// The planning half of the graph class (bind_plans.cpp): the at-index API, build, execute.
void bind_plans(nb::module_& m, nb::class_<PyGraph>& cls);

// cudnn's data_type members with no IR element type (INT4, FP8_E5M3, the vectorised int
// types) are bound as values past DataType's range; a tensor or graph never holds one.
inline bool is_unsupported_dtype(DataType t) { return static_cast<int>(t) >= 200; }
inline std::string unsupported_dtype_rule(const std::string& who, const std::string& name) {
  return who + ": data_type " + name +
         " has no element type in opgraph's IR (INT4, FP8_E5M3, FAST_FLOAT_FOR_FP8 and the vectorised "
         "INT8x4 / UINT8x4 / INT8x32 are cudnn-only); declare the tensor with a type the IR has";
}

}  // namespace opgraph::py
