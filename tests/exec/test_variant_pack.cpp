// The variant pack's rules, each on its own (docs/architecture.md, "The variant
// pack"): the declaration is the contract; dense buffers of other extents are
// re-described; declared extents keep their strides; smaller buffers keep their
// description; bare addresses lend the declaration; dtype rules; overrides; fp4
// storage geometry; one operand order; the layout computed once per graph; every
// caller form (uid map, tensor map, OperandBuffer, DLPack x3) normalised alike; a
// normalised pack tied to its layout by generation, not address.
#include <gtest/gtest.h>

#include <random>

#include "exec/declared_layout.h"
#include "exec_support.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using D = std::vector<std::int64_t>;

D dims_of(const OperandBuffer& b) { return D(b.dim().begin(), b.dim().end()); }
D strides_of(const OperandBuffer& b) { return D(b.stride().begin(), b.stride().end()); }

// A[1,4,8] @ B[1,8,4] -> T (virtual) ; relu(T) -> C (output); a pass-by-value scale.
struct MatmulGraph {
  OpGraph g;
  TensorPtr a, b, t, c;
  DeclaredLayout layout;
  MatmulGraph() {
    g.set_name("mm").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    a = g.tensor({1, 4, 8}, DataType::FLOAT, "A");
    b = g.tensor({1, 8, 4}, DataType::FLOAT, "B");
    t = g.matmul(a, b);
    auto s = g.tensor_scalar(2.0);
    c = g.mul(t, s);
    c->set_output(true).set_name("C");
    EXPECT_TRUE(g.validate().is_good());
    layout = DeclaredLayout::compute(g).value();
  }
  Result<VariantPack> norm(const VariantPack& p) const {
    VariantPack out;
    Status s = VariantPack::normalize(p, layout, out);
    if (s.is_bad()) return s;
    return out;
  }
  OperandBuffer op(const VariantPack& n, const TensorPtr& x) const {
    return n.operand(static_cast<std::size_t>(n.index_of(*x)));
  }
  // Normalises `p` (which must succeed) and returns x's operand.
  OperandBuffer one(const VariantPack& p, const TensorPtr& x) const {
    auto n = norm(p);
    EXPECT_TRUE(n.is_good()) << n.status().to_string();
    return n.is_good() ? op(n.value(), x) : OperandBuffer{};
  }
};

void expect_refused(const Status& s, const std::string& operand, const std::string& rule) {
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK) << s.to_string();
  EXPECT_NE(s.message().find(operand), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(rule), std::string::npos) << s.message();
}

TEST(VariantPack, OperandOrderIsAscendingUidOfNonVirtualNonScalarTensors) {
  MatmulGraph m;
  ASSERT_EQ(m.layout.size(), 3u);  // A, B, C: not the virtual T, not the by-value scalar
  for (std::size_t i = 1; i < m.layout.size(); ++i) EXPECT_LT(m.layout.slot(i - 1).uid, m.layout.slot(i).uid);
  EXPECT_FALSE(m.layout.slot(static_cast<std::size_t>(m.layout.index_of(m.a->get_uid()))).is_output);
  EXPECT_TRUE(m.layout.slot(static_cast<std::size_t>(m.layout.index_of(m.c->get_uid()))).is_output);
  EXPECT_EQ(m.layout.index_of(m.t->get_uid()), -1);
  float x = 0;
  VariantPack p;
  p.set(m.t->get_uid(), &x);
  expect_refused(m.norm(p).status(), "uid " + std::to_string(m.t->get_uid()), "not an operand of this graph");
}

TEST(VariantPack, BareAddressLendsTheDeclaration) {
  MatmulGraph m;
  float buf[32];
  VariantPack p;
  p.set(m.a->get_uid(), buf);
  auto n = m.norm(p);
  ASSERT_TRUE(n.is_good()) << n.status().to_string();
  const OperandBuffer a = m.op(n.value(), m.a);
  EXPECT_EQ(a.data, buf);
  EXPECT_TRUE(a.graph_described);
  EXPECT_EQ(dims_of(a), (D{1, 4, 8}));
  EXPECT_EQ(strides_of(a), (D{32, 8, 1}));
  EXPECT_EQ(a.dtype, DataType::FLOAT);
  EXPECT_FALSE(m.op(n.value(), m.b).bound);  // unbound stays unbound: the engine decides
}

TEST(VariantPack, DenseBufferOfOtherExtentsCoveringTheBytesIsReDescribed) {
  MatmulGraph m;
  std::vector<float> buf(40);
  for (D dims : {D{4, 8}, D{32}, D{8, 4}, D{40}, D{2, 2, 2, 4}}) {
    VariantPack p;
    p.set(m.a->get_uid(), OperandBuffer::make(buf.data(), dims));
    auto n = m.norm(p);
    ASSERT_TRUE(n.is_good());
    const OperandBuffer a = m.op(n.value(), m.a);
    EXPECT_TRUE(a.graph_described) << dims.size();
    EXPECT_EQ(dims_of(a), (D{1, 4, 8}));
    EXPECT_EQ(strides_of(a), (D{32, 8, 1}));
  }
  // Dense in another axis order (a transposed packed [8,4]) is still one dense run.
  VariantPack p;
  p.set(m.a->get_uid(), OperandBuffer::make(buf.data(), {8, 4}, {1, 8}));
  EXPECT_TRUE(m.one(p, m.a).graph_described);
}

TEST(VariantPack, DeclaredExtentsKeepTheirOwnStrides) {
  MatmulGraph m;
  std::vector<float> buf(64);
  VariantPack p;
  p.set(m.a->get_uid(), OperandBuffer::make(buf.data(), {1, 4, 8}, {64, 1, 4}));  // column-major view
  const OperandBuffer a = m.one(p, m.a);
  EXPECT_FALSE(a.graph_described);
  EXPECT_EQ(strides_of(a), (D{64, 1, 4}));
}

TEST(VariantPack, SmallerOrStridedOtherExtentsKeepTheirOwnDescription) {
  MatmulGraph m;
  std::vector<float> buf(64);
  for (auto [dims, strides] : {std::pair{D{31}, D{1}}, std::pair{D{2, 8}, D{8, 1}}, std::pair{D{4, 8}, D{16, 1}}}) {
    VariantPack p;
    p.set(m.a->get_uid(), OperandBuffer::make(buf.data(), dims, strides));
    const OperandBuffer a = m.one(p, m.a);
    EXPECT_FALSE(a.graph_described);
    EXPECT_EQ(dims_of(a), dims);
    EXPECT_EQ(strides_of(a), strides);
  }
}

TEST(VariantPack, DtypeRules) {
  MatmulGraph m;
  std::vector<std::uint8_t> bytes(256);
  auto dtype_of = [&](const OperandBuffer& in) { VariantPack p; p.set(m.a->get_uid(), in); return m.one(p, m.a); };
  // Only the declared type, or bytes for one-byte slots, read as the declared type: a byte
  // blob covering floats, int32 bits or fp16 halves are never read as FLOAT (a buffer's
  // element type is a claim about its bits): they keep their own dtype and description,
  // and every engine's table refuses them.
  auto blob = dtype_of(OperandBuffer::make(bytes.data(), {128}, {}, DataType::UINT8));
  EXPECT_EQ(blob.dtype, DataType::UINT8);
  EXPECT_FALSE(blob.graph_described);
  EXPECT_EQ(dtype_of(OperandBuffer::make(bytes.data(), {1, 4, 8}, {}, DataType::INT32)).dtype, DataType::INT32);
  EXPECT_EQ(dtype_of(OperandBuffer::make(bytes.data(), {32}, {}, DataType::INT32)).dtype, DataType::INT32);
  // The declared type re-described: a dense [4, 8] FLOAT buffer for [1, 4, 8].
  EXPECT_TRUE(dtype_of(OperandBuffer::make(bytes.data(), {4, 8}, {}, DataType::FLOAT)).graph_described);
  // Declared extents, other slot width: keeps its own dtype.
  EXPECT_EQ(dtype_of(OperandBuffer::make(bytes.data(), {1, 4, 8}, {}, DataType::HALF)).dtype, DataType::HALF);
  // Too small (32 halves = 64 bytes < 128): keeps its own dtype and description.
  auto small = dtype_of(OperandBuffer::make(bytes.data(), {32}, {}, DataType::HALF));
  EXPECT_EQ(small.dtype, DataType::HALF);
  EXPECT_FALSE(small.graph_described);
}

TEST(VariantPack, OverridesAreElementUnitsInTheGraphsAxisOrderWrittenIntoTheSlot) {
  MatmulGraph m;
  std::vector<float> buf(32);
  VariantPack p;
  p.set(m.a->get_uid(), buf.data()).override_shape(m.a->get_uid(), {1, 2, 8});
  const OperandBuffer a = m.one(p, m.a);
  EXPECT_TRUE(a.overridden);
  EXPECT_FALSE(a.graph_described);
  EXPECT_EQ(dims_of(a), (D{1, 2, 8}));
  EXPECT_EQ(strides_of(a), (D{16, 8, 1}));
  VariantPack q;
  q.set(m.a->get_uid(), buf.data()).override_shape(m.a->get_uid(), {2, 8}, {8, 1});
  expect_refused(m.norm(q).status(), "'A'", "graph's axis order");
  VariantPack r;
  r.override_shape(m.a->get_uid(), {1, 4, 8});
  expect_refused(m.norm(r).status(), "override for uid", "no buffer bound");
}

// fp4 data [1,128,64] with F8_128x4 e4m3 scales, dequantized to float.
struct Fp4Graph {
  OpGraph g;
  TensorPtr x, s, y;
  DeclaredLayout layout;
  explicit Fp4Graph(std::int64_t k = 64) {
    x = g.tensor({1, 128, k}, DataType::FP4_E2M1, "x");
    s = g.tensor({1, 128, 4}, DataType::FP8_E4M3, "s");
    s->set_reordering_type(TensorReordering::F8_128x4);
    y = g.block_scale_dequantize(x, s, Attributes().set("block_size", std::vector<std::int64_t>{1, 1, 16}));
    y->set_output(true).set_name("y");
    EXPECT_TRUE(g.assign_uids().is_good());
    layout = DeclaredLayout::compute(g).value();
  }
};

TEST(VariantPack, Fp4StorageGeometryIsTwoElementsPerSlotAlongTheUnitStrideAxis) {
  Fp4Graph f;
  const DeclaredSlot& x = f.layout.slot(static_cast<std::size_t>(f.layout.index_of(f.x->get_uid())));
  EXPECT_EQ(D(x.dims.begin(), x.dims.begin() + 3), (D{1, 128, 32}));
  EXPECT_EQ(D(x.strides.begin(), x.strides.begin() + 3), (D{4096, 32, 1}));
  EXPECT_EQ(x.bytes, 4096);
  std::vector<std::uint8_t> bytes(4096);
  VariantPack p;
  p.set(f.x->get_uid(), OperandBuffer::make(bytes.data(), {1, 128, 32}, {}, DataType::UINT8));
  VariantPack n;
  ASSERT_TRUE(VariantPack::normalize(p, f.layout, n).is_good());
  EXPECT_EQ(n.find(f.x->get_uid())->dtype, DataType::FP4_E2M1);  // equal slot width: read as fp4
  // An fp4 override lands in slots too; an odd unit-stride extent has no spelling.
  VariantPack o;
  o.set(f.x->get_uid(), bytes.data()).override_shape(f.x->get_uid(), {1, 64, 64});
  ASSERT_TRUE(VariantPack::normalize(o, f.layout, n).is_good());
  EXPECT_EQ(dims_of(*n.find(f.x->get_uid())), (D{1, 64, 32}));
  VariantPack odd;
  odd.set(f.x->get_uid(), bytes.data()).override_shape(f.x->get_uid(), {1, 64, 63});
  expect_refused(VariantPack::normalize(odd, f.layout, n), "'x'", "is odd and has no slot spelling");
}

TEST(VariantPack, OddFp4DeclarationIsRefusedWhenBound) {
  OpGraph h;
  auto a = h.tensor({1, 4, 7}, DataType::FP4_E2M1, "x7");
  auto s = h.tensor({1, 128, 4}, DataType::FP8_E4M3, "s");
  h.block_scale_dequantize(a, s, Attributes().set("block_size", std::vector<std::int64_t>{1, 1, 16}))->set_output(true);
  ASSERT_TRUE(h.assign_uids().is_good());
  auto layout = DeclaredLayout::compute(h).value();
  std::uint8_t bytes[64];
  VariantPack p, n;
  p.set(a->get_uid(), bytes);
  expect_refused(VariantPack::normalize(p, layout, n), "'x7'", "extent 7 is odd");
}

TEST(VariantPack, EveryCallerFormNormalisesAlike) {
  MatmulGraph m;
  std::vector<float> buf(32);
  std::int64_t shape[3] = {4, 8, 1};
  std::int64_t shape2[2] = {4, 8};
  DLTensor t{buf.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape2, nullptr, 0};
  DLManagedTensor mt{t, nullptr, nullptr};
  DLManagedTensorVersioned vt{{1, 0}, nullptr, nullptr, 0, t};
  (void)shape;
  std::vector<VariantPack> packs(6);
  packs[0].set(m.a->get_uid(), buf.data());
  packs[1] = VariantPack(std::unordered_map<std::int64_t, void*>{{m.a->get_uid(), buf.data()}});
  packs[2] = VariantPack(std::unordered_map<TensorPtr, void*>{{m.a, buf.data()}});
  packs[3].set(m.a->get_uid(), &t);
  packs[4].set(m.a, &mt);
  packs[5].set(m.a->get_uid(), &vt);
  for (std::size_t i = 0; i < packs.size(); ++i) {
    auto n = m.norm(packs[i]);
    ASSERT_TRUE(n.is_good()) << i << n.status().to_string();
    const OperandBuffer a = m.op(n.value(), m.a);
    EXPECT_EQ(a.data, buf.data()) << i;
    EXPECT_EQ(dims_of(a), (D{1, 4, 8})) << i;
    EXPECT_EQ(a.dtype, DataType::FLOAT) << i;
    EXPECT_TRUE(a.graph_described) << i;
    EXPECT_EQ(a.memory, i >= 3 ? MemoryKind::HOST : MemoryKind::UNKNOWN) << i;
  }
  // byte_offset moves the address; a versioned tensor of another major is refused.
  DLTensor off = t;
  off.byte_offset = 8;
  VariantPack po;
  po.set(m.a->get_uid(), &off);
  EXPECT_EQ(m.one(po, m.a).data, static_cast<void*>(buf.data() + 2));
  DLManagedTensorVersioned v2 = vt;
  v2.version.major = 2;
  VariantPack pv;
  pv.set(m.a->get_uid(), &v2);
  expect_refused(m.norm(pv).status(), "'A'", "major version 2");
  DLTensor bad = t;
  bad.dtype = {kDLComplex, 64, 1};
  VariantPack pb;
  pb.set(m.a->get_uid(), &bad);
  expect_refused(m.norm(pb).status(), "'A'", "has no opgraph data type");
  // A tensor of another graph that happens to carry the same uid.
  MatmulGraph other;
  VariantPack px;
  px.set(other.a, buf.data());
  expect_refused(m.norm(px).status(), "'A'", "another graph");
}

// A normalised pack is tied to its layout by GENERATION, not address: a layout
// assigned over in place (same address, another graph's operands) is a new
// generation, and no two live layouts share one (computes and copies draw fresh
// ones; a move hands its over and the moved-from object draws a fresh one).
TEST(VariantPack, LayoutGenerationNotAddressIdentifiesThePreparedLayout) {
  MatmulGraph m;
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  std::vector<float> buf(32);
  for (auto& v : buf) v = val(rng);
  VariantPack p, n;
  p.set(m.a->get_uid(), buf.data());
  ASSERT_TRUE(VariantPack::normalize(p, m.layout, n).is_good());
  EXPECT_NE(n.layout_generation(), 0u);
  EXPECT_EQ(n.layout_generation(), m.layout.generation());
  EXPECT_TRUE(m.layout.prepared(n));
  EXPECT_FALSE(m.layout.prepared(p));  // the caller's pack: generation 0, never a layout's
  EXPECT_EQ(p.layout_generation(), 0u);
  const std::uint64_t before = m.layout.generation();
  Fp4Graph f;
  m.layout = DeclaredLayout::compute(f.g).value();  // another graph's operands, same object
  EXPECT_EQ(n.layout(), &m.layout);  // the address alone would take the stale pack
  EXPECT_NE(m.layout.generation(), before);
  EXPECT_FALSE(m.layout.prepared(n));  // the generation refuses it
  DeclaredLayout copy = m.layout;
  EXPECT_NE(copy.generation(), m.layout.generation());
  const std::uint64_t gen = copy.generation();
  DeclaredLayout moved = std::move(copy);
  EXPECT_EQ(moved.generation(), gen);
  EXPECT_NE(copy.generation(), gen);  // NOLINT(bugprone-use-after-move): the moved-from draws a fresh one
  EXPECT_EQ(moved.size(), m.layout.size());
  const std::uint64_t g1 = DeclaredLayout::compute(m.g).value().generation();
  EXPECT_NE(DeclaredLayout::compute(m.g).value().generation(), g1);  // one graph computed twice: two generations
}

TEST(VariantPack, GraphExecuteNormalisesOnceAgainstOneLayoutPerGraph) {
  auto cap = std::make_shared<exec_test::Captured>();
  plan::testing::ScopedManifest scope(exec_test::capture_manifest(cap));
  Graph g;
  g.set_name("relu").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({2, 3}, DataType::FLOAT, "X");
  auto y = g.relu(x);
  y->set_output(true).set_name("Y");
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  std::mt19937 rng(7);
  for (int call = 0; call < 3; ++call) {
    std::vector<float> xv(6 + call), yv(6);
    VariantPack p;
    p.set(x, OperandBuffer::make(xv.data(), {static_cast<std::int64_t>(xv.size())})).set(y->get_uid(), yv.data());
    ASSERT_TRUE(g.execute(p).is_good());
    ASSERT_EQ(cap->last.size(), 2u);
    EXPECT_EQ(cap->last[0].data, xv.data());
    EXPECT_TRUE(cap->last[0].graph_described);  // 6, 7, 8 floats all cover the declared 6
    EXPECT_EQ(dims_of(cap->last[0]), (D{2, 3}));
  }
  ASSERT_NE(cap->build_layout, nullptr);
  for (auto* l : cap->execute_layouts) EXPECT_EQ(l, cap->build_layout);
  (void)rng;
}

}  // namespace
}  // namespace opgraph

namespace opgraph {
namespace {

// The one DLPack type table (opgraph/variant_pack.h): every type opgraph has a
// DLPack spelling for, DLPack 1.1's fp8 / fp4 codes included, and none for what
// it cannot read (the Python binding reads the same table).
TEST(VariantPack, TheDlpackTypeTable) {
  struct Row {
    std::uint8_t code, bits;
    std::uint16_t lanes;
    std::optional<DataType> want;
  };
  const Row rows[] = {
      {kDLFloat, 32, 1, DataType::FLOAT},          {kDLFloat, 64, 1, DataType::DOUBLE},
      {kDLFloat, 16, 1, DataType::HALF},           {kDLBfloat, 16, 1, DataType::BFLOAT16},
      {kDLInt, 8, 1, DataType::INT8},              {kDLUInt, 8, 1, DataType::UINT8},
      {kDLInt, 32, 1, DataType::INT32},            {kDLInt, 64, 1, DataType::INT64},
      {kDLBool, 8, 1, DataType::BOOLEAN},          {kDLFloat8_e4m3fn, 8, 1, DataType::FP8_E4M3},
      {kDLFloat8_e5m2, 8, 1, DataType::FP8_E5M2},  {kDLFloat8_e8m0fnu, 8, 1, DataType::FP8_E8M0},
      {kDLFloat4_e2m1fn, 4, 1, DataType::FP4_E2M1}, {kDLComplex, 64, 1, std::nullopt},
      {kDLUInt, 32, 1, std::nullopt},              {kDLFloat, 32, 2, std::nullopt},
      {kDLFloat, 8, 1, std::nullopt},              {kDLInt, 16, 1, std::nullopt},
  };
  for (const Row& r : rows)
    EXPECT_EQ(data_type_of(DLDataType{r.code, r.bits, r.lanes}), r.want)
        << "code " << int(r.code) << " bits " << int(r.bits) << " lanes " << r.lanes;
}

}  // namespace
}  // namespace opgraph
