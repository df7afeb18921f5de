// The execute fast path (exec/operand_table.h) through the reference engine:
// the set of calls it refuses equals the set of illegal calls (buffer variants ×
// declarations, legality written from the rules in the caller's terms), every
// accepted call computes the right answer, every refusal names the operand and
// the rule; FlashInfer-shaped bindings are accepted and compute exactly what the
// declared bindings compute.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <tuple>

#include "exec/operand_table.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using D = std::vector<std::int64_t>;

struct Variant {
  std::string name;
  bool bare = false;
  D dims, strides;                     // described variants (strides empty: packed)
  DataType dtype = DataType::NOT_SET;
  int misalign_bytes = 0;
  int dl = 0;                          // 0: OperandBuffer; 1: DLTensor CPU; 2: DLTensor CUDA; 3: versioned read-only
};

int width(DataType t) { return t == DataType::NOT_SET ? 4 : bits_of(t) / 8; }

D packed(const D& d) {
  D s(d.size());
  std::int64_t k = 1;
  for (std::size_t i = d.size(); i-- > 0;) {
    s[i] = k;
    k *= d[i];
  }
  return s;
}

bool dense(const D& d, const D& s) {
  std::vector<std::size_t> ax;
  for (std::size_t i = 0; i < d.size(); ++i)
    if (d[i] != 1) ax.push_back(i);
  std::sort(ax.begin(), ax.end(), [&](auto a, auto b) { return s[a] < s[b]; });
  std::int64_t want = 1;
  for (auto a : ax) {
    if (s[a] != want) return false;
    want *= d[a];
  }
  return true;
}

// The rules, in the caller's terms, for an engine that runs the declaration
// (declared extents, strides and dtype; host memory; slot-aligned; outputs writable).
bool legal(const Variant& v, const D& decl_dims, const D& decl_strides, bool is_output) {
  if (v.misalign_bytes != 0 || v.dl == 2) return false;
  if (v.dl == 3 && is_output) return false;
  if (v.bare) return true;
  // Only the declared FLOAT reads as FLOAT: a byte blob, int32 bits or halves never do.
  if (v.dtype != DataType::NOT_SET && v.dtype != DataType::FLOAT) return false;
  D s = v.strides.empty() ? packed(v.dims) : v.strides;
  if (v.dims == decl_dims) return s == decl_strides;
  std::int64_t n = 1;
  for (auto d : v.dims) n *= d;
  return dense(v.dims, s) && n * width(v.dtype) >= 6 * 4;
}

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"bare", true},
      {"[2,3]", false, {2, 3}},
      {"[2,3] col-major", false, {2, 3}, {1, 2}},
      {"[6]", false, {6}},
      {"[1,2,3]", false, {1, 2, 3}},
      {"[2,3,1]", false, {2, 3, 1}},
      {"[3,2]", false, {3, 2}},
      {"[8] larger", false, {8}},
      {"[5] smaller", false, {5}},
      {"[2,2] smaller", false, {2, 2}},
      {"[2,3] padded rows", false, {2, 3}, {4, 1}},
      {"[3,2] strided", false, {3, 2}, {4, 1}},
      {"u8[24]", false, {24}, {}, DataType::UINT8},
      {"u8[20] smaller", false, {20}, {}, DataType::UINT8},
      {"i32[2,3]", false, {2, 3}, {}, DataType::INT32},
      {"f16[2,3]", false, {2, 3}, {}, DataType::HALF},
      {"f16[12]", false, {12}, {}, DataType::HALF},
      {"bare misaligned", true, {}, {}, DataType::NOT_SET, 2},
      {"[2,3] misaligned", false, {2, 3}, {}, DataType::NOT_SET, 1},
      {"DLTensor cpu [2,3]", false, {2, 3}, {}, DataType::NOT_SET, 0, 1},
      {"DLTensor cuda [2,3]", false, {2, 3}, {}, DataType::NOT_SET, 0, 2},
      {"DLTensor read-only [2,3]", false, {2, 3}, {}, DataType::NOT_SET, 0, 3},
  };
  return v;
}

// Holds what a DLPack binding points at for the call.
struct Bound {
  std::vector<std::int64_t> shape, strides;
  DLTensor t{};
  DLManagedTensorVersioned vt{};
};

void bind(VariantPack& p, std::int64_t uid, const Variant& v, void* base, Bound& keep) {
  void* data = static_cast<char*>(base) + v.misalign_bytes;
  if (v.bare) {
    p.set(uid, data);
    return;
  }
  if (v.dl == 0) {
    p.set(uid, OperandBuffer::make(data, v.dims, v.strides, v.dtype));
    return;
  }
  keep.shape = v.dims;
  keep.strides = v.strides.empty() ? packed(v.dims) : v.strides;
  keep.t = DLTensor{data, {v.dl == 2 ? kDLCUDA : kDLCPU, 0}, static_cast<std::int32_t>(v.dims.size()),
                    {kDLFloat, 32, 1}, keep.shape.data(), keep.strides.data(), 0};
  if (v.dl == 3) {
    keep.vt = DLManagedTensorVersioned{{1, 1}, nullptr, nullptr, kDLFlagReadOnly, keep.t};
    p.set(uid, &keep.vt);
  } else {
    p.set(uid, &keep.t);
  }
}

TEST(FastPath, RefusedCallsAreExactlyTheIllegalCalls) {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  int cases = 0, refused = 0;
  for (const D& xs : {D{3, 1}, D{1, 2}}) {  // declarations: row-major and column-major X
    Graph g;
    g.set_name("relu").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    auto x = g.tensor({2, 3}, DataType::FLOAT, "X", xs);
    auto y = g.relu(x);
    y->set_output(true).set_name("Y");
    ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK}).is_good());
    ASSERT_TRUE(g.build_plans().is_good());
    const D ys = y->get_stride();
    for (int which = 0; which < 2; ++which) {  // the variant binds X, or Y
      for (const Variant& v : variants()) {
        alignas(16) float xm[20], ym[20];
        for (float& f : xm) f = u(rng);
        for (float& f : ym) f = -99.f;
        VariantPack p;
        Bound kx, ky;
        Variant bare{"bare", true};
        bind(p, x->get_uid(), which == 0 ? v : bare, xm, kx);
        bind(p, y->get_uid(), which == 1 ? v : bare, ym, ky);
        const bool ok = legal(v, {2, 3}, which == 0 ? xs : ys, which == 1);
        Status s = g.execute(p);
        ++cases;
        const std::string what = v.name + (which ? " as Y" : " as X") + " (X strides " + std::to_string(xs[0]) + "," +
                                 std::to_string(xs[1]) + ")";
        if (!ok) {
          ++refused;
          EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK) << what << ": " << s.to_string();
          EXPECT_NE(s.message().find(which ? "'Y'" : "'X'"), std::string::npos) << what << ": " << s.message();
          continue;
        }
        ASSERT_TRUE(s.is_good()) << what << ": " << s.to_string();
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 3; ++j) {
            float want = std::max(0.f, xm[i * xs[0] + j * xs[1]]);
            EXPECT_EQ(ym[i * ys[0] + j * ys[1]], want) << what << " at " << i << "," << j;
          }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 2 * static_cast<int>(variants().size()));
  EXPECT_GT(refused, 10);             // the enumeration exercises refusals...
  EXPECT_LT(refused, cases - 10);     // ...and acceptances
}

// Y = relu(X), X [2, 3] FLOAT, its layout and a table for an engine that runs the declaration (host memory,
// 16-byte aligned).
struct ReluProbe {
  OpGraph g;
  TensorPtr x;
  DeclaredLayout layout;
  std::unique_ptr<OperandTable> table;
  ReluProbe() {
    x = g.tensor({2, 3}, DataType::FLOAT, "X");
    g.relu(x)->set_output(true).set_name("Y");
    EXPECT_TRUE(g.validate().is_good());
    layout = DeclaredLayout::compute(g).value();
    table = std::make_unique<OperandTable>(layout, OperandNeeds{true, true, true, MemoryKind::HOST, 16}, "probe");
  }
};

TEST(FastPath, TheCheckerNamesEachRule) {
  ReluProbe probe;
  const auto& layout = probe.layout;
  const OperandTable& table = *probe.table;
  const TensorPtr& x = probe.x;
  alignas(16) float xm[8], ym[8];
  auto explain = [&](const VariantPack& p) {
    VariantPack n;
    EXPECT_TRUE(VariantPack::normalize(p, layout, n).is_good());
    EXPECT_FALSE(table.accepts(n));
    return table.explain(n).message();
  };
  std::int64_t ux = x->get_uid(), uy = layout.slot(1).uid;
  VariantPack missing;
  missing.set(ux, xm);
  EXPECT_NE(explain(missing).find("'Y' (uid " + std::to_string(uy) + "): no buffer bound"), std::string::npos);
  VariantPack align;
  align.set(ux, xm + 1).set(uy, ym);
  EXPECT_NE(explain(align).find("aligned to 16 bytes"), std::string::npos);
  VariantPack small;
  small.set(ux, OperandBuffer::make(xm, {5})).set(uy, ym);
  EXPECT_NE(explain(small).find("would read past the buffer"), std::string::npos);
  VariantPack strided;
  strided.set(ux, OperandBuffer::make(xm, {2, 3}, {1, 2})).set(uy, ym);
  EXPECT_NE(explain(strided).find("strides [1, 2] are not the declared [3, 1]"), std::string::npos);
  VariantPack half;
  half.set(ux, OperandBuffer::make(xm, {2, 3}, {}, DataType::HALF)).set(uy, ym);
  EXPECT_NE(explain(half).find("only equal slot widths"), std::string::npos);
  VariantPack dev;
  dev.set(ux, OperandBuffer::make(xm, {2, 3}, {}, DataType::NOT_SET, MemoryKind::DEVICE)).set(uy, ym);
  EXPECT_NE(explain(dev).find("device memory"), std::string::npos);
  VariantPack good;
  good.set(ux, xm).set(uy, ym);
  VariantPack n;
  ASSERT_TRUE(VariantPack::normalize(good, layout, n).is_good());
  EXPECT_TRUE(table.accepts(n));
  // Called on a pack it accepts, the checker reports the disagreement, never OK.
  EXPECT_EQ(table.explain(n).code(), ErrorCode::INTERNAL_ERROR);
}

// Only normalisation marks a slot as holding the declaration's description (the tables then skip comparing
// it with the declaration) or an override: a caller's OperandBuffer carrying those flags is judged by its own
// extents, strides and dtype, like the same buffer without them.
TEST(FastPath, ACallersDescriptionFlagsAreNotBelieved) {
  ReluProbe probe;
  alignas(16) float xm[8], ym[8];
  const std::int64_t ux = probe.x->get_uid(), uy = probe.layout.slot(1).uid;
  for (int flag = 0; flag < 2; ++flag) {
    OperandBuffer strided = OperandBuffer::make(xm, {2, 3}, {1, 2});  // column-major: not the declared [3, 1]
    OperandBuffer other = OperandBuffer::make(xm, {3, 2});            // other extents, dense, as many bytes
    OperandBuffer half = OperandBuffer::make(xm, {2, 3}, {}, DataType::HALF);
    for (OperandBuffer* b : {&strided, &other, &half}) (flag ? b->overridden : b->graph_described) = true;
    for (const auto& [name, b, rule] : {std::tuple{"strided", strided, "strides [1, 2] are not the declared [3, 1]"},
                                        std::tuple{"half", half, "only equal slot widths"}}) {
      VariantPack p, n;
      p.set(ux, b).set(uy, ym);
      ASSERT_TRUE(VariantPack::normalize(p, probe.layout, n).is_good()) << name;
      EXPECT_FALSE(n.operand(0).graph_described || n.operand(0).overridden) << name;
      EXPECT_FALSE(probe.table->accepts(n)) << name << " (flag " << flag << ")";
      EXPECT_NE(probe.table->explain(n).message().find(rule), std::string::npos) << name << ": " << probe.table->explain(n).message();
    }
    VariantPack p, n;  // a dense buffer of other extents covering the declared bytes: re-described, accepted
    p.set(ux, other).set(uy, ym);
    ASSERT_TRUE(VariantPack::normalize(p, probe.layout, n).is_good());
    EXPECT_TRUE(n.operand(0).graph_described);
    EXPECT_FALSE(n.operand(0).overridden);
    EXPECT_TRUE(probe.table->accepts(n));
  }
}

// Every field of two normalised slots.
void expect_same_slot(const OperandBuffer& a, const OperandBuffer& b, const std::string& what) {
  EXPECT_EQ(a.data, b.data) << what;
  EXPECT_EQ(a.rank, b.rank) << what;
  EXPECT_TRUE(a.dims == b.dims) << what;
  EXPECT_TRUE(a.strides == b.strides) << what;
  EXPECT_EQ(a.dtype, b.dtype) << what;
  EXPECT_EQ(a.memory, b.memory) << what;
  EXPECT_EQ(a.read_only, b.read_only) << what;
  EXPECT_EQ(a.graph_described, b.graph_described) << what;
  EXPECT_EQ(a.overridden, b.overridden) << what;
  EXPECT_EQ(a.bound, b.bound) << what;
}

// A bare address normalised into a pack that already holds the slot as the declaration lent it (execute's
// per-thread scratch, the same layout the call before) changes only what the address brings: every slot is
// field for field what a fresh normalisation of the same call gives, whatever bound the slot before — a bare
// address, a dense DLPack tensor of other extents in device memory (re-described), an override, a buffer of its
// own strides, another layout of as many slots — and whatever the address carries (memory kind, read-only, a
// dtype the declaration replaces).
TEST(FastPath, ABareAddressNormalisedAgainIsAFreshNormalisation) {
  ReluProbe probe;
  OpGraph og;  // another layout of two slots, declared [3, 2]
  auto otx = og.tensor({3, 2}, DataType::FLOAT, "X");
  og.relu(otx)->set_output(true).set_name("Y");
  ASSERT_TRUE(og.validate().is_good());
  const DeclaredLayout other_layout = DeclaredLayout::compute(og).value();
  alignas(16) float xm[8], ym[8], xm2[8], ym2[8];
  const std::int64_t ux = probe.x->get_uid(), uy = probe.layout.slot(1).uid;
  const std::int64_t ox = otx->get_uid(), oy = other_layout.slot(1).uid;
  std::vector<std::int64_t> shape = {3, 2}, strides = {2, 1};
  DLTensor dev{xm, {kDLCUDA, 0}, 2, {kDLFloat, 32, 1}, shape.data(), strides.data(), 0};
  OperandBuffer carried = OperandBuffer::address(xm2);
  carried.memory = MemoryKind::DEVICE;
  carried.read_only = true;
  carried.dtype = DataType::HALF;
  using Fill = std::function<void(VariantPack&)>;
  const std::vector<std::pair<std::string, Fill>> before = {
      {"bare", [&](VariantPack& p) { p.set(ux, xm).set(uy, ym); }},
      {"DLPack device [3, 2]", [&](VariantPack& p) { p.set(ux, &dev).set(uy, ym); }},
      {"override", [&](VariantPack& p) { p.set(ux, xm).set(uy, ym).override_shape(ux, {2, 3}); }},
      {"own strides", [&](VariantPack& p) { p.set(ux, OperandBuffer::make(xm, {2, 3}, {1, 2})).set(uy, ym); }},
      {"carried", [&](VariantPack& p) { p.set(ux, carried).set(uy, ym); }},
      {"x only", [&](VariantPack& p) { p.set(ux, xm); }},
  };
  const std::vector<std::pair<std::string, Fill>> after = {
      {"bare", [&](VariantPack& p) { p.set(ux, xm2).set(uy, ym2); }},
      {"carried", [&](VariantPack& p) { p.set(ux, carried).set(uy, ym2); }},
      {"y only", [&](VariantPack& p) { p.set(uy, ym2); }},
  };
  int n_cases = 0;
  for (bool via_other : {false, true})
    for (const auto& [bn, bf] : before)
      for (const auto& [an, af] : after) {
        VariantPack first, second, reused, fresh;
        if (via_other) first.set(ox, xm).set(oy, ym);
        else bf(first);
        af(second);
        const DeclaredLayout& l0 = via_other ? other_layout : probe.layout;
        ASSERT_TRUE(VariantPack::normalize(first, l0, reused).is_good()) << bn;
        ASSERT_TRUE(VariantPack::normalize(second, probe.layout, reused).is_good()) << an;
        ASSERT_TRUE(VariantPack::normalize(second, probe.layout, fresh).is_good()) << an;
        const std::string what = (via_other ? std::string("other layout") : bn) + " then " + an;
        for (std::size_t i = 0; i < 2; ++i) expect_same_slot(reused.operand(i), fresh.operand(i), what);
        EXPECT_EQ(reused.has_overrides(), fresh.has_overrides()) << what;
        EXPECT_EQ(probe.table->accepts(reused), probe.table->accepts(fresh)) << what;
        ++n_cases;
      }
  EXPECT_EQ(n_cases, 36);
  // A refused call leaves the pack unrecognised: the slots it did not reach keep the other layout's description.
  VariantPack reused, fresh, first, refused, second;
  first.set(ox, xm).set(oy, ym);
  refused.set(uy, ym).set(987654, xm);  // Y bound, then no operand of the graph: refused after Y's slot
  second.set(ux, xm2).set(uy, ym2);
  ASSERT_TRUE(VariantPack::normalize(first, other_layout, reused).is_good());
  EXPECT_FALSE(VariantPack::normalize(refused, probe.layout, reused).is_good());
  ASSERT_TRUE(VariantPack::normalize(second, probe.layout, reused).is_good());
  ASSERT_TRUE(VariantPack::normalize(second, probe.layout, fresh).is_good());
  for (std::size_t i = 0; i < 2; ++i) expect_same_slot(reused.operand(i), fresh.operand(i), "after a refused call");
}

// A pack normalised into again (execute's per-thread scratch keeps its slots between calls) holds exactly the
// later call's bindings: a slot the earlier call bound and the later one does not is unbound again, whatever
// form bound it, and a later refusal of the graph's execute names the missing operand.
TEST(FastPath, ANormalisedPackReusedHoldsOnlyTheLaterBindings) {
  Graph g;
  g.set_name("relu").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({2, 3}, DataType::FLOAT, "X");
  auto y = g.relu(x);
  y->set_output(true).set_name("Y");
  ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  alignas(16) float xm[8] = {1, -2, 3, -4, 5, -6}, ym[8];
  VariantPack full, only_x;
  full.set(x, xm).set(y, OperandBuffer::make(ym, {2, 3}));
  only_x.set(x, xm);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(g.execute(full).is_good()) << round;
    EXPECT_EQ(ym[1], 0.f);
    EXPECT_EQ(ym[2], 3.f);
    Status s = g.execute(only_x);  // the same thread: the same scratch pack, Y bound by the call before
    EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK) << round << ": " << s.to_string();
    EXPECT_NE(s.message().find("'Y'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("no buffer bound"), std::string::npos) << s.message();
  }
  OpGraph og;
  auto ox = og.tensor({2, 3}, DataType::FLOAT, "X");
  og.relu(ox)->set_output(true).set_name("Y");
  ASSERT_TRUE(og.validate().is_good());
  auto layout = DeclaredLayout::compute(og).value();
  VariantPack n, a, b;
  a.set(ox->get_uid(), xm).set(layout.slot(1).uid, OperandBuffer::make(ym, {2, 3}, {1, 2}));
  b.set(ox->get_uid(), xm);
  ASSERT_TRUE(VariantPack::normalize(a, layout, n).is_good());
  EXPECT_TRUE(n.operand(1).bound);
  ASSERT_TRUE(VariantPack::normalize(b, layout, n).is_good());
  EXPECT_TRUE(n.operand(0).bound);
  EXPECT_TRUE(n.operand(0).graph_described);
  EXPECT_FALSE(n.operand(1).bound);
  EXPECT_EQ(n.operand(1).data, nullptr);
  EXPECT_EQ(n.operand(1).rank, -1);
}

}  // namespace
}  // namespace opgraph
