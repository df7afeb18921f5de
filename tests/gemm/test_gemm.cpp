// The gemm family without a GPU: every declared specialisation (every config
// the heuristics can propose, every layout/alignment class, every epilogue
// kind) compiles with NVRTC for sm_90a; check_support's decisions and reasons;
// the generated epilogue holds the chain in graph order; knob round trip and
// plan labels; one kernel per layout class (two shapes, one compile).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "engines/gemm/gemm_declared.h"
#include "engines/gemm/gemm_engine.h"
#include "opgraph/op_graph.h"
#include "runtime/compiled_cache.h"
#include "runtime/loader.h"

using namespace opgraph;
using namespace opgraph::gemm;

namespace {

struct Shape {
  std::int64_t m, n, k;
  bool a_col = false, b_col = false;
  DataType in = DataType::BFLOAT16, out = DataType::BFLOAT16;
};

TensorPtr mat(OpGraph& g, std::int64_t r, std::int64_t c, bool col, DataType t, const char* name) {
  auto x = g.tensor({1, r, c}, t, name);
  if (col) x->set_stride({r * c, 1, r});
  return x;
}

// matmul, then `chain` (names of pointwise builders: bias, scale, residual, relu, ...).
OpGraph graph_of(const Shape& s, const std::vector<std::string>& chain) {
  OpGraph g;
  g.set_name("gemm").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto a = mat(g, s.m, s.k, s.a_col, s.in, "A");
  auto b = mat(g, s.k, s.n, s.b_col, s.in, "B");
  TensorPtr x = g.matmul(a, b);
  for (const auto& op : chain) {
    if (op == "bias") x = g.bias(x, g.tensor({1, 1, s.n}, DataType::BFLOAT16, "bias"));
    else if (op == "scale") x = g.scale(x, g.tensor_scalar(0.5));
    else if (op == "residual") x = g.add(x, g.tensor({1, s.m, s.n}, DataType::FLOAT, "res"));
    else if (op == "relu") x = g.relu(x);
    else if (op == "gelu") x = g.gelu(x);
    else if (op == "gelu_tanh") x = g.gelu_approx_tanh(x);
    else if (op == "swish") x = g.swish(x);
    else if (op == "sigmoid") x = g.sigmoid(x);
    else if (op == "tanh") x = g.tanh(x);
    else if (op == "sqrt") x = g.sqrt(x);
  }
  x->set_output(true).set_name("C").set_data_type(s.out);
  EXPECT_TRUE(g.validate().is_good()) << g.validate().message();
  return g;
}

Status support(const OpGraph& g) { return analyze_gemm(g).status(); }

std::string reason(const OpGraph& g) { return support(g).message(); }

}  // namespace

TEST(GemmSupport, AcceptsEveryLayoutDtypeAndEpilogue) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> ext(1, 300);
  for (bool ac : {false, true})
    for (bool bc : {false, true})
      for (DataType in : {DataType::BFLOAT16, DataType::HALF})
        for (DataType out : {DataType::BFLOAT16, DataType::HALF, DataType::FLOAT}) {
          Shape s{ext(rng), ext(rng), ext(rng), ac, bc, in, out};
          auto g = graph_of(s, {"bias", "scale", "residual", "relu", "gelu", "gelu_tanh", "swish", "sigmoid", "tanh"});
          auto p = analyze_gemm(g);
          ASSERT_TRUE(p.is_good()) << p.status().message();
          // A column-major A with M = 1 (B with K = 1) is also row-major: the unit stride decides.
          if (!(ac && s.m == 1)) { EXPECT_EQ(p->a_kmajor, !ac); }
          if (!(bc && s.k == 1)) { EXPECT_EQ(p->b_kmajor, bc); }
          EXPECT_EQ(p->m, s.m);
          EXPECT_EQ(p->n, s.n);
          EXPECT_EQ(p->k, s.k);
          EXPECT_EQ(p->in, in);
          EXPECT_EQ(p->out, out);
          ASSERT_EQ(p->steps.size(), 9u);
          ASSERT_EQ(p->operands.size(), 3u);
          EXPECT_EQ(p->operands[0].view.sr, 0) << "bias broadcasts along M";
          EXPECT_EQ(p->operands[0].view.sc, s.n == 1 ? 0 : 1) << "an extent-1 axis broadcasts (stride 0)";
          EXPECT_TRUE(p->operands[1].by_value);
          EXPECT_EQ(p->operands[1].value, 0.5);
          EXPECT_EQ(p->operands[2].view.sr, s.m == 1 ? 0 : s.n);
          // One batch: the 16-byte class needs the contiguous extents (= the row strides) % 8.
          const bool aligned = (ac ? s.m : s.k) % 8 == 0 && (bc ? s.k : s.n) % 8 == 0;
          EXPECT_EQ(p->vec, aligned ? 8 : 1) << s.m << "x" << s.n << "x" << s.k;
        }
}

TEST(GemmSupport, DeclinesNamingTheRule) {
  Shape s{64, 64, 64};
  {
    auto g = graph_of(s, {"sqrt"});
    EXPECT_EQ(support(g).code(), ErrorCode::GRAPH_NOT_SUPPORTED);
    EXPECT_NE(reason(g).find("rule G3"), std::string::npos) << reason(g);
    EXPECT_NE(reason(g).find("SQRT"), std::string::npos) << reason(g);
  }
  {
    Shape f = s;
    f.in = DataType::FLOAT;
    auto g = graph_of(f, {});
    EXPECT_NE(reason(g).find("rule G4"), std::string::npos) << reason(g);
  }
  {
    OpGraph g;
    g.set_compute_data_type(DataType::FLOAT);
    auto a = g.tensor({1, 8, 8}, DataType::BFLOAT16, "A");
    a->set_stride({128, 16, 2});  // neither axis contiguous
    auto c = g.matmul(a, g.tensor({1, 8, 8}, DataType::BFLOAT16, "B"));
    c->set_output(true).set_data_type(DataType::BFLOAT16);
    ASSERT_TRUE(g.validate().is_good());
    EXPECT_NE(reason(g).find("rule G5"), std::string::npos) << reason(g);
  }
  {
    OpGraph g;
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto c = g.matmul(g.tensor({1, 8, 8}, DataType::BFLOAT16, "A"), g.tensor({1, 8, 8}, DataType::BFLOAT16, "B"));
    auto y1 = g.relu(c);
    auto y2 = g.tanh(c);  // the matmul's output read twice: not one chain
    y1->set_output(true).set_data_type(DataType::BFLOAT16);
    y2->set_output(true).set_data_type(DataType::BFLOAT16);
    ASSERT_TRUE(g.validate().is_good());
    EXPECT_NE(reason(g).find("rule G2"), std::string::npos) << reason(g);
  }
  {
    Shape t = s;
    auto g = graph_of(t, {});
    OpGraph g2;
    g2.set_compute_data_type(DataType::FLOAT);
    auto a = g2.tensor({1, 8, 8}, DataType::BFLOAT16, "A");
    a->set_alignment(1);
    auto c = g2.matmul(a, g2.tensor({1, 8, 8}, DataType::BFLOAT16, "B"));
    c->set_output(true).set_data_type(DataType::BFLOAT16);
    ASSERT_TRUE(g2.validate().is_good());
    EXPECT_NE(reason(g2).find("rule G7"), std::string::npos) << reason(g2);
    EXPECT_TRUE(support(g).is_good());
  }
  {
    OpGraph g;
    g.set_compute_data_type(DataType::FLOAT);
    g.relu(g.tensor({4, 4}, DataType::BFLOAT16, "X"))->set_output(true);
    ASSERT_TRUE(g.validate().is_good());
    EXPECT_NE(reason(g).find("rule G1"), std::string::npos) << reason(g);
  }
}

// A matmul that binds no C (JSON without the node's outputs; validate() refuses it,
// but an analysis never dereferences an unbound port): a decline, not a crash
// (fuzz_graph_execute, tests/exec/test_fuzz_execute_regressions.cpp).
TEST(GemmSupport, AMatmulWithoutItsOutputDeclines) {
  const std::string json =
      R"({"context":{"compute_data_type":"FLOAT","intermediate_data_type":"NOT_SET","io_data_type":"HALF","name":"mm"},)"
      R"("nodes":[{"attributes":{},"compute_data_type":"FLOAT","inputs":{"A":[1],"B":[2]},"name":"mm0","op":"matmul"}],)"
      R"("tensors":[{"alignment":16,"data_type":"HALF","dim":[1,16,32],"is_virtual":false,"name":"a","reordering_type":"NONE","stride":[512,32,1],"uid":1,"uid_by_user":false,"user_set":{"data_type":true,"dim":true,"stride":true}},)"
      R"({"alignment":16,"data_type":"HALF","dim":[1,32,8],"is_virtual":false,"name":"b","reordering_type":"NONE","stride":[256,8,1],"uid":2,"uid_by_user":false,"user_set":{"data_type":true,"dim":true,"stride":true}}],)"
      R"("version":1})";
  auto g = OpGraph::deserialize(json);
  ASSERT_TRUE(g.is_good()) << g.status().to_string();
  auto p = analyze_gemm(g.value());
  ASSERT_TRUE(p.is_bad());
  EXPECT_EQ(p.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(p.status().message().find("does not bind all of A, B and C"), std::string::npos) << p.status().message();
}

TEST(GemmSupport, BatchBroadcastStrides) {
  OpGraph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({3, 5, 40, 24}, DataType::BFLOAT16, "A");
  auto b = g.tensor({1, 5, 24, 16}, DataType::BFLOAT16, "B");  // broadcast over the first batch axis
  g.matmul(a, b)->set_output(true).set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.validate().is_good());
  auto p = analyze_gemm(g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(p->batch0, 3);
  EXPECT_EQ(p->batch1, 5);
  EXPECT_EQ(p->a.s0, 5 * 40 * 24);
  EXPECT_EQ(p->a.s1, 40 * 24);
  EXPECT_EQ(p->b.s0, 0);
  EXPECT_EQ(p->b.s1, 24 * 16);
  EXPECT_EQ(p->c.s1, 40 * 16);
}

TEST(GemmCodegen, EpilogueHoldsTheChainInOrder) {
  auto g = graph_of({100, 72, 40}, {"bias", "gelu", "scale", "residual", "swish", "sigmoid", "tanh", "relu"});
  auto p = analyze_gemm(g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  const std::string body = epilogue_body(*p);
  std::size_t at = 0;
  // The bias row (broadcast along M) loads by column only; the residual by
  // (m, n); both have a unit column stride (the "_unit" forms).
  for (const char* piece : {"x = x + opgraph_gemm::epi_load_row_unit<0>(p.epi[0], b0, b1, n)", "opgraph_gemm::gelu(x)",
                            "x = x * static_cast<float>(p.scalar[1])", "opgraph_gemm::epi_load_unit<2>(p.epi[2]",
                            "opgraph_gemm::swish(x, 1.0f)", "opgraph_gemm::sigmoid(x)", "tanhf(x)", "opgraph_gemm::relu(x)"}) {
    const std::size_t next = body.find(piece, at);
    ASSERT_NE(next, std::string::npos) << piece << " not after position " << at << " in " << body;
    at = next;
  }
  EXPECT_EQ(body.find('\n'), std::string::npos) << "a #define value is one line";
  // Under SWAP_AB the bias becomes a column (broadcast along the kernel's N).
  GemmConfig swap;
  swap.swap_ab = true;
  EXPECT_NE(epilogue_body(kernel_view(*p, swap)).find("opgraph_gemm::epi_load_col_unit<0>(p.epi[0], b0, b1, m)"),
            std::string::npos);
  // Strides other than 1 keep the general forms: a column-major residual
  // (column stride M), and under SWAP_AB a bias row with column stride 2.
  {
    OpGraph g2;
    g2.set_name("gemm").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto a = g2.tensor({1, 100, 40}, DataType::BFLOAT16, "A");
    auto b = g2.tensor({1, 40, 72}, DataType::BFLOAT16, "B");
    auto res = g2.tensor({1, 100, 72}, DataType::FLOAT, "res");
    res->set_stride({7200, 1, 100});
    auto bias = g2.tensor({1, 1, 72}, DataType::BFLOAT16, "bias");
    bias->set_stride({144, 144, 2});
    g2.add(g2.bias(g2.matmul(a, b), bias), res)->set_output(true).set_name("C").set_data_type(DataType::BFLOAT16);
    ASSERT_TRUE(g2.validate().is_good()) << g2.validate().message();
    auto q = analyze_gemm(g2);
    ASSERT_TRUE(q.is_good()) << q.status().message();
    const std::string b2 = epilogue_body(*q);
    EXPECT_NE(b2.find("opgraph_gemm::epi_load_row<0>(p.epi[0], b0, b1, n)"), std::string::npos) << b2;
    EXPECT_NE(b2.find("opgraph_gemm::epi_load<2>(p.epi[1], b0, b1, m, n)"), std::string::npos) << b2;
    EXPECT_NE(epilogue_body(kernel_view(*q, swap)).find("opgraph_gemm::epi_load_col<0>(p.epi[0], b0, b1, m)"),
              std::string::npos);
  }
  auto r = kernel_request(*p, GemmConfig{});
  bool found = false;
  for (const auto& d : r.defines) found = found || (d.name == "OPGRAPH_GEMM_EPILOGUE_BODY" && d.value == body);
  EXPECT_TRUE(found);
}

TEST(GemmKnobs, RoundTripLabelsAndHeuristicDomain) {
  auto domains = knob_domains();
  for (const auto& c : proposable_configs()) {
    auto back = config_from_knobs(knobs_of(c));
    ASSERT_TRUE(back.is_good()) << back.status().message();
    EXPECT_EQ(*back, c);
    for (const auto& [type, value] : knobs_of(c)) {
      auto d = std::find_if(domains.begin(), domains.end(), [&](const KnobDomain& x) { return x.type == type; });
      ASSERT_NE(d, domains.end());
      EXPECT_NE(std::find(d->values.begin(), d->values.end(), value), d->values.end()) << to_string(type);
    }
  }
  Knobs bad = knobs_of(GemmConfig{});
  bad[KnobType::TILE_M] = 96;
  EXPECT_EQ(config_from_knobs(bad).status().code(), ErrorCode::INVALID_VALUE);
  bad.erase(KnobType::TILE_M);
  EXPECT_NE(config_from_knobs(bad).status().message().find("TILE_M"), std::string::npos);
  auto text = knobs_to_string(knobs_of(GemmConfig{}));
  auto parsed = knobs_from_string(text);
  ASSERT_TRUE(parsed.is_good());
  EXPECT_EQ(*parsed, knobs_of(GemmConfig{}));
  auto e = make_gemm_engine(EngineIdentity{20100, "gemm"});
  PlanConfig pc{20100, knobs_of(GemmConfig{}), {}, -1};
  EXPECT_EQ(e->label(pc), "gemm_v1_128x128s3");
  pc.knobs = knobs_of(GemmConfig{1, 64, 128, 2, 1, 1, true, 1});
  EXPECT_EQ(e->label(pc), "gemm_v1_64x128s2_swap_r1");
  // Every pick is proposable.
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 200; ++i) {
    GemmProblem p = sample_problem(DataType::BFLOAT16, DataType::BFLOAT16, true, true, i % 2 ? 8 : 1, {});
    p.m = std::uniform_int_distribution<std::int64_t>(1, 20000)(rng);
    p.n = std::uniform_int_distribution<std::int64_t>(1, 20000)(rng);
    for (bool fb : {false, true}) {
      auto c = pick_config(p, 132, fb);
      auto all = proposable_configs();
      EXPECT_NE(std::find(all.begin(), all.end(), c), all.end());
    }
  }
}

TEST(GemmNvrtc, EveryDeclaredSpecialisationCompilesForSm90a) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  auto all = declared_specialisations();
  ASSERT_GE(all.size(), 17u);
  // The TMA-store epilogue (EPI_TMA) is in the set on every layout class.
  EXPECT_GE(std::count_if(all.begin(), all.end(), [](const runtime::KernelRequest& r) {
              return r.kernel.size() > 3 && r.kernel.compare(r.kernel.size() - 3, 3, "_et") == 0;
            }),
            5);
  for (const auto& r : all) {
    auto k = runtime::compile_kernel(r, "sm_90a");
    ASSERT_TRUE(k.is_good()) << r.kernel << ": " << k.status().message();
    EXPECT_TRUE(runtime::validate_cubin(k->cubin, k->lowered_name).is_good()) << r.kernel;
  }
}

TEST(GemmNvrtc, OneKernelPerLayoutClass) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  auto g1 = graph_of({96, 200, 64}, {"bias", "relu"});
  auto g2 = graph_of({1000, 40, 136}, {"bias", "relu"});
  auto p1 = analyze_gemm(g1), p2 = analyze_gemm(g2);
  ASSERT_TRUE(p1.is_good() && p2.is_good());
  EXPECT_EQ(kernel_request(*p1, GemmConfig{}).key("sm_90a"), kernel_request(*p2, GemmConfig{}).key("sm_90a"));
  runtime::CacheOptions o;
  o.root = std::filesystem::temp_directory_path() / ("opgraph_gemm_cls_" + std::to_string(::getpid()));
  std::filesystem::remove_all(o.root);
  auto target = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(target.is_good());
  runtime::CompiledCache cache(o, runtime::CacheEnvironment::current(*target, false));
  auto check = [](const runtime::CompiledKernel& k) { return runtime::validate_cubin(k.cubin, k.lowered_name); };
  ASSERT_TRUE(cache.get(kernel_request(*p1, GemmConfig{}), "sm_90a", check).is_good());
  ASSERT_TRUE(cache.get(kernel_request(*p2, GemmConfig{}), "sm_90a", check).is_good());
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);
  std::filesystem::remove_all(o.root);
}

TEST(GemmHeuristics, BackendFirstUntilMeasuredAndFallbackPortable) {
  auto g = graph_of({4096, 4096, 4096}, {"bias", "gelu"});
  auto engine = make_gemm_engine(EngineIdentity{20100, "gemm"});
  FactsCache facts(g, PlanTarget{});
  PlanContext ctx{&facts};
  ASSERT_TRUE(engine->check_support(g, ctx).is_good());
  auto a = heuristics(HeurMode::A, ctx, {engine.get()});
  ASSERT_TRUE(a.is_good());
  ASSERT_EQ(a->size(), 2u);
  EXPECT_TRUE((*a)[0].backend_marker) << "cuDNN stays first until bench/results shows ours ahead";
  EXPECT_FALSE((*a)[1].backend_marker);
  EXPECT_EQ((*a)[1].config.engine_id, 20100);
  auto picked = config_from_knobs((*a)[1].config.knobs);
  ASSERT_TRUE(picked.is_good());
  EXPECT_EQ(picked->tile_m, 128);
  EXPECT_EQ(picked->tile_n, 128);
  auto fb = heuristics(HeurMode::FALLBACK, ctx, {engine.get()});
  ASSERT_TRUE(fb.is_good());
  ASSERT_EQ(fb->size(), 2u);
  EXPECT_FALSE((*fb)[0].backend_marker);
  EXPECT_EQ(config_from_knobs((*fb)[0].config.knobs)->tile_m, 64);
  EXPECT_TRUE((*fb)[1].backend_marker);
  // Not offered (opt-in off): only the backend.
  auto none = heuristics(HeurMode::A, ctx, {});
  ASSERT_TRUE(none.is_good());
  ASSERT_EQ(none->size(), 1u);
  EXPECT_TRUE((*none)[0].backend_marker);
  // A graph the family declines: only the backend.
  auto bad = graph_of({64, 64, 64}, {"sqrt"});
  FactsCache bad_facts(bad, PlanTarget{});
  PlanContext bad_ctx{&bad_facts};
  EXPECT_EQ(engine->check_support(bad, bad_ctx).code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  auto only = heuristics(HeurMode::A, bad_ctx, {engine.get()});
  ASSERT_TRUE(only.is_good());
  EXPECT_EQ(only->size(), 1u);
}

TEST(GemmHeuristics, SmallGridsTakeNarrowerTiles) {
  GemmProblem p = sample_problem(DataType::BFLOAT16, DataType::BFLOAT16, true, true, 8, {});
  p.m = 16;
  p.n = 4096;
  auto c = pick_config(p, 132, false);
  EXPECT_EQ(c.tile_m, 64);
  p.m = 1024;
  p.n = 1024;  // 64 tiles of 128x128 < 132 SMs
  c = pick_config(p, 132, false);
  EXPECT_EQ(c.tile_m * c.tile_n, 64 * 128);
  p.m = p.n = 8192;
  c = pick_config(p, 132, false);
  EXPECT_EQ(c.tile_m * c.tile_n, 128 * 128);
  p.vec = 1;
  EXPECT_EQ(pick_config(p, 132, false).stages, 2);
}
