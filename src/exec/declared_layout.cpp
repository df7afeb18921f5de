// exec/declared_layout.cpp — operand order and declared storage geometry, once per graph.
#include "exec/declared_layout.h"

#include <algorithm>
#include <climits>
#include <unordered_set>

#include "opgraph/node.h"

namespace opgraph {

bool packed_strides(int rank, const std::int64_t* dims, std::int64_t* strides) {
  std::int64_t s = 1;
  bool ok = true;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = s;  // INT64_MAX once the product failed: a span that overflows, refused downstream
    if (dims[i] < 0 || __builtin_mul_overflow(s, std::max<std::int64_t>(dims[i], 1), &s)) {
      ok = false;
      s = INT64_MAX;
    }
  }
  return ok;
}

bool is_dense(int rank, const std::int64_t* dims, const std::int64_t* strides) {
  // Sort the non-unit axes by stride; each stride must be the product of the
  // extents below it.
  std::array<int, kMaxRank> ax{};
  int n = 0;
  for (int i = 0; i < rank; ++i)
    if (dims[i] < 0) return false;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == 0) return true;  // empty: trivially one run
    if (dims[i] != 1) ax[n++] = i;
  }
  std::sort(ax.begin(), ax.begin() + n, [&](int a, int b) { return strides[a] < strides[b]; });
  std::int64_t want = 1;
  for (int k = 0; k < n; ++k) {
    if (strides[ax[k]] != want) return false;
    if (__builtin_mul_overflow(want, dims[ax[k]], &want)) return false;
  }
  return true;
}

std::optional<std::int64_t> element_count(int rank, const std::int64_t* dims) {
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i)
    if (dims[i] < 0 || __builtin_mul_overflow(n, dims[i], &n)) return std::nullopt;
  return n;
}

std::optional<std::int64_t> span_elements(int rank, const std::int64_t* dims, const std::int64_t* strides) {
  std::int64_t last = 0;
  bool empty = false;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0) return std::nullopt;
    if (dims[i] == 0) empty = true;
  }
  if (empty) return 0;
  for (int i = 0; i < rank; ++i) {
    if (strides[i] == INT64_MIN) return std::nullopt;  // |stride| does not fit
    const std::int64_t stride = strides[i] < 0 ? -strides[i] : strides[i];
    std::int64_t step = 0;
    if (__builtin_mul_overflow(dims[i] - 1, stride, &step) || __builtin_add_overflow(last, step, &last))
      return std::nullopt;
  }
  if (last == INT64_MAX) return std::nullopt;
  return last + 1;
}

std::optional<std::int64_t> slot_bytes(std::int64_t elements, int slot_bits) {
  std::int64_t bits = 0;
  if (elements < 0 || slot_bits < 0 || __builtin_mul_overflow(elements, static_cast<std::int64_t>(slot_bits), &bits))
    return std::nullopt;
  return bits / 8 + (bits % 8 != 0);
}

std::optional<std::string> to_storage_geometry(DataType t, int rank, std::int64_t* dims, std::int64_t* strides) {
  if (t != DataType::FP4_E2M1) return std::nullopt;
  int unit = -1;  // the innermost unit-stride axis with extent > 1, else any unit-stride axis
  for (int i = rank - 1; i >= 0; --i)
    if (strides[i] == 1 && (unit < 0 || (dims[unit] == 1 && dims[i] > 1))) unit = i;
  if (unit < 0) return std::string("fp4 packs two elements per slot along the unit-stride axis; this geometry has none");
  if (dims[unit] % 2 != 0)
    return "fp4 packs two elements per slot along the unit-stride axis (axis " + std::to_string(unit) +
           "); its extent " + std::to_string(dims[unit]) + " is odd and has no slot spelling";
  for (int i = 0; i < rank; ++i) {
    if (i == unit) continue;
    if (strides[i] % 2 != 0 && dims[i] > 1)
      return "fp4 stride " + std::to_string(strides[i]) + " of axis " + std::to_string(i) +
             " is odd: it does not land on a slot boundary";
    strides[i] = dims[i] > 1 ? strides[i] / 2 : std::max<std::int64_t>(strides[i] / 2, 1);
  }
  dims[unit] /= 2;
  return std::nullopt;
}

Result<DeclaredLayout> DeclaredLayout::compute(const OpGraph& g) {
  std::unordered_set<const Tensor*> seen;
  struct Found {
    const Tensor* t;
    bool out;  // produced by a node
    std::string port;
  };
  std::vector<Found> ops;
  auto add = [&](const Tensor* t, bool out, auto&& port) {
    if (!t || t->get_is_virtual() || t->get_is_pass_by_value()) return;
    if (!seen.insert(t).second) return;
    ops.push_back(Found{t, out, port()});
  };
  for (const auto& n : g.nodes()) {
    const OpSpec& spec = n->spec();
    for (std::size_t i = 0; i < n->inputs().size(); ++i)
      for (const auto& t : n->inputs()[i]) {
        const std::string_view pname = i < spec.inputs.size() ? spec.inputs[i].name : std::string_view("?");
        add(t.get(), g.producer_of(t.get()) != nullptr,
            [&] { return "input '" + std::string(pname) + "' of node '" + n->name() + "'"; });
        if (t) add(t->get_ragged_offset().get(), false, [&] { return "ragged offset of tensor '" + t->get_name() + "'"; });
      }
    for (std::size_t i = 0; i < n->outputs().size(); ++i)
      for (const auto& t : n->outputs()[i]) {
        const std::string_view pname = i < spec.outputs.size() ? spec.outputs[i].name : std::string_view("?");
        add(t.get(), true, [&] { return "output '" + std::string(pname) + "' of node '" + n->name() + "'"; });
        if (t) add(t->get_ragged_offset().get(), false, [&] { return "ragged offset of tensor '" + t->get_name() + "'"; });
      }
  }
  std::sort(ops.begin(), ops.end(), [](const Found& a, const Found& b) { return a.t->get_uid() < b.t->get_uid(); });
  DeclaredLayout L;
  L.slots_.reserve(ops.size());
  for (Found& f : ops) {
    const Tensor* t = f.t;
    DeclaredSlot s;
    s.uid = t->get_uid();
    s.tensor = t;
    s.dtype = t->get_data_type();
    s.is_output = f.out;
    s.port = std::move(f.port);
    const auto& d = t->get_dim();
    const auto& st = t->get_stride();
    if (d.size() > static_cast<std::size_t>(kMaxRank))
      return Status(ErrorCode::INVALID_VALUE, "tensor '" + t->get_name() + "' has " + std::to_string(d.size()) +
                                                  " dims; an operand may have at most " + std::to_string(kMaxRank));
    s.rank = static_cast<int>(d.size());
    std::copy(d.begin(), d.end(), s.dims.begin());
    auto overflow = [&, name = t->get_name()](const char* what) {  // not `t`: clang 14 cannot capture a binding
      return Status(ErrorCode::INVALID_VALUE, "tensor '" + name + "' (uid " + std::to_string(s.uid) +
                                                  "): rule span_overflow: its " + what +
                                                  " does not fit in int64 (or an extent is negative)");
    };
    if (st.size() == d.size()) std::copy(st.begin(), st.end(), s.strides.begin());
    else if (!packed_strides(s.rank, s.dims.data(), s.strides.data())) return overflow("element count");
    if (auto why = to_storage_geometry(s.dtype, s.rank, s.dims.data(), s.strides.data())) s.unspellable = *why;
    s.slot_bits = slot_bits(s.dtype);
    const auto span = span_elements(s.rank, s.dims.data(), s.strides.data());
    const auto bytes = span ? slot_bytes(*span, s.slot_bits) : std::nullopt;
    if (!bytes) return overflow(span ? "span in bytes" : "span in elements");
    s.bytes = *bytes;
    L.slots_.push_back(std::move(s));
  }
  return L;
}

std::int64_t DeclaredLayout::index_of(std::int64_t uid) const noexcept {
  auto it = std::lower_bound(slots_.begin(), slots_.end(), uid,
                             [](const DeclaredSlot& s, std::int64_t u) { return s.uid < u; });
  return it != slots_.end() && it->uid == uid ? it - slots_.begin() : -1;
}

}  // namespace opgraph
