// tests/cudnn/test_cudnn_dynamic_shapes.cpp — what a cuDNN plan needs for an
// execute-time shape override, without a GPU (engines/cudnn/dynamic_shapes.h):
//  * lowering with dynamic shapes sets CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED
//    on the operation graph record (and only then); an older cuDNN declines naming both versions;
//  * the shape key: overridden slots' positions, extents and strides;
//    the bounded per-plan cache finds a shape again and drops the oldest;
//  * the graph at a call's extents re-infers the virtual tensors, refuses an operand left at
//    its declaration whose extents change, and lowers to the built lowering but for extents;
//  * a lowering that computes something from an extent (ALiBi slopes per head, a by-value
//    scalar, another operation) is named by lowering_difference, the reason the override declines;
//  * the workspace of a shape's plan: the engine's bytes, then its scratch tensors (which
//    grow with the extents in the SDPA backward).
//  * where libcudnn loads (CI): it takes the dynamic-shape flag on an operation graph, a
//    kernel cache descriptor, and that cache on an execution plan, device-less.
#include <cstring>

#include "cudnn/sdpa_lowering_util.h"
#include "engines/cudnn/backend.h"
#include "engines/cudnn/dynamic_shapes.h"
#include "exec/declared_layout.h"
#include "runtime/loader.h"

namespace opgraph {
namespace {

using namespace cudnn_test;
namespace cu = engines::cudnn;
using D = std::vector<std::int64_t>;

cu::LoweringOptions opts(std::int64_t version, bool dynamic) {
  cu::LoweringOptions o;
  o.cudnn_version = version;
  o.dynamic_shapes = dynamic;
  return o;
}

// fp16 [1, M, K] x [1, K, N] -> C (fp16, float compute), validated.
struct Mm {
  Graph g;
  TensorPtr a, b, c;
  Mm(std::int64_t M, std::int64_t K, std::int64_t N) {
    g.set_name("mm_dyn").set_compute_data_type(DataType::FLOAT);
    a = g.tensor({1, M, K}, DataType::HALF, "A");
    b = g.tensor({1, K, N}, DataType::HALF, "B");
    c = g.matmul(a, b);
    c->set_output(true).set_name("C").set_data_type(DataType::HALF);
    EXPECT_TRUE(g.validate().is_good());
  }
};

const AttrRecord* dynamic_flag(const LoweringPlan& p) {
  return p.records[static_cast<std::size_t>(p.operation_graph)].find(CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED);
}

TEST(CudnnDynamicShapes, LoweringSetsTheDynamicShapeFlagOnTheOperationGraph) {
  Mm m(16, 32, 24);
  auto fixed = cu::lower(m.g, opts(91400, false));
  ASSERT_TRUE(fixed.is_good()) << fixed.status().message();
  EXPECT_EQ(dynamic_flag(*fixed), nullptr) << "a plan built without dynamic shapes is lowered as before";
  auto dyn = cu::lower(m.g, opts(91400, true));
  ASSERT_TRUE(dyn.is_good()) << dyn.status().message();
  const AttrRecord* f = dynamic_flag(*dyn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, CUDNN_TYPE_BOOLEAN);
  EXPECT_EQ(f->ints, D{1});
  // Everything else is the same lowering.
  EXPECT_EQ(cu::lowering_difference(*fixed, *dyn), "");
  EXPECT_EQ(fixed->records.size(), dyn->records.size());
}

TEST(CudnnDynamicShapes, AnOlderCudnnDeclinesNamingBothVersions) {
  Mm m(16, 32, 24);
  auto old = cu::lower(m.g, opts(90300, true));
  ASSERT_TRUE(old.is_bad());
  EXPECT_EQ(old.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(old.status().message().find("9.4.0"), std::string::npos) << old.status().message();
  EXPECT_NE(old.status().message().find("9.3.0"), std::string::npos) << old.status().message();
  EXPECT_NE(old.status().message().find("IS_DYNAMIC_SHAPE_ENABLED"), std::string::npos) << old.status().message();
  // The same version without dynamic shapes lowers (the built plan is unaffected).
  EXPECT_TRUE(cu::lower(m.g, opts(90300, false)).is_good());

  EXPECT_EQ(cu::dynamic_shapes_unavailable(90400), "");
  EXPECT_EQ(cu::dynamic_shapes_unavailable(91400), "");
  const std::string why = cu::dynamic_shapes_unavailable(90201);
  EXPECT_NE(why.find("need cuDNN >= 9.4.0"), std::string::npos) << why;
  EXPECT_NE(why.find("the loaded libcudnn is 9.2.1"), std::string::npos) << why;
  EXPECT_NE(cu::dynamic_shapes_unavailable(0).find("unknown"), std::string::npos);
  // The refusal a plan gives for it names the overridden operand, its port and the reason.
  auto layout = DeclaredLayout::compute(m.g);
  ASSERT_TRUE(layout.is_good());
  std::vector<OperandBuffer> ops(layout->size());
  const auto pa = static_cast<std::size_t>(layout->index_of(m.a->get_uid()));
  ops[pa].overridden = true;
  ops[pa].rank = 3;
  ops[pa].dims = {1, 48, 32};
  ops[pa].strides = {48 * 32, 32, 1};
  Status s = cu::override_declined(*layout, ops, why);
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(s.message().find("engine cudnn: execute-time shape override of operand 'A' (uid " +
                             std::to_string(m.a->get_uid()) + ", input 'A' of node"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("to [1, 48, 32] (strides [1536, 32, 1]) declined: cuDNN's dynamic shapes"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("nothing was launched"), std::string::npos) << s.message();
}

OperandBuffer over(D dims, D strides) {
  OperandBuffer b;
  b.overridden = true;
  b.rank = static_cast<int>(dims.size());
  std::copy(dims.begin(), dims.end(), b.dims.begin());
  std::copy(strides.begin(), strides.end(), b.strides.begin());
  return b;
}

TEST(CudnnDynamicShapes, TheShapeKeyIsTheOverriddenSlotsExtentsAndStrides) {
  std::vector<OperandBuffer> ops(3);
  ops[0] = over({1, 48, 32}, {1536, 32, 1});
  ops[2] = over({1, 48, 24}, {1152, 24, 1});
  ops[1].rank = 3;  // bound, not overridden: no part of the key
  ops[1].dims = {1, 32, 24};
  std::vector<std::int64_t> key;
  cu::shape_key(ops, key);
  // Position 0, then position 2: position, rank, dims, strides.
  EXPECT_EQ(key, (D{0, 3, 1, 48, 32, 1536, 32, 1, 2, 3, 1, 48, 24, 1152, 24, 1}));
  EXPECT_TRUE(cu::same_shape(key, ops));

  auto other = ops;
  other[0].strides[0] = 1537;  // a stride alone makes another shape
  EXPECT_FALSE(cu::same_shape(key, other));
  other = ops;
  other[1] = over({1, 32, 24}, {768, 24, 1});  // one more overridden slot
  EXPECT_FALSE(cu::same_shape(key, other));
  other = ops;
  other[2].overridden = false;  // one fewer
  EXPECT_FALSE(cu::same_shape(key, other));
  other = ops;
  std::swap(other[0], other[2]);  // the same extents on other operands
  EXPECT_FALSE(cu::same_shape(key, other));
  EXPECT_FALSE(cu::same_shape({}, ops));
  std::vector<std::int64_t> none;
  cu::shape_key(std::vector<OperandBuffer>(3), none);
  EXPECT_TRUE(none.empty());

  // The cache: found again by the same shape, the oldest dropped at capacity.
  cu::ShapeCache<int> cache(2);
  cache.insert(key, std::make_shared<int>(1));
  ASSERT_NE(cache.find(ops), nullptr);
  EXPECT_EQ(*cache.find(ops), 1);
  auto s2 = ops;
  s2[0] = over({1, 64, 32}, {2048, 32, 1});
  s2[2] = over({1, 64, 24}, {1536, 24, 1});
  EXPECT_EQ(cache.find(s2), nullptr);
  std::vector<std::int64_t> k2, k3;
  cu::shape_key(s2, k2);
  cache.insert(k2, std::make_shared<int>(2));
  auto s3 = ops;
  s3[0] = over({1, 80, 32}, {2560, 32, 1});
  s3[2] = over({1, 80, 24}, {1920, 24, 1});
  cu::shape_key(s3, k3);
  cache.insert(k3, std::make_shared<int>(3));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.find(ops), nullptr) << "the oldest shape was dropped";
  EXPECT_EQ(*cache.find(s2), 2);
  EXPECT_EQ(*cache.find(s3), 3);
  EXPECT_EQ(cu::kShapePlansPerPlan, 8u);
}

// The normalised operands of `layout` with A, B, C overridden to [1, M, K], [1, K, N], [1, M, N] (row-major).
std::vector<OperandBuffer> mm_override(const DeclaredLayout& layout, const Mm& m, std::int64_t M, std::int64_t K,
                                       std::int64_t N, bool with_c = true) {
  std::vector<OperandBuffer> ops(layout.size());
  for (std::size_t p = 0; p < layout.size(); ++p) {
    const DeclaredSlot& s = layout.slot(p);
    ops[p].rank = s.rank;
    ops[p].dims = s.dims;
    ops[p].strides = s.strides;
  }
  ops[static_cast<std::size_t>(layout.index_of(m.a->get_uid()))] = over({1, M, K}, {M * K, K, 1});
  ops[static_cast<std::size_t>(layout.index_of(m.b->get_uid()))] = over({1, K, N}, {K * N, N, 1});
  if (with_c) ops[static_cast<std::size_t>(layout.index_of(m.c->get_uid()))] = over({1, M, N}, {M * N, N, 1});
  return ops;
}

D dims_of(const LoweringPlan& p, std::int64_t uid) {
  const cu::TensorRecord* t = p.tensor(uid);
  if (!t) return {};
  const AttrRecord* a = p.records[static_cast<std::size_t>(t->record)].find(CUDNN_ATTR_TENSOR_DIMENSIONS);
  return a ? a->ints : D{};
}

TEST(CudnnDynamicShapes, TheGraphAtACallsExtentsLowersToTheBuiltLoweringButForExtents) {
  Mm m(16, 32, 24);
  auto json = m.g.serialize();
  ASSERT_TRUE(json.is_good());
  auto layout = DeclaredLayout::compute(m.g);
  ASSERT_TRUE(layout.is_good());
  auto built = cu::lower(m.g, opts(91400, false));
  ASSERT_TRUE(built.is_good());
  for (auto [M, K, N] : {std::array<std::int64_t, 3>{48, 32, 24}, {16, 64, 40}, {200, 8, 72}}) {
    auto ops = mm_override(*layout, m, M, K, N);
    auto g = cu::graph_at_extents(*json, *layout, ops);
    ASSERT_TRUE(g.is_good()) << g.status().message();
    auto shaped = cu::lower(g.value(), opts(91400, true));
    ASSERT_TRUE(shaped.is_good()) << shaped.status().message();
    EXPECT_EQ(cu::lowering_difference(*built, *shaped), "") << M << " " << K << " " << N;
    EXPECT_NE(dynamic_flag(*shaped), nullptr);
    EXPECT_EQ(dims_of(*shaped, m.a->get_uid()), (D{1, M, K}));
    EXPECT_EQ(dims_of(*shaped, m.b->get_uid()), (D{1, K, N}));
    EXPECT_EQ(dims_of(*shaped, m.c->get_uid()), (D{1, M, N}));
    EXPECT_EQ(dims_of(*built, m.c->get_uid()), (D{1, 16, 24})) << "the built lowering is untouched";
  }
  // C left at its declaration while M changes: named, with what to override it to.
  auto ops = mm_override(*layout, m, 48, 32, 24, false);
  auto g = cu::graph_at_extents(*json, *layout, ops);
  ASSERT_TRUE(g.is_bad());
  EXPECT_EQ(g.status().code(), ErrorCode::INVALID_VARIANT_PACK);
  EXPECT_NE(g.status().message().find("operand 'C'"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("override it to [1, 48, 24]"), std::string::npos) << g.status().message();
  // K of A and B disagreeing: the graph does not validate there.
  ops = mm_override(*layout, m, 48, 32, 24);
  ops[static_cast<std::size_t>(layout->index_of(m.b->get_uid()))] = over({1, 40, 24}, {960, 24, 1});
  g = cu::graph_at_extents(*json, *layout, ops);
  ASSERT_TRUE(g.is_bad());
  EXPECT_EQ(g.status().code(), ErrorCode::INVALID_VARIANT_PACK);
  EXPECT_NE(g.status().message().find("does not validate at the overridden extents"), std::string::npos)
      << g.status().message();
}

TEST(CudnnDynamicShapes, ALoweringThatComputesFromAnExtentIsNamed) {
  using namespace sdpa_lowering_test;
  // ALiBi: one slope per head, uploaded once by the plan: another head count declines.
  Shape s4{1, 4, 4, 64, 64, 64}, s8{1, 8, 8, 64, 64, 64}, s4long{1, 4, 4, 128, 192, 64};
  auto lower_alibi = [](Shape s) {
    Fwd f(s, DataType::HALF);
    f.a.set("use_alibi_mask", true).set("use_causal_mask", false);
    return f.lower(91400);
  };
  auto p4 = lower_alibi(s4), p8 = lower_alibi(s8), p4long = lower_alibi(s4long);
  ASSERT_TRUE(p4.is_good()) << p4.status().message();
  ASSERT_TRUE(p8.is_good()) << p8.status().message();
  ASSERT_TRUE(p4long.is_good()) << p4long.status().message();
  const std::string heads = cu::lowering_difference(*p4, *p8);
  EXPECT_NE(heads.find("constant bytes of scratch tensor"), std::string::npos) << heads;
  EXPECT_NE(heads.find("ALiBi"), std::string::npos) << heads;
  // Other sequence lengths, the same heads: the same slopes, only extents differ.
  EXPECT_EQ(cu::lowering_difference(*p4, *p4long), "");

  // Any attribute but a tensor's extents and strides is named with its descriptor.
  Mm m(16, 32, 24);
  auto built = cu::lower(m.g, opts(91400, false));
  ASSERT_TRUE(built.is_good());
  auto changed = *built;
  for (auto& r : changed.records)
    if (r.type == CUDNN_BACKEND_MATMUL_DESCRIPTOR) r.attrs.push_back({CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, {}, {1.0}, {}});
  std::string why = cu::lowering_difference(*built, changed);
  EXPECT_NE(why.find("matmul descriptor"), std::string::npos) << why;
  EXPECT_NE(why.find("attribute " + std::to_string(static_cast<int>(CUDNN_ATTR_MATMUL_PADDING_VALUE))),
            std::string::npos)
      << why;
  // A tensor's extents and strides may differ; its data type may not.
  changed = *built;
  const cu::TensorRecord* c = changed.tensor(m.c->get_uid());
  auto& rec = changed.records[static_cast<std::size_t>(c->record)];
  for (auto& a : rec.attrs)
    if (a.name == CUDNN_ATTR_TENSOR_DIMENSIONS) a.ints = {1, 99, 24};
  EXPECT_EQ(cu::lowering_difference(*built, changed), "");
  for (auto& a : rec.attrs)
    if (a.name == CUDNN_ATTR_TENSOR_DATA_TYPE) a.ints = {CUDNN_DATA_FLOAT};
  why = cu::lowering_difference(*built, changed);
  EXPECT_NE(why.find("tensor 'C'"), std::string::npos) << why;
  // Another operation count.
  changed = *built;
  changed.operations.push_back(changed.operations.back());
  why = cu::lowering_difference(*built, changed);
  EXPECT_NE(why.find("another operation graph"), std::string::npos) << why;
  // A by-value scalar of another value.
  Fwd f(s4, DataType::HALF);
  auto scaled = f.lower(91400);
  ASSERT_TRUE(scaled.is_good()) << scaled.status().message();
  ASSERT_FALSE(scaled->by_value_uids.empty()) << "attn_scale travels by value";
  changed = *scaled;
  for (auto& t : changed.tensors)
    if (t.uid == changed.by_value_uids[0]) t.scalar_bytes[0] ^= 1;
  why = cu::lowering_difference(*scaled, changed);
  EXPECT_NE(why.find("by-value scalar uid " + std::to_string(scaled->by_value_uids[0])), std::string::npos) << why;
}

TEST(CudnnDynamicShapes, AShapesWorkspaceIsItsEngineBytesThenItsScratch) {
  LoweringPlan none;
  auto w = cu::workspace_layout(1000, none);
  EXPECT_EQ(w.total, 1000);
  EXPECT_EQ(w.scratch_at, 1024);
  using namespace sdpa_lowering_test;
  // The SDPA backward's scratch (row sums, the fp32 dQ accumulator) follows the extents.
  Bwd short_seq(Shape{1, 4, 4, 64, 64, 64}), long_seq(Shape{1, 4, 4, 256, 256, 64});
  auto a = short_seq.lower(91400), b = long_seq.lower(91400);
  ASSERT_TRUE(a.is_good()) << a.status().message();
  ASSERT_TRUE(b.is_good()) << b.status().message();
  ASSERT_FALSE(a->scratch.empty());
  EXPECT_EQ(cu::lowering_difference(*a, *b), "") << "only extents differ: the built config may serve it";
  EXPECT_GT(b->scratch_bytes, a->scratch_bytes);
  auto wa = cu::workspace_layout(1000, *a), wb = cu::workspace_layout(1000, *b);
  EXPECT_EQ(wa.scratch_at, 1024);
  EXPECT_EQ(wa.total, 1024 + a->scratch_bytes);
  EXPECT_EQ(wb.total, 1024 + b->scratch_bytes);
  EXPECT_GT(wb.total, wa.total) << "a longer sequence's plan needs more of the caller's workspace";
}

}  // namespace
}  // namespace opgraph

namespace opgraph {
namespace {

namespace cu = engines::cudnn;

// The attributes the per-shape plans set, through the real library without a device
// (skipped only where libcudnn cannot be loaded; CI loads it): the loaded cuDNN takes
// the dynamic-shape flag on an operation graph as the lowering records it (BOOLEAN),
// creates a kernel cache descriptor, and takes it on an execution plan.
TEST(CudnnDynamicShapes, TheLoadedCudnnTakesTheDynamicShapeAttributes) {
  auto api = runtime::cudnn();
  if (api.is_bad()) GTEST_SKIP() << "libcudnn not loadable: " << api.status().to_string();
  const auto version = static_cast<std::int64_t>(api.value()->version);
  std::printf("libcudnn %s from %s\n", cu::cudnn_version_string(version).c_str(), api.value()->path.c_str());
  if (version < cu::kDynamicShapesMinVersion) {
    EXPECT_NE(cu::dynamic_shapes_unavailable(version), "");
    GTEST_SKIP() << "cuDNN " << cu::cudnn_version_string(version) << " predates dynamic shapes: overrides decline";
  }
  Mm m(16, 32, 24);
  auto p = cu::lower(m.g, opts(version, true));
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  auto mat = cu::materialise(*api.value(), p.value(), nullptr);  // device-less: the graph record is created only
  ASSERT_TRUE(mat.is_good()) << mat.status().to_string();
  const cu::Descriptor& og = mat->operation_graph(p.value());
  const AttrRecord* flag = dynamic_flag(*p);
  ASSERT_NE(flag, nullptr);
  const unsigned char on = 1;  // as materialise() passes a BOOLEAN record
  Status s = og.set(CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED, flag->type, 1, &on, cu::Step::FINALIZE,
                    "operation graph");
  EXPECT_TRUE(s.is_good()) << s.to_string();
  auto kc = cu::Descriptor::create(*api.value(), CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR, "kernel cache");
  ASSERT_TRUE(kc.is_good()) << kc.status().to_string();
  auto plan = cu::Descriptor::create(*api.value(), CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
  ASSERT_TRUE(plan.is_good()) << plan.status().to_string();
  cudnnBackendDescriptor_t raw = kc->get();
  s = plan->set(CUDNN_ATTR_EXECUTION_PLAN_KERNEL_CACHE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, cu::Step::BUILD,
                "execution plan");
  EXPECT_TRUE(s.is_good()) << s.to_string();
  if (version >= cu::kKernelCacheGraphMinVersion) {
    cudnnBackendDescriptor_t g = og.get();
    s = kc->set(CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g, cu::Step::BUILD,
                "kernel cache");
    EXPECT_TRUE(s.is_good()) << s.to_string();
  }
}

}  // namespace
}  // namespace opgraph
