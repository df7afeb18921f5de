// python/src/bind_plans.cpp — the planning half of the graph class: create_execution_plans,
// the at-index API, filters (engines, workspace, notes), build_plans, execute, plan records.
//
// execute(variant_pack, workspace=None, handle=None) normalises the dict ONCE, here, into
// the C++ VariantPack (one C-level dict walk): keys are opgraph.tensor or int uids; values
// are anything normalize_buffer reads (buffers.h); prepare_variant_pack does it ahead of time.
// Each entry is judged against its declaration before anything reads it (INVALID_VARIANT_PACK,
// a ValueError naming the uid and tensor): a tensor key must be this graph's; a buffer that
// says its element type must hold the declared one, or uint8 storage for an fp8 / fp4
// operand (a numpy or torch dtype is a claim about the bits: int32 or complex64 memory is
// never read as FLOAT); an output must be writable. Extents follow the C++ pack's rules; a
// torch tensor is read without DLPack (read_torch): bound by address when it is contiguous
// and the declaration row-major, after its nbytes are checked to cover the declared span
// (rule buffer_span), else described by its shape and stride() like any strided buffer.
// Which memory a call drives, and where it runs, is the core's policy (Graph::route,
// include/opgraph/graph.h "routing"): this file only reports what kinds of memory the
// pack holds (host, device, or bare addresses) and calls Graph::execute_routed (route,
// then the run with the routed handle) with the GIL released.
// Workspace: None, an int address (trusted to be large enough), or a buffer (its size in
// bytes is checked against the plan's need).
#include <algorithm>

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "buffers.h"
#include "opgraph/layout.h"
#include "handle.h"

namespace opgraph::py {

namespace {

// The declaration of `t` as execute judges a buffer against it (common.h): its span in
// bytes by the core's own arithmetic (opgraph/layout.h) and whether it is row-major
// dense. Anything without an answer (too many dims, overflow, no slot spelling, no dtype)
// is not row-major: its buffers are read with their shape and strides and the core judges them.
PyGraph::Declared declaration_of(const Tensor& t, bool output) {
  PyGraph::Declared d{&t, t.get_data_type(), output};
  const auto& dims = t.get_dim();
  const auto& st = t.get_stride();
  if (dims.size() > static_cast<std::size_t>(kMaxRank) || slot_bits(d.dtype) <= 0) return d;
  const int rank = static_cast<int>(dims.size());
  std::array<std::int64_t, kMaxRank> D{}, S{}, P{};
  std::copy(dims.begin(), dims.end(), D.begin());
  if (!packed_strides(rank, D.data(), P.data())) return d;
  if (st.size() == dims.size()) std::copy(st.begin(), st.end(), S.begin());
  else S = P;
  for (int i = 0; i < rank; ++i)
    if (D[i] > 1 && S[i] != P[i]) return d;  // strided, padded or permuted: not by address
  if (to_storage_geometry(d.dtype, rank, D.data(), S.data())) return d;  // the core names why
  const auto span = span_elements(rank, D.data(), S.data());
  const auto bytes = span ? slot_bytes(*span, slot_bits(d.dtype)) : std::nullopt;
  if (!bytes) return d;
  d.bytes = *bytes;
  d.row_major = true;
  return d;
}

}  // namespace

PyGraph::Declared PyGraph::declared(std::int64_t uid) const {
  auto of = [this](const TensorPtr& t) { return declaration_of(*t, producer_of(t.get()) != nullptr); };
  if (!is_frozen()) {  // tensors may still change: look them up each time
    TensorPtr t = tensor_by_uid(uid);
    return t ? of(t) : Declared{};
  }
  if (declared_.empty())
    for (const auto& t : tensors()) declared_.try_emplace(t->get_uid(), of(t));  // the first holder, as tensor_by_uid
  auto it = declared_.find(uid);
  return it == declared_.end() ? Declared{} : it->second;
}

bool PyGraph::has_pass_by_value() const {
  if (pass_by_value_) return *pass_by_value_;
  bool any = false;
  for (const auto& t : tensors()) any |= t->get_is_pass_by_value() && t->has_uid();
  if (is_frozen()) pass_by_value_ = any;
  return any;
}

namespace {

// One call's buffers, normalised once: the C++ caller pack and what kinds of memory it holds.
struct Normalized {
  VariantPack pack;
  Graph::BufferKinds kinds;         // which kinds of memory it holds (Graph::route decides from them)
  const PyGraph* graph = nullptr;   // the graph it was normalised for
};

// Whether a buffer of element type `have` may be bound for an operand declared `declared`:
// the declared type itself, or uint8 storage for the types numpy cannot spell (fp8, fp4:
// FlashInfer's packed data and scale blobs). Anything else is a different number format
// whose bits the engine would misread (int32 or complex64 for FLOAT).
bool dtype_accepted(DataType have, DataType declared) {
  if (have == declared || declared == DataType::NOT_SET) return true;
  const bool byte_storage = declared == DataType::FP8_E4M3 || declared == DataType::FP8_E5M2 ||
                            declared == DataType::FP8_E8M0 || declared == DataType::FP4_E2M1;
  return have == DataType::UINT8 && byte_storage;
}

// Whether `b` holds another element type of `declared`'s width (not a byte-geometry or a
// foreign type): cuDNN binds such a buffer by its address, and so does the binding under the
// "cudnn" policy (with a warning).
bool same_width_type(const Buffer& b, DataType declared) {
  return b.foreign_dtype.empty() && !b.byte_geometry && b.dtype != DataType::NOT_SET &&
         declared != DataType::NOT_SET && slot_bits(b.dtype) == slot_bits(declared) && slot_bits(declared) >= 8;
}

// opgraph.BindingWarning for a buffer of another type bound as `declared` (an error where the
// warnings filter makes it one: the Python exception propagates).
void warn_bound_by_address(const BufferRole& who, const Buffer& b, DataType declared) {
  const std::string msg = who.text() + ": rule bind_by_address: buffer element type " + b.dtype_name() +
                          " is not the declared " + std::string(to_string(declared)) +
                          "; bound by its address as cuDNN binds it, its bits read as " +
                          std::string(to_string(declared)) + " (convert it, e.g. torch .to, to bind the values)";
  if (PyErr_WarnEx(g_binding_warning, msg.c_str(), 1) < 0) throw nb::python_error();
}

std::string dtype_rule(DataType declared) {
  if (dtype_accepted(DataType::UINT8, declared))
    return std::string(to_string(declared)) + " is bound as its own dtype or as uint8 storage";
  return "a buffer holds the declared element type (convert it first, e.g. numpy .astype or torch .to; "
         "opgraph.set_binding_policy('cudnn') binds another type of the same width by address, as cuDNN does)";
}

// Whether `t` is one of `g`'s tensors although its uid does not name it (an unvalidated
// graph's tensors have no uids yet; the core then refuses the key). Frozen graphs: never.
bool holds(const PyGraph& g, const Tensor* t) {
  if (g.is_frozen()) return false;
  for (const auto& x : g.tensors())
    if (x.get() == t) return true;
  return false;
}

// The Tensor a variant pack key is, or null when it is no opgraph.tensor: an instance of the
// exact type is read through nanobind's instance pointer (no type-table lookup), anything
// else (a subclass, an instance not yet constructed) through nb::try_cast as before.
Tensor* tensor_key(PyObject* key) {
  static PyTypeObject* const s_tensor = reinterpret_cast<PyTypeObject*>(nb::type<Tensor>().ptr());
  if (s_tensor && Py_TYPE(key) == s_tensor && nb::inst_ready(nb::handle(key))) return nb::inst_ptr<Tensor>(key);
  Tensor* t = nullptr;
  return nb::try_cast<Tensor*>(nb::handle(key), t) ? t : nullptr;
}

// The uid a variant pack key names; ValueError for an int outside 64 bits.
std::int64_t uid_of_int(PyObject* key) {
  int overflow = 0;
  const long long uid = PyLong_AsLongLongAndOverflow(key, &overflow);
  if (uid == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow)
    throw StatusError{Status(ErrorCode::INVALID_VARIANT_PACK,
                             "variant pack key " + nb::cast<std::string>(nb::str(nb::handle(key))) +
                                 " is not a uid (uids are 64-bit signed ints)")};
  return uid;
}

// Execute-time shape overrides (docs/dynamic_shapes.md): cudnn-frontend's three parallel
// lists, read once per call; empty when none is given.
struct Overrides {
  std::vector<std::int64_t> uids;
  std::vector<std::vector<std::int64_t>> shapes, strides;  // strides[i] empty: packed row-major
  bool has(std::int64_t uid) const { return std::find(uids.begin(), uids.end(), uid) != uids.end(); }
};

std::vector<std::int64_t> int_list(nb::handle seq, const std::string& what) {
  std::vector<std::int64_t> out;
  if (!PySequence_Check(seq.ptr()) || nb::isinstance<nb::str>(seq))
    throw StatusError{Status(ErrorCode::INVALID_VALUE, what + " must be a sequence of ints")};
  for (nb::handle x : seq) {
    if (!PyLong_Check(x.ptr()) || PyBool_Check(x.ptr()))
      throw StatusError{Status(ErrorCode::INVALID_VALUE, what + " must be a sequence of ints, got " +
                                                             nb::cast<std::string>(nb::repr(x)))};
    out.push_back(uid_of_int(x.ptr()));
  }
  return out;
}

Overrides to_overrides(nb::handle uids, nb::handle shapes, nb::handle strides) {
  Overrides o;
  auto len = [](nb::handle h) { return h.is_none() ? Py_ssize_t{0} : PyObject_Length(h.ptr()); };
  const Py_ssize_t nu = len(uids), ns = len(shapes), nt = len(strides);
  if (nu < 0 || ns < 0 || nt < 0) throw nb::python_error();
  if (nu == 0 && ns == 0 && nt == 0) return o;
  if (ns != nu || (nt != 0 && nt != nu))
    throw StatusError{Status(ErrorCode::INVALID_VALUE,
                             "execute-time shape overrides: override_uids has " + std::to_string(nu) +
                                 " entries, override_shapes " + std::to_string(ns) + ", override_strides " +
                                 std::to_string(nt) + "; the lists are parallel (strides may be empty: packed)")};
  for (nb::handle u : uids) {
    Tensor* t = nullptr;
    if (PyLong_Check(u.ptr()) && !PyBool_Check(u.ptr())) o.uids.push_back(uid_of_int(u.ptr()));
    else if (nb::try_cast<Tensor*>(u, t) && t) o.uids.push_back(t->get_uid());
    else throw StatusError{Status(ErrorCode::INVALID_VALUE, "override_uids entries are int uids or opgraph.tensor objects")};
  }
  Py_ssize_t i = 0;
  for (nb::handle x : shapes)
    o.shapes.push_back(int_list(x, "override_shapes[" + std::to_string(i++) + "]"));
  i = 0;
  if (nt != 0)
    for (nb::handle x : strides) {
      o.strides.push_back(x.is_none() ? std::vector<std::int64_t>{}
                                      : int_list(x, "override_strides[" + std::to_string(i) + "]"));
      ++i;
    }
  o.strides.resize(o.uids.size());
  return o;
}

void add_overrides(VariantPack& pack, const Overrides& o) {
  for (std::size_t i = 0; i < o.uids.size(); ++i) pack.override_shape(o.uids[i], o.shapes[i], o.strides[i]);
}

using Facts = std::vector<std::pair<std::int64_t, OperandBuffer>>;

// Whether an entry reads as another call's (PyGraph::LastPack): every field the binding set.
bool same_fact(const std::pair<std::int64_t, OperandBuffer>& x, std::int64_t uid, const OperandBuffer& b) {
  const OperandBuffer& a = x.second;
  if (x.first != uid || a.data != b.data || a.rank != b.rank || a.dtype != b.dtype || a.memory != b.memory ||
      a.read_only != b.read_only)
    return false;
  for (int k = 0; k < a.rank && k < kMaxRank; ++k)
    if (a.dims[k] != b.dims[k] || a.strides[k] != b.strides[k]) return false;
  return true;
}

// What the dict walk read, entry by entry (uid and OperandBuffer, in the dict's order),
// compared with the last call's entries as it goes: while each entry equals the last call's
// at its position nothing is stored (the call that reads as the last one copies and allocates
// nothing); from the first that differs, the entries are kept (the equal prefix copied from
// the last call's), for the caller pack and the next call's comparison.
class FactLog {
 public:
  explicit FactLog(const Facts* last) : last_(last) {}
  void reserve(std::size_t n) { expected_ = n; }
  void add(std::int64_t uid, const OperandBuffer& b) {
    if (matching_ && last_ && n_ < last_->size() && same_fact((*last_)[n_], uid, b)) {
      ++n_;
      return;
    }
    if (matching_) keep_prefix();
    own_.emplace_back(uid, b);
    ++n_;
  }
  // Every entry equals the last call's, and there are as many.
  bool same() const { return matching_ && last_ && n_ == last_->size(); }
  // The entries read, in order.
  Facts take() && {
    if (matching_) keep_prefix();
    return std::move(own_);
  }

 private:
  void keep_prefix() {
    matching_ = false;
    own_.reserve(std::max(expected_, n_ + 1));
    if (last_) own_.assign(last_->begin(), last_->begin() + static_cast<std::ptrdiff_t>(n_));
  }
  const Facts* last_;
  std::size_t n_ = 0, expected_ = 0;
  bool matching_ = true;
  Facts own_;
};

// What the walk throws at a None key when its caller (execute) sends such packs through
// pygraph's Python-level handling instead (execute's other callers refuse the key).
struct NoneKey {};

// The dict walk. `facts` (optional): records each entry's uid and OperandBuffer, in order;
// `build_pack` false (with facts): every check runs but the caller pack is left empty,
// for run() to fill from the facts only when it needs it (set_all). `none_key` true: a None
// key throws NoneKey (execute then hands the pack to _execute_hooks, which drops it).
Normalized to_variant_pack(const PyGraph& g, nb::handle d, const Overrides* overrides = nullptr,
                           FactLog* facts = nullptr, bool build_pack = true, bool none_key = false) {
  if (!PyDict_Check(d.ptr())) throw nb::type_error("variant_pack must be a dict {tensor or uid: buffer} or a prepared pack");
  Normalized n;
  if (facts) facts->reserve(static_cast<std::size_t>(PyDict_Size(d.ptr())));
  n.graph = &g;
  VariantPack& pack = n.pack;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(d.ptr(), &pos, &key, &value)) {  // borrowed references; no Python-level loop
    std::int64_t uid;
    Tensor* t = nullptr;
    if (PyLong_CheckExact(key)) uid = uid_of_int(key);
    else if ((t = tensor_key(key)) != nullptr) uid = t->get_uid();
    else if (PyLong_Check(key)) uid = uid_of_int(key);
    else if (key == Py_None && none_key) throw NoneKey{};
    else throw nb::type_error("variant pack keys must be opgraph.tensor objects or int uids");
    const BufferRole who{&g, uid, "variant pack entry"};
    // The declaration this buffer is judged against (tensor null: no tensor of this graph has
    // the uid; the core's normalisation refuses such a key, naming it).
    const PyGraph::Declared d = g.declared(uid);
    if (t && t != d.tensor && !holds(g, t))
      throw StatusError{Status(ErrorCode::INVALID_VARIANT_PACK,
                               "variant pack key for uid " + std::to_string(uid) + " is a tensor of another graph ('" +
                                   t->get_name() + "')" +
                                   (d.tensor ? "; this graph's uid " + std::to_string(uid) + " is tensor '" +
                                                   d.tensor->get_name() + "'"
                                             : "; this graph has no tensor with that uid") +
                                   " (bind this graph's tensors, or int uids)")};
    // torch tensors: the hot path (read_torch; by address when the declaration is row-major).
    Buffer b = !PyLong_Check(value) && is_torch_tensor(value) ? read_torch(nb::handle(value), who, d.row_major)
                                                              : normalize_buffer(nb::handle(value), who);
    if (b.read_only && d.output)
      throw StatusError{Status(ErrorCode::INVALID_VARIANT_PACK,
                               who.text() + " is a read-only buffer (numpy writeable=False, a DLPack read-only tensor, "
                                            "bytes or a read-only memoryview) but the operand is an output the plan "
                                            "writes; pass a writable buffer")};
    // The element type: the declared one, or uint8 storage for fp8 / fp4 (dtype_accepted).
    // A bare address says nothing and lends the declaration. Under the binding policy
    // "cudnn" (opt-in: set_binding_policy, OPGRAPH_BINDING=cudnn) another type of the
    // declared width (bfloat16 for HALF, INT32 for FLOAT) is bound by address as cuDNN binds
    // every entry, its bits read as the declared type, with an opgraph.BindingWarning naming
    // both (rule bind_by_address); another width is refused under either policy.
    if (d.tensor && (b.dtype != DataType::NOT_SET || !b.foreign_dtype.empty()) && !dtype_accepted(b.dtype, d.dtype)) {
      if (!g_bind_by_address || !same_width_type(b, d.dtype))
        throw StatusError{Status(ErrorCode::INVALID_VARIANT_PACK,
                                 who.text() + ": buffer element type " + b.dtype_name() + " is not the declared " +
                                     std::string(to_string(d.dtype)) + "; " + dtype_rule(d.dtype))};
      warn_bound_by_address(who, b, d.dtype);
      b.dtype = d.dtype;
    }
    // What the pack holds, for Graph::route (which refuses device memory on a host graph).
    if (b.device == BufferDevice::CUDA && !n.kinds.device) n.kinds.first_device_uid = uid;
    n.kinds.device |= b.device == BufferDevice::CUDA;
    n.kinds.host |= b.device == BufferDevice::HOST;
    // The memory kind travels in the OperandBuffer: an engine's operand table refuses the wrong kind.
    const MemoryKind mem = b.device == BufferDevice::CUDA   ? MemoryKind::DEVICE
                           : b.device == BufferDevice::HOST ? MemoryKind::HOST
                                                            : MemoryKind::UNKNOWN;
    // A contiguous torch tensor bound by address (read_torch): its bytes must cover the span
    // the declaration lends it, or the engine would read or write past its end.
    // An overridden operand is described by its override (the core checks it), not the declaration.
    if (b.dims.empty() && b.nbytes >= 0 && b.nbytes < d.bytes && !(overrides && overrides->has(uid)))
      throw StatusError{Status(ErrorCode::INVALID_VARIANT_PACK,
                               who.text() + ": rule buffer_span: the torch tensor covers " + std::to_string(b.nbytes) +
                                   " bytes, the declaration spans " + std::to_string(d.bytes) +
                                   " bytes; bind a tensor of the declared extents, or a contiguous one at least "
                                   "that large")};
    if (b.dims.empty()) {  // a bare address, or a contiguous torch tensor that covers it: the declaration
      OperandBuffer a = OperandBuffer::address(b.data);
      a.memory = mem;
      if (build_pack) pack.set(uid, a);
      if (facts) facts->add(uid, a);
    } else {
      OperandBuffer a = OperandBuffer::make(b.data, b.dims, b.strides, b.byte_geometry ? DataType::UINT8 : b.dtype, mem);
      a.read_only = b.read_only;  // engines refuse a read-only output too (their operand tables)
      if (build_pack) pack.set(uid, a);
      if (facts) facts->add(uid, a);
    }
  }
  if (overrides) add_overrides(pack, *overrides);
  return n;
}

// The caller pack of `facts` (to_variant_pack's entries, in their order).
void set_all(VariantPack& pack, const Facts& facts) {
  for (const auto& [uid, b] : facts) pack.set(uid, b);
}

Workspace to_workspace(nb::handle w) {
  if (w.is_none()) return {};
  static constexpr BufferRole kWho{nullptr, -1, "workspace"};
  if (PyLong_CheckExact(w.ptr())) return {address_of(w, kWho), INT64_MAX};  // the caller vouches for its size
  if (is_torch_tensor(w)) {  // the hot path: no DLPack round trip for the usual torch workspace
    Buffer b = read_torch(w, kWho, /*by_address=*/true, /*bytes_only=*/true);
    if (!b.dims.empty())  // nbytes counts elements, not memory, of a strided or expanded tensor
      throw StatusError{Status(ErrorCode::INVALID_VALUE, "workspace is a torch tensor that is not contiguous; its "
                                                         "bytes are not its memory: pass a contiguous tensor")};
    return {b.data, b.nbytes};
  }
  Buffer b = normalize_buffer(w, kWho);
  if (b.read_only)
    throw StatusError{Status(ErrorCode::INVALID_VALUE, "workspace is a read-only buffer (numpy writeable=False, a "
                                                       "DLPack read-only tensor, bytes or a read-only memoryview); "
                                                       "the plan writes its workspace")};
  if (b.nbytes < 0) b.nbytes = INT64_MAX;  // a bare address: the caller vouches for its size
  return {b.data, b.nbytes};
}

// `h` as a handle (not None); TypeError naming `what` and h's type when it is none.
PyHandle* handle_of(nb::handle h, const char* what) {
  PyHandle* p = nullptr;
  if (!nb::try_cast<PyHandle*>(h, p) || !p) {
    std::string msg = what;  // appended piece by piece (GCC 12 misreports the concatenation under -O3)
    msg += ": expected a handle made by create_handle() or None, got an object of type '";
    msg += nb::type_name(h.type()).c_str();
    msg += "'";
    throw nb::type_error(msg.c_str());
  }
  return p;
}

// The call's handle, else the graph's (pygraph.handle, which the graph keeps alive), else none.
const Handle* to_handle(nb::handle h, const PyGraph& g) {
  if (h.is_none()) h = g.handle_object();
  if (h.is_none()) return nullptr;
  return handle_of(h, "handle");
}

// What one call runs with, read with the GIL held: the workspace and the caller's handle.
// The plan and the device (and the handle engines see: the caller's stream, exactly the
// routed device) are the core's (Graph::execute_routed), decided with the GIL released.
struct Call {
  Workspace ws;
  const Handle* inner = nullptr;  // the caller's handle (its stream, its device), or none
};

Call prepare_call(PyGraph& g, const Normalized& n, nb::handle workspace, nb::handle handle) {
  if (n.graph != &g) throw nb::value_error("this prepared variant pack was made for another graph");
  return Call{to_workspace(workspace), to_handle(handle, g)};
}

// A variant pack normalised ahead of time (pygraph.prepare_variant_pack): execute skips the
// dict walk and, once the graph is planned, the core's normalisation too (`ready`, made by
// Graph::prepare_variant_pack). The buffers must stay alive and in place while it is used.
// The pack keeps its graph alive (keep_alive on prepare_variant_pack), so `n.graph` never
// dangles and no later graph can take its address while the pack lives.
// (A planned graph cannot be replaced by deserialize, so `ready` stays the graph's.)
struct PreparedPack {
  Normalized n;
  VariantPack ready;  // n.pack against the graph's operands; empty: execute normalises n.pack

  PreparedPack(PyGraph& g, Normalized normalized) : n(std::move(normalized)) {
    // A refusal leaves `ready` empty (Graph::prepare_variant_pack's contract): execute
    // then normalises n.pack again and raises why.
    if (g.is_planned()) (void)g.prepare_variant_pack(n.pack, ready);
  }
  // The pack execute hands the core.
  const VariantPack& pack() const { return ready.normalized() ? ready : n.pack; }
};

// execute / execute_plan_at_index (index < 0: the selected plan), normalising everything once.
// With overrides (non-empty): the caller's pack plus override_shape per entry; a
// prepared pack is copied first (its normalised form holds no override).
// `none_key`: a None key of a dict pack throws NoneKey (execute's; see to_variant_pack).
void run(PyGraph& g, nb::handle variant_pack, nb::handle workspace, nb::handle handle, std::int64_t index,
         const Overrides& overrides = {}, bool none_key = false) {
  PreparedPack* prepared = nullptr;
  Normalized local;
  std::shared_ptr<const PyGraph::LastPack> same;  // the last call's normalised pack, when this one reads the same
  const bool over = !overrides.uids.empty();
  if (PyDict_Check(variant_pack.ptr()) || !nb::try_cast<PreparedPack*>(variant_pack, prepared) || !prepared) {
    // Every check of the walk runs on this call's buffers; only the core's normalisation of
    // identical facts is skipped (a pack with overrides, or a graph not yet planned, is
    // normalised each call).
    if (!over && g.is_planned()) {
      std::shared_ptr<const PyGraph::LastPack> last = g.last_pack();
      FactLog log(last ? &last->facts : nullptr);
      local = to_variant_pack(g, variant_pack, nullptr, &log, /*build_pack=*/false, none_key);
      if (log.same()) {
        same = std::move(last);
      } else {
        Facts facts = std::move(log).take();
        set_all(local.pack, facts);
        auto made = std::make_shared<PyGraph::LastPack>();
        if (g.prepare_variant_pack(local.pack, made->ready).is_good()) {  // refused: execute says why
          made->facts = std::move(facts);
          same = made;
          g.set_last_pack(std::move(made));
        }
      }
    } else {
      local = to_variant_pack(g, variant_pack, over ? &overrides : nullptr, nullptr, true, none_key);
    }
  } else if (over) {
    local = prepared->n;
    add_overrides(local.pack, overrides);
    prepared = nullptr;
  }
  const Normalized& n = prepared ? prepared->n : local;
  const Call c = prepare_call(g, n, workspace, handle);
  const VariantPack& pack = prepared ? prepared->pack() : same ? same->ready : n.pack;
  Status s;
  {
    nb::gil_scoped_release release;
    s = g.execute_routed(pack, n.kinds, c.ws, c.inner, index);
  }
  throw_if(s);
}

// Whether a dict pack needs pygraph's Python-level handling before the C++ walk
// (_graph.py pygraph._execute_hooks): a None key (ignored; the walk meets it and execute
// then sends the pack to the hooks, so it costs no lookup here), a pass-by-value tensor in the
// graph (its entries are checked against the value and dropped), one declared without a
// value (_deferred: the graph is built again per value), cudnn's output aliases
// (_aliases), a deserialized graph's key map (_keys_by_uid). Without any, execute goes
// straight to the C++ walk: no Python frame per call. The last three are looked up in the
// instance __dict__ only once pygraph has marked the graph (_mark_python_hooks, where it
// writes them): a graph that never had them costs no dict lookups.
bool needs_python_hooks(const PyGraph& g, nb::handle self, nb::handle pack) {
  if (!PyDict_Check(pack.ptr())) return false;
  if (g.has_pass_by_value()) return true;
  if (!g.python_hooks()) return false;  // pygraph has written none of the attributes below
  static PyObject* const names[] = {PyUnicode_InternFromString("_deferred"), PyUnicode_InternFromString("_aliases"),
                                    PyUnicode_InternFromString("_keys_by_uid")};
  nb::object dict = nb::steal(PyObject_GenericGetDict(self.ptr(), nullptr));
  if (!dict.is_valid()) {  // a plain _GraphBase: no __dict__, no hooks
    PyErr_Clear();
    return false;
  }
  for (PyObject* name : names) {
    PyObject* v = PyDict_GetItemWithError(dict.ptr(), name);  // borrowed
    if (!v) {
      if (PyErr_Occurred()) throw nb::python_error();
      continue;
    }
    const int truth = PyObject_IsTrue(v);
    if (truth < 0) throw nb::python_error();
    if (truth) return true;
  }
  return false;
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
  nb::class_<PreparedPack>(m, "prepared_variant_pack")
      .def("__len__", [](const PreparedPack& p) { return p.n.pack.size(); });
  cls.def("_set_device_properties",
          [](PyGraph& g, const std::string& json) { g.set_device_properties(unwrap(DeviceProperties::from_json(json))); })
      .def("_target_handle_device",
           [](PyGraph& g, const PyHandle& h) {
             if (h.device_props) g.set_device_properties(*h.device_props);
           },
           nb::arg("handle"), "Plans for the device the handle drives (nothing for a host-only handle).")
      .def("_target_device",
           [](PyGraph& g, int ordinal) {
             const auto& props = device_properties_of(ordinal);
             if (props.is_bad()) return false;
             g.set_device_properties(props.value());
             return true;
           },
           nb::arg("ordinal"), "Plans for CUDA device `ordinal` read through the runtime; False when it cannot be read.")
      .def_prop_ro("_has_device_target", [](const PyGraph& g) { return g.plan_target().has_device(); })
      .def("create_execution_plans",
           [](PyGraph& g, nb::handle modes) {
             throw_if(g.create_execution_plans(to_modes(modes)));
           },
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
      .def("get_host_plan_index", [](const PyGraph& g) { return g.host_plan_index(); },
           "The plan that runs host buffers (its engine needs no device: the reference), -1 when none.")
      .def("set_host_fallback", [](PyGraph& g, bool allow) { g.set_host_fallback(allow); }, nb::arg("allow"),
           "Lets check_support / build_plans take the host reference on a graph planned for a device that no "
           "device engine accepts (off by default: GraphNotSupportedError, as cudnn-frontend).")
      .def_prop_ro("host_fallback", [](const PyGraph& g) { return g.host_fallback(); })
      .def("set_dynamic_shapes", [](PyGraph& g, bool enabled) { g.set_dynamic_shapes(enabled); }, nb::arg("enabled"),
           "Plans the graph for execute-time shape overrides from the start (before planning): the cuDNN engine "
           "lowers it with cuDNN's dynamic-shape flag for its heuristics, configs and built plan. "
           "pygraph(is_dynamic_shape_enabled=True) sets it.")
      .def_prop_ro("dynamic_shapes", [](const PyGraph& g) { return g.dynamic_shapes(); })
      .def("check_support", [](PyGraph& g) { throw_if(g.check_support()); })
      .def("build_plans", [](PyGraph& g, BuildPlanPolicy p) { throw_if(g.build_plans(p)); },
           nb::arg("policy") = BuildPlanPolicy::HEURISTICS_CHOICE)
      .def("build_plan_at_index", [](PyGraph& g, std::int64_t i) { throw_if(g.build_plan_at_index(i)); }, nb::arg("index"))
      .def("select_plan", [](PyGraph& g, std::int64_t i) { throw_if(g.select_plan(i)); }, nb::arg("index"))
      .def("get_selected_plan_index", [](const PyGraph& g) { return unwrap(g.get_selected_plan_index()); })
      .def("get_workspace_size",
           [](nb::handle self, nb::handle variant_pack, nb::handle uids, nb::handle shapes, nb::handle strides) {
             PyGraph& g = nb::cast<PyGraph&>(self);
             if (variant_pack.is_none()) {
               if (!uids.is_none())
                 throw nb::value_error("get_workspace_size: override_uids need the call's variant_pack (the "
                                       "overrides are read against its buffers)");
               return unwrap(g.get_workspace_size());
             }
             const Overrides o = to_overrides(uids, shapes, strides);
             PreparedPack* prepared = nullptr;
             Normalized local;
             if (nb::try_cast<PreparedPack*>(variant_pack, prepared) && prepared) {
               local = prepared->n;
               if (!o.uids.empty()) add_overrides(local.pack, o);
             } else {
               local = to_variant_pack(g, variant_pack, o.uids.empty() ? nullptr : &o);
             }
             return unwrap(g.get_workspace_size(local.pack));
           },
           nb::arg("variant_pack").none() = nb::none(), nb::arg("override_uids").none() = nb::none(),
           nb::arg("override_shapes").none() = nb::none(), nb::arg("override_strides").none() = nb::none(),
           "Bytes of workspace the selected plan needs; with `variant_pack` (and execute's override_uids / "
           "override_shapes / override_strides) the bytes that call needs at its extents (a plan whose scratch "
           "follows the shapes: docs/dynamic_shapes.md). An override the plan refuses raises as execute would.")
      .def("get_workspace_size_plan_at_index",
           [](const PyGraph& g, std::int64_t i) { return unwrap(g.get_workspace_size_plan_at_index(i)); }, nb::arg("index"))
      .def("deselect_workspace_greater_than", [](PyGraph& g, std::int64_t b) { throw_if(g.deselect_workspace_greater_than(b)); },
           nb::arg("workspace"))
      .def("deselect_engines", [](PyGraph& g, const std::vector<std::string>& s) { throw_if(g.deselect_engines(s)); },
           nb::arg("engine_names"))
      .def("deselect_numeric_notes",
           [](PyGraph& g, const std::vector<NumericalNote>& n) { throw_if(g.deselect_numeric_notes(n)); },
           nb::arg("notes"), "Deselects every plan having any of `notes` (numerical_note).")
      .def("deselect_behavior_notes",
           [](PyGraph& g, const std::vector<BehaviorNote>& n) { throw_if(g.deselect_behavior_notes(n)); },
           nb::arg("notes"), "Deselects every plan having any of `notes` (behavior_note).")
      .def("select_numeric_notes",
           [](PyGraph& g, const std::vector<NumericalNote>& n) { throw_if(g.select_numeric_notes(n)); },
           nb::arg("notes"), "Keeps only plans having all of `notes` (numerical_note).")
      .def("select_behavior_notes",
           [](PyGraph& g, const std::vector<BehaviorNote>& n) { throw_if(g.select_behavior_notes(n)); },
           nb::arg("notes"), "Keeps only plans having all of `notes` (behavior_note).")
      .def("get_numerical_notes_for_plan_at_index",
           [](const PyGraph& g, std::int64_t i) { return unwrap(g.get_plan_notes_at_index(i)).numerical; },
           nb::arg("index"))
      .def("get_behavior_notes_for_plan_at_index",
           [](const PyGraph& g, std::int64_t i) { return unwrap(g.get_plan_notes_at_index(i)).behavior; },
           nb::arg("index"))
      .def("serialize_plan",
           [](PyGraph& g, std::optional<std::int64_t> i) {
             return unwrap(i ? g.serialize_plan_at_index(*i) : g.serialize_plan());
           },
           nb::arg("index").none() = nb::none(),
           "The built plan `index` (default: the selected one) as a JSON record: graph key, engine_id, knobs, "
           "notes and the backend's own serialised plan where it has one.")
      .def("deserialize_plan",
           [](PyGraph& g, const std::string& record) {
             throw_if(g.deserialize_plan(record));
           },
           nb::arg("record"), "Plans this graph from a serialize_plan record (one-shot).")
      .def("execute",
           [](nb::handle self, nb::handle variant_pack, nb::handle workspace, nb::handle handle, nb::handle uids,
              nb::handle shapes, nb::handle strides) -> nb::object {
             static PyObject* s_hooks = PyUnicode_InternFromString("_execute_hooks");
             PyGraph& g = nb::cast<PyGraph&>(self);
             if (needs_python_hooks(g, self, variant_pack) && nb::hasattr(self, s_hooks))
               return self.attr(s_hooks)(variant_pack, workspace, handle, uids, shapes, strides);
             const Overrides o = to_overrides(uids, shapes, strides);
             try {  // a None key is met by the walk (no lookup per call): the pack goes to the hooks
               run(g, variant_pack, workspace, handle, -1, o, /*none_key=*/true);
             } catch (const NoneKey&) {
               if (nb::hasattr(self, s_hooks))
                 return self.attr(s_hooks)(variant_pack, workspace, handle, uids, shapes, strides);
               run(g, variant_pack, workspace, handle, -1, o);  // a plain _GraphBase: the walk refuses the key
             }
             return nb::none();
           },
           nb::arg("variant_pack"), nb::arg("workspace").none() = nb::none(), nb::arg("handle").none() = nb::none(),
           nb::arg("override_uids").none() = nb::none(), nb::arg("override_shapes").none() = nb::none(),
           nb::arg("override_strides").none() = nb::none(),
           "Runs the selected plan on `variant_pack` ({tensor or uid: buffer}, or a prepared pack). None keys are "
           "ignored. A pass-by-value tensor declared without a value, or made by tensor_like of a host scalar, takes "
           "its value from the pack (a value the graph was not built with builds it again, with the selected plan's "
           "engine and knobs, once per value); one declared with value= must be given that value. override_uids / "
           "override_shapes / override_strides: execute-time shapes, three parallel lists (uid or tensor; extents in "
           "the graph's axis order; strides, or [] / None for packed row-major), elements. An override keeps the "
           "tensor's layout class and the plan's engine must take it (docs/dynamic_shapes.md); a refused one raises "
           "naming the tensor, its port and the rule, and nothing runs.")
      .def_prop_rw(
          "handle", [](const PyGraph& g) { return nb::borrow(g.handle_object()); },
          [](PyGraph& g, nb::object h) {
            if (!h.is_none()) handle_of(h, "pygraph.handle");
            g.set_handle_object(std::move(h));
          },
          nb::for_setter(nb::arg("value").none()),
          "The handle execute uses when the call names none (None: no handle); held by the graph.")
      .def("_mark_python_hooks", [](PyGraph& g) { g.mark_python_hooks(); },
           "pygraph calls it where it stores _deferred, _aliases or _keys_by_uid: from then on execute looks "
           "them up to decide whether a dict pack needs _execute_hooks (until then it skips the lookups).")
      .def("_execute_direct",
           [](PyGraph& g, nb::handle variant_pack, nb::handle workspace, nb::handle handle, nb::handle uids,
              nb::handle shapes, nb::handle strides) {
             run(g, variant_pack, workspace, handle, -1, to_overrides(uids, shapes, strides));
           },
           nb::arg("variant_pack"), nb::arg("workspace").none() = nb::none(), nb::arg("handle").none() = nb::none(),
           nb::arg("override_uids").none() = nb::none(), nb::arg("override_shapes").none() = nb::none(),
           nb::arg("override_strides").none() = nb::none(),
           "execute() after pygraph's Python-level handling of the pack (_execute_hooks): the C++ walk and run.")
      .def("prepare_variant_pack",
           [](nb::handle self, nb::handle variant_pack) {
             PyGraph& g = nb::cast<PyGraph&>(self);
             return new PreparedPack(g, to_variant_pack(g, variant_pack));
           },
           nb::arg("variant_pack"), nb::rv_policy::take_ownership, nb::keep_alive<0, 1>(),
           "The dict normalised once, for repeated execute() calls on the same buffers (they must stay alive). "
           "The pack keeps this graph alive.")
      .def("_normalize_only",
           [](nb::handle self, nb::handle variant_pack, nb::handle workspace, nb::handle handle) {
             PyGraph& g = nb::cast<PyGraph&>(self);
             Normalized n = to_variant_pack(g, variant_pack);
             const Call c = prepare_call(g, n, workspace, handle);
             (void)unwrap(g.route(n.kinds, -1, c.inner));  // what execute_routed decides first
             nb::gil_scoped_release release;
             return static_cast<std::int64_t>(n.pack.size()) + (c.ws.data ? 1 : 0);
           },
           nb::arg("variant_pack"), nb::arg("workspace").none() = nb::none(), nb::arg("handle").none() = nb::none(),
           "execute() without the run: the binding's own per-call cost (bench/python_overhead.py).")
      .def("_execute_repeat",
           [](nb::handle self, nb::handle variant_pack, nb::handle workspace, std::int64_t count) {
             PyGraph& g = nb::cast<PyGraph&>(self);
             Normalized n = to_variant_pack(g, variant_pack);
             const Call c = prepare_call(g, n, workspace, nb::none());
             Status s;
             {
               nb::gil_scoped_release release;
               for (std::int64_t i = 0; i < count && s.is_good(); ++i)
                 s = g.execute_routed(n.pack, n.kinds, c.ws, c.inner, -1);
             }
             throw_if(s);
           },
           nb::arg("variant_pack"), nb::arg("workspace").none(), nb::arg("count"),
           "The C++ execute of the same plan and pack, `count` times back to back with the GIL released "
           "(bench/python_overhead.py's C++ row).")
      .def("execute_plan_at_index",
           [](nb::handle self, nb::handle variant_pack, nb::handle workspace, std::int64_t index, nb::handle handle,
              nb::handle uids, nb::handle shapes, nb::handle strides) {
             if (index < 0)
               throw StatusError{Status(ErrorCode::INVALID_VALUE, "plan index " + std::to_string(index) + " is negative")};
             run(nb::cast<PyGraph&>(self), variant_pack, workspace, handle, index, to_overrides(uids, shapes, strides));
           },
           nb::arg("variant_pack"), nb::arg("workspace").none(), nb::arg("index"),
           nb::arg("handle").none() = nb::none(), nb::arg("override_uids").none() = nb::none(),
           nb::arg("override_shapes").none() = nb::none(), nb::arg("override_strides").none() = nb::none());
}

}  // namespace opgraph::py
