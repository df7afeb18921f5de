// ir/graph_hash.cpp — the streaming content hash (contracts in graph_hash.h).
#include "ir/graph_hash.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <variant>
#include <vector>

namespace opgraph::graph_hash {
namespace {

// Field tags: keep variable-length and optional parts of the walk unambiguous.
enum Tag : std::uint64_t {
  kBool = 0xb001, kInt, kFloat, kString, kEmptyList, kIntList, kFloatList,
  kPacked, kAsWritten, kNone, kSome, kEndNode,
};
constexpr std::uint64_t kStar = 0x2a2a2a2a2a2a2a2aull;   // an extent above 1 in a layout class
constexpr std::int64_t kNoAxis = -1;                       // an axis of extent 1 in a packed order

class Hasher {
 public:
  explicit Hasher(std::uint64_t domain) : a_(0x6a09e667f3bcc908ull ^ domain), b_(0xbb67ae8584caa73bull + domain) {}

  void word(std::uint64_t w) {
    a_ = murmur(a_ ^ w);
    b_ = stafford(b_ ^ std::rotl(w, 29) ^ (n_ * 0x9e3779b97f4a7c15ull));
    ++n_;
  }
  void i64(std::int64_t v) { word(static_cast<std::uint64_t>(v)); }
  void f64(double v) {
    if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();  // serialize writes every NaN "nan"
    word(std::bit_cast<std::uint64_t>(v));
  }
  void str(std::string_view s) {
    word(s.size());
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      word(w);
    }
    if (i < s.size()) {
      std::uint64_t w = 0;
      std::memcpy(&w, s.data() + i, s.size() - i);
      word(w);
    }
  }
  void ints(const std::vector<std::int64_t>& v) {
    word(v.size());
    for (auto x : v) i64(x);
  }
  Hash128 finish() const {
    return {murmur(a_ ^ n_), stafford(b_ ^ std::rotl(n_, 17))};
  }

 private:
  static std::uint64_t murmur(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
  }
  std::uint64_t a_, b_, n_ = 0;
};

// A stable insertion sort: no temporary buffer (std::stable_sort may allocate one),
// and the tensors of a graph are nearly always in uid order already.
template <class T, class Less>
void insertion_sort(T* first, T* last, Less less) {
  for (T* i = first + (first != last); i < last; ++i) {
    T v = *i;
    T* j = i;
    for (; j > first && less(v, *(j - 1)); --j) *j = *(j - 1);
    *j = v;
  }
}

// The layout class's extents and strides of one tensor (plan_cache.h states the
// rule): when `strides` are the packed strides of `dims` in some axis order, each
// extent as 1 or "*" and each axis's position in that order; else both as written.
void layout_of(Hasher& h, const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& strides) {
  const std::size_t r = dims.size();
  bool packed = r == strides.size();
  std::size_t small_axes[16];
  std::int64_t small_order[16];
  std::vector<std::size_t> large_axes;
  std::vector<std::int64_t> large_order;
  std::size_t* axes = small_axes;  // axes of extent above 1, innermost (smallest stride) first
  std::int64_t* order = small_order;
  if (r > 16) {
    large_axes.resize(r);
    large_order.resize(r);
    axes = large_axes.data();
    order = large_order.data();
  }
  std::size_t na = 0;
  if (packed) {
    for (std::size_t a = 0; a < r; ++a)
      if (dims[a] != 1) axes[na++] = a;
    insertion_sort(axes, axes + na, [&](std::size_t x, std::size_t y) { return strides[x] < strides[y]; });
    std::int64_t expect = 1;
    for (std::size_t i = 0; i < na && packed; ++i) {
      const std::size_t a = axes[i];
      if (strides[a] != expect || dims[a] <= 0 || __builtin_mul_overflow(expect, dims[a], &expect)) packed = false;
    }
  }
  if (!packed) {
    h.word(kAsWritten);
    h.ints(dims);
    h.ints(strides);
    return;
  }
  std::fill(order, order + r, kNoAxis);
  for (std::size_t i = 0; i < na; ++i) order[axes[i]] = static_cast<std::int64_t>(na - 1 - i);
  h.word(kPacked);
  h.word(r);
  for (std::size_t a = 0; a < r; ++a) h.word(dims[a] == 1 ? 1 : kStar);
  for (std::size_t a = 0; a < r; ++a) h.i64(order[a]);
}

// An attribute value as serialize() writes it: `spec` types it (a FLOAT given as an
// integer is its double; a FLOAT_LIST given as integers, doubles); an empty list is
// one value whatever its element type ("[]").
void attr(Hasher& h, const AttrValue& v, const AttrSpec* spec) {
  if (spec && spec->type == AttrType::FLOAT)
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
      h.word(kFloat);
      h.f64(static_cast<double>(*i));
      return;
    }
  if (const auto* l = std::get_if<std::vector<std::int64_t>>(&v)) {
    if (l->empty()) {
      h.word(kEmptyList);
    } else if (spec && spec->type == AttrType::FLOAT_LIST) {
      h.word(kFloatList);
      h.word(l->size());
      for (auto x : *l) h.f64(static_cast<double>(x));
    } else {
      h.word(kIntList);
      h.ints(*l);
    }
    return;
  }
  if (const auto* l = std::get_if<std::vector<double>>(&v)) {
    if (l->empty()) {
      h.word(kEmptyList);
      return;
    }
    h.word(kFloatList);
    h.word(l->size());
    for (double x : *l) h.f64(x);
    return;
  }
  if (const auto* b = std::get_if<bool>(&v)) h.word(kBool), h.word(*b);
  else if (const auto* i = std::get_if<std::int64_t>(&v)) h.word(kInt), h.i64(*i);
  else if (const auto* d = std::get_if<double>(&v)) h.word(kFloat), h.f64(*d);
  else if (const auto* s = std::get_if<std::string>(&v)) h.word(kString), h.str(*s);
}

}  // namespace

Result<Hash128> content_hash(OpGraph& g, Mode mode) {
  if (!g.is_frozen()) OPGRAPH_CHECK(g.assign_uids());
  Hasher h(mode == Mode::GRAPH ? 1 : 2);
  const GraphContext& c = g.context();
  h.str(c.name);
  h.word(static_cast<std::uint64_t>(c.io_data_type));
  h.word(static_cast<std::uint64_t>(c.intermediate_data_type));
  h.word(static_cast<std::uint64_t>(c.compute_data_type));

  // Tensors by ascending uid (unique once assigned), as serialize() lists them.
  const auto& all = g.tensors();
  const Tensor* small[32];
  std::vector<const Tensor*> large;
  const Tensor** ts = small;
  if (all.size() > 32) {
    large.resize(all.size());
    ts = large.data();
  }
  for (std::size_t i = 0; i < all.size(); ++i) ts[i] = all[i].get();
  insertion_sort(ts, ts + all.size(), [](const Tensor* a, const Tensor* b) { return a->get_uid() < b->get_uid(); });
  h.word(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Tensor& t = *ts[i];
    h.i64(t.get_uid());
    h.word(t.get_uid_assigned_by_user());
    h.str(t.get_name());
    if (mode == Mode::LAYOUT_CLASS) {
      layout_of(h, t.get_dim(), t.get_stride());
    } else {
      h.ints(t.get_dim());
      h.ints(t.get_stride());
    }
    h.word(static_cast<std::uint64_t>(t.get_data_type()));
    h.word(t.get_is_virtual());
    h.word(static_cast<std::uint64_t>(t.dim_set_by_user()) | static_cast<std::uint64_t>(t.stride_set_by_user()) << 1 |
           static_cast<std::uint64_t>(t.data_type_set_by_user()) << 2);
    h.word(static_cast<std::uint64_t>(t.get_reordering_type()));
    h.i64(t.get_alignment());
    if (const auto& r = t.get_ragged_offset()) h.word(kSome), h.i64(r->get_uid());
    else h.word(kNone);
    if (const auto& p = t.get_pass_by_value()) {
      h.word(kSome);
      h.word(static_cast<std::uint64_t>(p->data_type));
      h.word(p->kind == ScalarKind::RUNTIME_PARAM);
      if (is_integral(p->data_type) || p->data_type == DataType::BOOLEAN) h.i64(p->i);
      else h.f64(p->f);
    } else {
      h.word(kNone);
    }
  }

  h.word(g.nodes().size());
  for (const auto& n : g.nodes()) {
    const OpSpec& spec = n->spec();
    h.str(n->op());
    h.str(n->name());
    h.word(static_cast<std::uint64_t>(n->compute_data_type()));
    for (const auto& port : n->inputs()) {  // the op fixes the ports; an empty one is not written
      h.word(port.size());
      for (const auto& t : port) h.i64(t->get_uid());
    }
    for (const auto& port : n->outputs()) {  // serialize writes an output port's first tensor
      if (port.empty()) h.word(kNone);
      else h.word(kSome), h.i64(port.front()->get_uid());
    }
    const auto& attrs = n->attributes().values();  // by name, as serialize() writes them
    h.word(attrs.size());
    for (const auto& kv : attrs) {
      h.str(kv.first);
      attr(h, kv.second, spec.find_attr(kv.first));
    }
    h.word(kEndNode);
  }
  return h.finish();
}

}  // namespace opgraph::graph_hash
