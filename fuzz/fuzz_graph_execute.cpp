// Feeds arbitrary bytes to graph JSON deserialization, then — for a graph that
// validates and plans on the CPU reference engine (host only, no device) — runs
// it on host buffers: variant-pack normalisation (src/exec/normalize.cpp), the
// declared layout (src/exec/declared_layout.cpp) and the reference kernels
// (src/engines/reference/) see every geometry the fuzzer invents.
//
// Buffers. Every operand (non-virtual, non-pass-by-value tensor wired to a node)
// gets a host buffer sized from its declared span, computed here in 128-bit
// arithmetic, bound as a 1-D buffer of the declared dtype, and filled with
// pseudo-random data seeded from a hash of the input (so a crash replays):
// floats in [-1, 1]; integers in [0, 3], a "cu_seqlens" input a valid partition
// of the node's tokens — or, for one input in eight, any small value (negative
// included) and now and then an extreme one: the index, length and offset inputs
// the reference must check.
// An operand whose true span is over kMaxBufferBytes (or overflows int64) gets a
// SMALL buffer instead (kSmallElements, described with its real size): the
// library must refuse it; running it would read or write past the buffer, so an
// OK from execute is a bug (trap), and so is a crash.
//
// Cost. A graph whose buffers total over kMaxTotalBytes, with more than
// kMaxNodes nodes, a tensor of more than kMaxElements elements, an estimated
// work (per node: the elements of its tensors x their largest extent, summed — a
// matmul's M*N*K, attention's B*H*S*S*D are below it) over
// kMaxWork, or an integer attribute over kMaxIntAttribute in magnitude (it may size
// the reference's temporaries: a paged max sequence length) is skipped after
// validate, so each input runs in well under a second under
// ASan+UBSan.
//
// OPGRAPH_FUZZ_VERBOSE=1 prints where each input stopped (triage: replay one
// input with `fuzz_graph_execute FILE`).
//
// Every input it finds is a regression test: in tests/exec/test_fuzz_execute_regressions.cpp
// (planning and execute) or tests/ir/test_fuzz_regressions.cpp (IR only).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <set>
#include <string_view>
#include <variant>
#include <vector>

#include "opgraph/graph.h"

namespace {

constexpr std::int64_t kReferenceEngineId = 20000;
constexpr __int128 kMaxBufferBytes = 16ll << 20;
constexpr __int128 kMaxTotalBytes = 64ll << 20;
constexpr std::size_t kMaxNodes = 32;
constexpr __int128 kMaxElements = 1 << 20;
constexpr __int128 kMaxWork = 1 << 25;
constexpr std::int64_t kMaxIntAttribute = 1 << 12;
constexpr std::int64_t kSmallElements = 64;

using opgraph::DataType;
using opgraph::Tensor;

// Elements a tensor holds (product of dims), exactly; -1 when it does not fit
// (any factor negative or the product past 2^100).
__int128 element_count(const Tensor& t) {
  __int128 n = 1;
  for (std::int64_t d : t.get_dim()) {
    if (d < 0) return -1;
    n *= d;
    if (n > (__int128(1) << 100)) return -1;
  }
  return n;
}

// Elements the declared geometry spans, exactly: 1 + sum((d - 1) * |s|); 0 when
// an extent is 0; -1 on a negative extent. 128 bits hold 12 terms of 2^63 x 2^63 / 2^2.
__int128 span_elements(const Tensor& t) {
  const auto& d = t.get_dim();
  const auto& s = t.get_stride();
  __int128 span = 1;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i] < 0) return -1;
    if (d[i] == 0) return 0;
  }
  for (std::size_t i = 0; i < d.size() && i < 12; ++i) {
    __int128 st = i < s.size() ? s[i] : 1;
    if (st < 0) st = -st;
    span += __int128(d[i] - 1) * st;
  }
  if (d.size() > 12) return -1;
  return span;
}

// Bytes for `elements` of `t` (fp4: two per byte, rounded up).
__int128 bytes_for(DataType t, __int128 elements) {
  const int bits = opgraph::bits_of(t);
  return (elements * (bits > 0 ? bits : 8) + 7) / 8;
}

// Returns 0 (libFuzzer's "keep going"), saying why under OPGRAPH_FUZZ_VERBOSE.
int stop(const char* where, const opgraph::Status& s = opgraph::Status::ok()) {
  static const bool verbose = std::getenv("OPGRAPH_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "fuzz_graph_execute: %s%s%s\n", where, s.is_bad() ? ": " : "", s.is_bad() ? s.to_string().c_str() : "");
  return 0;
}

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

std::uint64_t fnv1a(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

// Integers that break unchecked conversions and sums (truncated to the type's width).
constexpr std::int64_t kExtremes[] = {INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN, (1ll << 53) + 1, -(1ll << 62)};

// Fills `bytes` bytes at `p` with values of `t` (element by element for types of a
// byte or wider; fp4 and fp8 get random bytes: every code is a value or a NaN).
void fill(DataType t, unsigned char* p, std::size_t bytes, Rng& rng, bool wild_integers) {
  const int bits = opgraph::bits_of(t);
  if (t == DataType::FLOAT) {
    for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
      float v = static_cast<float>(static_cast<double>(rng.next() >> 11) / 9007199254740992.0 * 2.0 - 1.0);
      std::memcpy(p + i, &v, 4);
    }
    return;
  }
  if (t == DataType::DOUBLE) {
    for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
      double v = static_cast<double>(rng.next() >> 11) / 9007199254740992.0 * 2.0 - 1.0;
      std::memcpy(p + i, &v, 8);
    }
    return;
  }
  if (t == DataType::HALF || t == DataType::BFLOAT16) {
    // Sign, a small exponent range and any mantissa: finite values of magnitude ~[2^-4, 2).
    for (std::size_t i = 0; i + 2 <= bytes; i += 2) {
      std::uint64_t r = rng.next();
      std::uint16_t v = t == DataType::HALF ? std::uint16_t(((r & 1) << 15) | ((11 + (r >> 1) % 5) << 10) | ((r >> 8) & 0x3ff))
                                            : std::uint16_t(((r & 1) << 15) | ((123 + (r >> 1) % 5) << 7) | ((r >> 8) & 0x7f));
      std::memcpy(p + i, &v, 2);
    }
    return;
  }
  if (opgraph::is_floating(t) || bits < 8) {
    for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(rng.next());
    return;
  }
  // Integers and booleans, little-endian, as wide as the type.
  const std::size_t w = static_cast<std::size_t>(bits / 8);
  for (std::size_t i = 0; i + w <= bytes; i += w) {
    std::uint64_t r = rng.next();
    std::int64_t v = t == DataType::BOOLEAN ? std::int64_t(r & 1)
                     : !wild_integers       ? std::int64_t(r & 3)
                     : (r & 15) != 0        ? std::int64_t((r >> 4) % 41) - 20
                                            : kExtremes[(r >> 4) % std::size(kExtremes)];
    std::memcpy(p + i, &v, std::min<std::size_t>(w, 8));
  }
}

// An operand of the graph's declared layout (every non-virtual, non-pass-by-value
// tensor wired to a node, ragged offsets included) and the input port it first
// feeds ("" when none: an output or a ragged offset).
struct Operand {
  const Tensor* tensor;
  const opgraph::Node* node;
  std::string_view port;
};

std::vector<Operand> operands_of(const opgraph::OpGraph& g) {
  std::vector<Operand> out;
  std::set<const Tensor*> seen;
  auto add = [&](const Tensor* t, const opgraph::Node* n, std::string_view port) {
    if (t && !t->get_is_virtual() && !t->get_is_pass_by_value() && seen.insert(t).second) out.push_back({t, n, port});
  };
  for (const auto& n : g.nodes()) {
    for (std::size_t p = 0; p < n->inputs().size(); ++p)
      for (const auto& t : n->inputs()[p]) {
        add(t.get(), n.get(), p < n->spec().inputs.size() ? n->spec().inputs[p].name : std::string_view());
        if (t) add(t->get_ragged_offset().get(), nullptr, {});
      }
    for (const auto& port : n->outputs())
      for (const auto& t : port) {
        add(t.get(), nullptr, {});
        if (t) add(t->get_ragged_offset().get(), nullptr, {});
      }
  }
  return out;
}

// Sequence offsets that pass the varlen rule (0 = c[0] <= ... <= c[n-1] = T, T the
// node's token count: its "q" input's dim 0, else its first input's), written
// over a packed INT32/INT64 buffer; anything else keeps its random fill.
void fill_cu_seqlens(const Operand& o, unsigned char* p, std::size_t bytes, Rng& rng) {
  const DataType dt = o.tensor->get_data_type();
  if ((dt != DataType::INT32 && dt != DataType::INT64) || !o.node) return;
  opgraph::TensorPtr first = o.node->input("q");
  if (!first && !o.node->inputs().empty() && !o.node->inputs().front().empty()) first = o.node->inputs().front().front();
  if (!first || first->get_dim().empty()) return;
  const std::int64_t total = first->get_dim()[0];
  const std::size_t w = dt == DataType::INT32 ? 4 : 8, n = bytes / w;
  if (n < 2 || total < 0) return;
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = total > 0 ? static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(total + 1)) : 0;
  std::sort(v.begin(), v.end());
  v.front() = 0;
  v.back() = total;
  for (std::size_t i = 0; i < n; ++i) std::memcpy(p + i * w, &v[i], w);  // little-endian: the low bytes
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = opgraph::Graph::deserialize(text);
  if (!parsed) return stop("deserialize", parsed.status());
  opgraph::Graph g = std::move(parsed.value());
  if (opgraph::Status v = g.validate(); v.is_bad()) return stop("validate", v);
  if (g.nodes().size() > kMaxNodes) return stop("over the node cap");

  // The cost caps, over every tensor (virtual ones are the reference's temporaries).
  __int128 total_bytes = 0, work = 0;
  for (const auto& t : g.tensors()) {
    __int128 n = element_count(*t);
    if (n < 0 || n > kMaxElements) return stop("a tensor over the element cap");
    if (!t->get_is_virtual()) {
      __int128 span = span_elements(*t);
      if (span >= 0 && bytes_for(t->get_data_type(), span) <= kMaxBufferBytes)
        total_bytes += bytes_for(t->get_data_type(), span);
    }
  }
  if (total_bytes > kMaxTotalBytes) return stop("over the buffer cap");
  for (const auto& node : g.nodes()) {
    __int128 elements = 0, extent = 1;
    for (const auto* ports : {&node->inputs(), &node->outputs()})
      for (const auto& port : *ports)
        for (const auto& t : port) {
          if (!t) continue;
          elements += element_count(*t);
          for (std::int64_t d : t->get_dim()) extent = std::max<__int128>(extent, d);
        }
    work += elements * extent;
  }
  if (work > kMaxWork) return stop("over the work cap");
  for (const auto& node : g.nodes())  // an integer attribute can size work (a paged max sequence length)
    for (const auto& a : node->spec().attrs) {
      const opgraph::AttrValue* v = node->attr(a.name);
      const auto* i = v ? std::get_if<std::int64_t>(v) : nullptr;
      const auto* list = v ? std::get_if<std::vector<std::int64_t>>(v) : nullptr;
      auto big = [](std::int64_t x) { return x > kMaxIntAttribute || x < -kMaxIntAttribute; };
      if ((i && big(*i)) || (list && std::any_of(list->begin(), list->end(), big)))
        return stop("an integer attribute over the cap");
    }

  // Plans on the reference engine alone: the host, no device.
  if (opgraph::Status p = g.create_execution_plan(kReferenceEngineId, {}); p.is_bad()) return stop("plan", p);
  if (opgraph::Status b = g.build_plans(); b.is_bad()) return stop("build", b);
  auto ws_size = g.get_workspace_size();
  if (!ws_size || ws_size.value() < 0 || ws_size.value() > (64 << 20)) return stop("workspace");

  Rng rng{fnv1a(data, size)};
  const bool wild_integers = (rng.next() & 7) == 0;
  std::vector<std::vector<unsigned char>> buffers;
  buffers.reserve(g.tensors().size());
  opgraph::VariantPack pack;
  bool refusal_expected = false;
  for (const Operand& o : operands_of(g)) {
    const Tensor* t = o.tensor;
    const DataType dt = t->get_data_type();
    __int128 span = span_elements(*t);
    std::int64_t elements = 0;
    if (span >= 0 && bytes_for(dt, span) <= kMaxBufferBytes) {
      elements = static_cast<std::int64_t>(span);
    } else {
      elements = kSmallElements;  // too big to hold: the library must refuse this buffer
      refusal_expected = true;
    }
    if (dt == DataType::FP4_E2M1) elements += elements & 1;  // whole slots: two elements each
    const std::size_t bytes = static_cast<std::size_t>(bytes_for(dt, elements));
    buffers.emplace_back(bytes + 1, 0);  // + 1: a zero-span operand still has an address
    fill(dt, buffers.back().data(), bytes, rng, wild_integers);
    if (o.port == "cu_seqlens" && !wild_integers) fill_cu_seqlens(o, buffers.back().data(), bytes, rng);
    const std::int64_t dims[1] = {elements};
    pack.set(t->get_uid(), opgraph::OperandBuffer::make(buffers.back().data(), std::span<const std::int64_t>(dims, 1), {},
                                                        dt, opgraph::MemoryKind::HOST));
  }
  std::vector<unsigned char> ws(static_cast<std::size_t>(ws_size.value()) + 1);
  opgraph::Status s = g.execute(pack, opgraph::Workspace{ws.data(), ws_size.value()});
  if (refusal_expected && s.is_good()) __builtin_trap();  // ran on a buffer smaller than its declaration
  return stop(refusal_expected ? "execute (a buffer below its declaration)" : "execute", s);
}
