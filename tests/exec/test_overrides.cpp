// Execute-time shape overrides (VariantPack::override_shape, docs/dynamic_shapes.md)
// without a GPU: normalisation keeps every override inside the tensor's layout
// class (rank, extents of 1, the packed axis order, pinned padded layouts) and names
// the tensor, its port and the rule; has_overrides() is the one flag engines branch
// on; the reference engine runs the call's extents (a gemm-shaped graph against a
// float64 loop) and refuses extents that disagree, writing nothing; an engine that
// takes no overrides (its operand table; cuDNN's way) refuses with
// GRAPH_NOT_SUPPORTED naming the tensor, port and reason.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "exec/declared_layout.h"
#include "exec/operand_table.h"
#include "opgraph/graph.h"

using namespace opgraph;

namespace {

using D = std::vector<std::int64_t>;

// C = A @ B (FLOAT), A [1, 16, 8] row-major, B [1, 8, 12] column-major, then C * 2.
struct Mm {
  Graph g;
  TensorPtr a, b, c;
  explicit Mm(bool padded_a = false) {
    g.set_name("mm_over").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    a = g.tensor({1, 16, 8}, DataType::FLOAT, "A");
    if (padded_a) a->set_stride({16 * 10, 10, 1});  // rows padded to 10 elements
    b = g.tensor({1, 8, 12}, DataType::FLOAT, "B");
    b->set_stride({96, 1, 8});
    auto t = g.matmul(a, b);
    c = g.mul(t, g.tensor_scalar(2.0f));
    c->set_output(true).set_name("C");
    EXPECT_TRUE(g.validate().is_good());
  }
  Status plan() {
    OPGRAPH_CHECK(g.create_execution_plans({HeurMode::FALLBACK}));
    return g.build_plans();
  }
  Status prepared(const VariantPack& p) {
    VariantPack out;
    return g.prepare_variant_pack(p, out);
  }
};

void expect_has(const Status& s, std::initializer_list<const char*> parts) {
  ASSERT_TRUE(s.is_bad());
  for (const char* p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
}

}  // namespace

TEST(ShapeOverrides, HasOverridesIsTheOneFlagAndOnlyAnOverrideSetsIt) {
  Mm m;
  ASSERT_TRUE(m.plan().is_good());
  std::vector<float> buf(256);
  VariantPack p;
  p.set(m.a, buf.data()).set(m.b, buf.data()).set(m.c, buf.data());
  EXPECT_FALSE(p.has_overrides());
  VariantPack n;
  ASSERT_TRUE(m.g.prepare_variant_pack(p, n).is_good());
  EXPECT_FALSE(n.has_overrides());
  for (const auto& o : n.operands()) EXPECT_FALSE(o.overridden);
  p.override_shape(m.a->get_uid(), {1, 4, 8});
  EXPECT_TRUE(p.has_overrides());
  ASSERT_TRUE(m.g.prepare_variant_pack(p, n).is_good());
  EXPECT_TRUE(n.has_overrides());
  const OperandBuffer& a = *n.find(m.a->get_uid());
  EXPECT_TRUE(a.overridden);
  EXPECT_EQ(D(a.dims.begin(), a.dims.begin() + 3), (D{1, 4, 8}));
  EXPECT_EQ(D(a.strides.begin(), a.strides.begin() + 3), (D{32, 8, 1}));
  EXPECT_FALSE(n.find(m.b->get_uid())->overridden);
}

TEST(ShapeOverrides, NewExtentsOfTheSameLayoutClassAreAccepted) {
  Mm m;
  ASSERT_TRUE(m.plan().is_good());
  std::mt19937_64 rng(26);
  std::uniform_int_distribution<std::int64_t> ext(2, 300);
  std::vector<float> buf(1);
  for (int i = 0; i < 20; ++i) {
    const std::int64_t M = ext(rng), N = ext(rng), K = ext(rng);
    VariantPack p;
    p.set(m.a, buf.data()).set(m.b, buf.data()).set(m.c, buf.data());
    p.override_shape(m.a->get_uid(), {1, M, K});                  // packed row-major, as declared
    p.override_shape(m.b->get_uid(), {1, K, N}, {K * N, 1, K});   // column-major, as declared
    p.override_shape(m.c->get_uid(), {1, M, N}, {M * N, N, 1});
    EXPECT_TRUE(m.prepared(p).is_good()) << m.prepared(p).message();
  }
}

TEST(ShapeOverrides, LeavingTheLayoutClassIsRefusedNamingTensorPortAndRule) {
  Mm m;
  ASSERT_TRUE(m.plan().is_good());
  std::vector<float> buf(1);
  auto with = [&](std::int64_t uid, D dims, D strides = {}) {
    VariantPack p;
    p.set(m.a, buf.data()).set(m.b, buf.data()).set(m.c, buf.data());
    p.override_shape(uid, std::move(dims), std::move(strides));
    return m.prepared(p);
  };
  const std::int64_t A = m.a->get_uid(), B = m.b->get_uid(), C = m.c->get_uid();
  expect_has(with(A, {16, 8}), {"operand 'A'", "input 'A' of node", "rule layout_class", "declaration has 3"});
  // An extent of 1 stays 1 and one above 1 stays above 1.
  expect_has(with(A, {2, 16, 8}), {"operand 'A'", "axis 0 has extent 2", "declaration has 1", "broadcasting"});
  expect_has(with(A, {1, 1, 8}), {"operand 'A'", "axis 1 has extent 1", "declaration has 16"});
  expect_has(with(A, {1, 0, 8}), {"operand 'A'", "axis 1 has extent 0", "at least 1"});
  // The packed axis order stays: B is column-major, row-major strides are another class.
  expect_has(with(B, {1, 8, 12}), {"operand 'B'", "input 'B' of node", "declaration's axis order"});
  // Padded strides of the declared order are another class too.
  expect_has(with(C, {1, 16, 12}, {16 * 16, 16, 1}), {"operand 'C'", "output", "do not pack"});
  // A tensor declared padded pins its extents: any change is refused, the declaration itself is not.
  Mm p(true);
  ASSERT_TRUE(p.plan().is_good());
  VariantPack q;
  q.set(p.a, buf.data()).set(p.b, buf.data()).set(p.c, buf.data());
  q.override_shape(p.a->get_uid(), {1, 8, 8}, {80, 10, 1});
  expect_has(p.prepared(q), {"operand 'A'", "do not pack the extents", "pins them"});
  VariantPack same;
  same.set(p.a, buf.data()).set(p.b, buf.data()).set(p.c, buf.data());
  same.override_shape(p.a->get_uid(), {1, 16, 8}, {160, 10, 1});
  EXPECT_TRUE(p.prepared(same).is_good());
  EXPECT_EQ(with(A, {1, 4, 8}).code(), ErrorCode::OK);
  EXPECT_EQ(with(A, {16, 8}).code(), ErrorCode::INVALID_VARIANT_PACK);
}

// C[m, n] = 2 * sum_k A[m, k] B[k, n] in float64, B column-major.
std::vector<double> expected(const std::vector<float>& a, const std::vector<float>& b, std::int64_t M, std::int64_t N,
                             std::int64_t K) {
  std::vector<double> c(static_cast<std::size_t>(M * N));
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (std::int64_t k = 0; k < K; ++k)
        acc += static_cast<double>(a[static_cast<std::size_t>(m * K + k)]) * b[static_cast<std::size_t>(n * K + k)];
      c[static_cast<std::size_t>(m * N + n)] = 2 * acc;
    }
  return c;
}

TEST(ShapeOverrides, TheReferenceRunsTheCallsExtents) {
  Mm m;
  ASSERT_TRUE(m.plan().is_good());
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int64_t> ext(2, 40);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < 6; ++i) {
    const std::int64_t M = ext(rng), N = ext(rng), K = ext(rng);
    std::vector<float> a(static_cast<std::size_t>(M * K)), b(static_cast<std::size_t>(K * N)),
        c(static_cast<std::size_t>(M * N), std::nanf(""));
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    VariantPack p;
    p.set(m.a, a.data()).set(m.b, b.data()).set(m.c, c.data());
    p.override_shape(m.a->get_uid(), {1, M, K});
    p.override_shape(m.b->get_uid(), {1, K, N}, {K * N, 1, K});
    p.override_shape(m.c->get_uid(), {1, M, N});
    const Status s = m.g.execute(p);
    ASSERT_TRUE(s.is_good()) << s.to_string();
    const auto want = expected(a, b, M, N, K);
    for (std::size_t j = 0; j < c.size(); ++j) ASSERT_NEAR(c[j], want[j], 1e-4) << M << "x" << N << "x" << K << " at " << j;
  }
  // The declared shape without overrides still runs the built plan.
  std::vector<float> a(16 * 8, 0.5f), b(8 * 12, 0.25f), c(16 * 12, std::nanf(""));
  VariantPack plain;
  plain.set(m.a, a.data()).set(m.b, b.data()).set(m.c, c.data());
  ASSERT_TRUE(m.g.execute(plain).is_good());
  for (float x : c) EXPECT_NEAR(x, 2 * 8 * 0.125, 1e-6);
}

TEST(ShapeOverrides, TheReferenceRefusesOverridesThatDisagreeAndRunsNothing) {
  Mm m;
  ASSERT_TRUE(m.plan().is_good());
  std::vector<float> a(16 * 8, 1.f), b(8 * 12, 1.f), c(16 * 12, std::nanf(""));
  // A's M changed but not C's: C would be [1, 4, 12] at the new extents.
  VariantPack p;
  p.set(m.a, a.data()).set(m.b, b.data()).set(m.c, c.data());
  p.override_shape(m.a->get_uid(), {1, 4, 8});
  Status s = m.g.execute(p);
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK);
  expect_has(s, {"engine reference", "operand 'C'", "output", "override it to [1, 4, 12]", "nothing was launched"});
  // A's K changed but not B's: the graph does not validate at the new extents.
  VariantPack q;
  q.set(m.a, a.data()).set(m.b, b.data()).set(m.c, c.data());
  q.override_shape(m.a->get_uid(), {1, 16, 4});
  s = m.g.execute(q);
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK);
  expect_has(s, {"engine reference", "does not validate at the overridden extents", "nothing was launched"});
  for (float x : c) EXPECT_TRUE(std::isnan(x));  // untouched
}

TEST(ShapeOverrides, AnEngineWithoutOverridesRefusesNamingTensorPortAndReason) {
  Mm m;
  ASSERT_TRUE(m.plan().is_good());
  auto layout = DeclaredLayout::compute(m.g);
  ASSERT_TRUE(layout.is_good());
  OperandTable table(*layout, OperandNeeds{true, true, true, MemoryKind::UNKNOWN, 0}, "demo");
  std::vector<float> buf(256);
  VariantPack p;
  p.set(m.a, buf.data()).set(m.b, buf.data()).set(m.c, buf.data());
  p.override_shape(m.a->get_uid(), {1, 4, 8});
  VariantPack n;
  ASSERT_TRUE(VariantPack::normalize(p, *layout, n).is_good());
  EXPECT_FALSE(table.accepts(n));
  Status s = table.explain(n);
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  expect_has(s, {"engine demo", "operand 'A'", "input 'A' of node", "execute-time shape override [1, 4, 8]",
                 "engine demo runs the declared extents and strides only", "nothing was launched"});
  table.decline_overrides("demo: overrides need a rebuild");
  expect_has(table.explain(n), {"demo: overrides need a rebuild"});
  // An engine that reads overrides checks everything else, not the overridden geometry.
  EXPECT_TRUE(table.accepts_overridden(n));
  VariantPack unbound;
  unbound.set(m.a, buf.data()).set(m.c, buf.data());
  unbound.override_shape(m.a->get_uid(), {1, 4, 8});
  ASSERT_TRUE(VariantPack::normalize(unbound, *layout, n).is_good());
  EXPECT_FALSE(table.accepts_overridden(n));
  expect_has(table.explain_overridden(n), {"operand 'B'", "no buffer bound"});
  // The same override with no change passes both.
  VariantPack same;
  same.set(m.a, buf.data()).set(m.b, buf.data()).set(m.c, buf.data());
  same.override_shape(m.a->get_uid(), {1, 16, 8});
  ASSERT_TRUE(VariantPack::normalize(same, *layout, n).is_good());
  EXPECT_TRUE(table.accepts(n));
}
