// tests/cudnn/test_cudnn_sdpa_overrides.cpp — execute-time shape overrides of
// graphs that hold attention, without a GPU (engines/cudnn/dynamic_shapes.h:
// sdpa_pattern, override_policy). On the H200 with cuDNN 9.19 (2026-12-02) the
// per-shape plans of an SDPA graph that shared the plan's kernel cache (and so
// could reuse a kernel it compiled for another sequence length) gave wrong O and
// Stats, while the same overrides finalised each with a kernel cache of its own
// gave right ones (test_cudnn_gpu's CudnnGpuDynamic.SdpaForward* cases), so:
//  * the lowering is recognised as attention: an sdpa / sdpa_backward operation
//    (native or composite), or the flexible-SDPA composite written out of IR ops
//    (a matmul through a softmax exp into another matmul, over virtual tensors);
//    a lone matmul, a matmul chain without an exp, or an exp whose result is a
//    bound output is not;
//  * its overrides are served, each shape with a kernel cache of its own, planned
//    static or dynamic, whatever OPGRAPH_CUDNN_INCLUDE_UNVERIFIED says;
//  * other graphs are served as before, one kernel cache shared by their shapes.
#include <cstdlib>
#include <string>

#include "cudnn/sdpa_lowering_util.h"
#include "engines/cudnn/dynamic_shapes.h"

namespace opgraph {
namespace {

using namespace sdpa_lowering_test;

const std::vector<std::int64_t> kSwap{0, 1, 3, 2};

cu::LoweringOptions engine(bool dynamic = false) {
  cu::LoweringOptions o;
  o.cudnn_version = 91900;
  o.sm_version = 90;
  o.dynamic_shapes = dynamic;
  return o;
}

LoweringPlan lowered(Graph& g, const cu::LoweringOptions& o = engine()) {
  Status v = g.validate();
  EXPECT_TRUE(v.is_good()) << v.to_string();
  auto p = cu::lower(g, o);
  EXPECT_TRUE(p.is_good()) << p.status().to_string();
  return p.is_good() ? std::move(p.value()) : LoweringPlan{};
}

// The causal bf16 SDPA forward of test_cudnn_gpu's CudnnGpuDynamic cases (b 2, h 4, s 128, d 64, O and Stats).
struct CausalForward {
  Fwd f{Shape{2, 4, 4, 128, 128, 64}};
  CausalForward() { f.a.set("use_causal_mask", true); }
  Result<LoweringPlan> lower(const cu::LoweringOptions& o) {
    f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
    f.out.O->set_output(true).set_data_type(DataType::BFLOAT16);
    f.out.Stats->set_output(true);
    Status st = f.g.validate();
    if (st.is_bad()) return st;
    return cu::lower(f.g, o);
  }
};

// sdpa(score_mod=fn) as the Python package writes it (python/opgraph/_porting.py
// flexible_sdpa) with a causal mask as fn: K^T, Q K^T, scale, mask, softmax, P V.
struct FlexibleForward {
  static constexpr std::int64_t b = 2, h = 4, s = 64, d = 32;
  Graph g;
  FlexibleForward() {
    g.set_io_data_type(DataType::HALF).set_intermediate_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    auto q = g.tensor({b, h, s, d}, DataType::HALF, "q");
    auto k = g.tensor({b, h, s, d}, DataType::HALF, "k");
    auto v = g.tensor({b, h, s, d}, DataType::HALF, "v");
    auto kt = g.transpose(k, Attributes().set_name("k_transpose").set("permutation", kSwap));
    auto sc = g.mul(g.matmul(q, kt, Attributes().set_name("matmul_q_kt")), g.tensor_scalar(0.125));
    auto row = g.gen_index(sc, 2), col = g.gen_index(sc, 3);
    auto masked = g.binary_select(sc, g.tensor_scalar(-1e9), g.cmp_ge(row, col));
    auto mx = g.reduction(masked, Attributes().set("mode", "MAX"));
    mx->set_dim({b, h, s, 1});
    auto e = g.exp(g.sub(masked, mx), Attributes().set_name("softmax_exp"));
    auto z = g.reduction(e, Attributes().set("mode", "ADD"));
    z->set_dim({b, h, s, 1});
    auto stats = g.add(mx, g.log(z));
    stats->set_output(true).set_data_type(DataType::FLOAT);
    auto pr = g.div(e, z);
    pr->set_data_type(DataType::HALF);
    auto o = g.matmul(pr, v, Attributes().set_name("matmul_p_v"));
    o->set_output(true).set_data_type(DataType::HALF);
  }
};

// The flexible backward's dV part (flexible_sdpa_backward): P = exp(S - Stats) from
// the scores again, P^T (a RESHAPE view that casts to HALF), dV = P^T dO.
struct FlexibleBackwardDv {
  static constexpr std::int64_t b = 1, h = 2, s = 32, d = 16;
  Graph g;
  FlexibleBackwardDv() {
    g.set_io_data_type(DataType::HALF).set_intermediate_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    auto q = g.tensor({b, h, s, d}, DataType::HALF, "q");
    auto k = g.tensor({b, h, s, d}, DataType::HALF, "k");
    auto dO = g.tensor({b, h, s, d}, DataType::HALF, "dO");
    auto stats = g.tensor({b, h, s, 1}, DataType::FLOAT, "stats");
    auto kt = g.transpose(k, Attributes().set_name("k_transpose").set("permutation", kSwap));
    auto sc = g.mul(g.matmul(q, kt, Attributes().set_name("matmul_q_kt")), g.tensor_scalar(0.125));
    auto p = g.exp(g.sub(sc, stats), Attributes().set_name("p"));
    auto pt = g.transpose(p, Attributes().set_name("p_transpose").set("permutation", kSwap));
    pt->set_data_type(DataType::HALF);
    auto dv = g.matmul(pt, dO, Attributes().set_name("matmul_pt_do"));
    dv->set_output(true).set_data_type(DataType::HALF);
  }
};

TEST(CudnnSdpaOverrides, TheSdpaOpsAreAttention) {
  {  // the causal forward: the composite on 9.19 (a causal mask is native from 9.21)
    CausalForward c;
    auto p = c.lower(engine());
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    EXPECT_GT(count_type(*p, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR), 1u);
    const std::string where = cu::sdpa_pattern(*p);
    EXPECT_NE(where.find("op 'sdpa'"), std::string::npos) << where;
  }
  {  // a plain forward on 9.19: the native SDPA operation
    Fwd f{Shape{2, 4, 4, 128, 128, 64}};
    auto p = f.lower(91900);
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    ASSERT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR), 1u);
    EXPECT_NE(cu::sdpa_pattern(*p).find("op 'sdpa'"), std::string::npos) << cu::sdpa_pattern(*p);
  }
  {  // the backward
    Bwd w(Shape{2, 4, 4, 64, 64, 64});
    auto p = w.lower(91900);
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    EXPECT_NE(cu::sdpa_pattern(*p).find("op 'sdpa_backward'"), std::string::npos) << cu::sdpa_pattern(*p);
  }
}

TEST(CudnnSdpaOverrides, TheFlexibleSdpaCompositesAreAttention) {
  {
    FlexibleForward f;
    const LoweringPlan p = lowered(f.g);
    const std::string where = cu::sdpa_pattern(p);
    for (const char* part : {"the matmul of op 'matmul' (node 'matmul_q_kt')", "the exp of op 'pointwise' (node 'softmax_exp')",
                             "into the matmul of op 'matmul' (node 'matmul_p_v')"})
      EXPECT_NE(where.find(part), std::string::npos) << part << " in '" << where << "'";
  }
  {  // through the RESHAPE view of P^T, from a graph whose Stats is an input
    FlexibleBackwardDv f;
    const LoweringPlan p = lowered(f.g);
    EXPECT_EQ(count_type(p, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR), 1u);
    const std::string where = cu::sdpa_pattern(p);
    for (const char* part : {"(node 'matmul_q_kt')", "(node 'p')", "(node 'matmul_pt_do')"})
      EXPECT_NE(where.find(part), std::string::npos) << part << " in '" << where << "'";
  }
}

TEST(CudnnSdpaOverrides, OtherGraphsAreNotAttention) {
  const std::int64_t m = 32, k = 16, n = 24;
  {  // a lone matmul (test_cudnn_gpu's matmul cases)
    Graph g;
    g.set_compute_data_type(DataType::FLOAT);
    auto c = g.matmul(g.tensor({1, m, k}, DataType::HALF, "A"), g.tensor({1, k, n}, DataType::HALF, "B"));
    c->set_output(true).set_data_type(DataType::HALF);
    EXPECT_EQ(cu::sdpa_pattern(lowered(g)), "");
  }
  {  // two matmuls with no exp between them (an MLP: matmul, relu, matmul)
    Graph g;
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto h = g.relu(g.matmul(g.tensor({1, m, k}, DataType::HALF, "A"), g.tensor({1, k, n}, DataType::HALF, "B")));
    auto y = g.matmul(h, g.tensor({1, n, k}, DataType::FLOAT, "W"));
    y->set_output(true).set_data_type(DataType::FLOAT);
    EXPECT_EQ(cu::sdpa_pattern(lowered(g)), "");
  }
  {  // an exp before the first matmul only: exp(A) B, then C D of that
    Graph g;
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto x = g.matmul(g.exp(g.tensor({1, m, k}, DataType::FLOAT, "A")), g.tensor({1, k, n}, DataType::FLOAT, "B"));
    auto y = g.matmul(x, g.tensor({1, n, k}, DataType::FLOAT, "W"));
    y->set_output(true).set_data_type(DataType::FLOAT);
    EXPECT_EQ(cu::sdpa_pattern(lowered(g)), "");
  }
  {  // matmul -> exp written to a bound buffer, read by a second matmul: not through virtual tensors
    Graph g;
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto e = g.exp(g.matmul(g.tensor({1, m, k}, DataType::FLOAT, "A"), g.tensor({1, k, n}, DataType::FLOAT, "B")));
    e->set_output(true).set_data_type(DataType::FLOAT);
    auto y = g.matmul(e, g.tensor({1, n, k}, DataType::FLOAT, "W"));
    y->set_output(true).set_data_type(DataType::FLOAT);
    EXPECT_EQ(cu::sdpa_pattern(lowered(g)), "");
  }
  EXPECT_EQ(cu::sdpa_pattern(LoweringPlan{}), "");
}

TEST(CudnnSdpaOverrides, AnAttentionGraphGetsAKernelCachePerShape) {
  for (bool dynamic : {false, true}) {  // planned static, and planned dynamic (Graph::set_dynamic_shapes)
    SCOPED_TRACE(dynamic ? "planned dynamic" : "planned static");
    CausalForward c;
    auto p = c.lower(engine(dynamic));
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    EXPECT_EQ(cu::lowered_dynamic(*p), dynamic) << "the plan builds (with its kernel cache when dynamic)";
    const cu::OverridePolicy policy = cu::override_policy(*p);
    EXPECT_TRUE(policy.fresh_kernel_cache) << "nothing reused across an attention graph's shapes";
    EXPECT_NE(policy.attention.find("op 'sdpa'"), std::string::npos) << policy.attention;
  }
  {  // the backward alike
    Bwd w(Shape{2, 4, 4, 64, 64, 64});
    auto p = w.lower(91900);
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    const cu::OverridePolicy policy = cu::override_policy(*p);
    EXPECT_TRUE(policy.fresh_kernel_cache);
    EXPECT_NE(policy.attention.find("op 'sdpa_backward'"), std::string::npos) << policy.attention;
  }
  for (int which = 0; which < 2; ++which) {  // the flexible composites alike
    SCOPED_TRACE(which == 0 ? "flexible forward" : "flexible backward dV");
    FlexibleForward f;
    FlexibleBackwardDv b;
    const cu::OverridePolicy policy = cu::override_policy(lowered(which == 0 ? f.g : b.g));
    EXPECT_TRUE(policy.fresh_kernel_cache);
    EXPECT_NE(policy.attention.find("(node 'matmul_q_kt')"), std::string::npos) << policy.attention;
  }
}

// The variable no longer decides anything here: the engine's planning options
// read it (include_unverified), but the lowering and the policy come out the same.
TEST(CudnnSdpaOverrides, TheVariableChangesNothing) {
  const char* old = std::getenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
  const std::string saved = old ? old : "";
  std::vector<cu::OverridePolicy> seen;
  for (bool on : {false, true}) {
    if (on) ::setenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED", "1", 1);
    else ::unsetenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
    const cu::LoweringOptions o = cu::planning_options(91900, 90, false);
    EXPECT_EQ(o.include_unverified, on);
    CausalForward c;
    auto p = c.lower(o);
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    seen.push_back(cu::override_policy(*p));
    Graph g;  // a lone matmul: shared cache either way
    g.set_compute_data_type(DataType::FLOAT);
    auto mm = g.matmul(g.tensor({1, 64, 128}, DataType::HALF, "A"), g.tensor({1, 128, 96}, DataType::HALF, "B"));
    mm->set_output(true).set_data_type(DataType::HALF);
    const cu::OverridePolicy other = cu::override_policy(lowered(g, o));
    EXPECT_FALSE(other.fresh_kernel_cache) << on;
    EXPECT_EQ(other.attention, "") << on;
  }
  if (old) ::setenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED", saved.c_str(), 1);
  else ::unsetenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[0].fresh_kernel_cache);
  EXPECT_TRUE(seen[1].fresh_kernel_cache);
  EXPECT_EQ(seen[0].attention, seen[1].attention);
}

TEST(CudnnSdpaOverrides, OtherGraphsShareOneKernelCacheAcrossShapes) {
  Graph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto c = g.matmul(g.tensor({1, 64, 128}, DataType::HALF, "A"), g.tensor({1, 128, 96}, DataType::HALF, "B"));
  c->set_output(true).set_data_type(DataType::HALF);
  for (bool dynamic : {false, true}) {
    const cu::OverridePolicy policy = cu::override_policy(lowered(g, engine(dynamic)));
    EXPECT_EQ(policy.attention, "") << dynamic;
    EXPECT_FALSE(policy.fresh_kernel_cache) << "one kernel cache shared by its shapes, as before";
  }
}

}  // namespace
}  // namespace opgraph
