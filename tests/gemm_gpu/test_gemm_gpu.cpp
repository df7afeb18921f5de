// The gemm engine on a GPU (built with -DOPGRAPH_GPU_TESTS=ON; run by
// bench/run.sh tests on the H200, never on CI). Random shapes with tails
// (M, N, K not multiples of any tile), every layout, both input types, every
// output type and epilogue kind, batch with broadcast, FlashInfer-shaped
// bindings; each against the reference engine (float64) on fresh random
// inputs with the output poisoned first. Tolerance: |got - ref| <= rtol*|ref|
// + atol, rtol = 1/64 (bf16 out), 1/512 (fp16 out), 1e-4 (fp32 out), atol =
// 1e-5 * K + 1e-3 (fp32 accumulation order).
#include <gtest/gtest.h>

#include "engines/gemm/gemm_engine.h"
#include "engines/reference/executor.h"
#include "gemm_gpu/gemm_gpu_fixture.h"

using namespace opgraph;
using namespace opgraph::gemm_testing;

namespace {

// Runs `c` under `knobs` (empty: the heuristic's pick); returns the number of
// bad elements (0 = pass) and prints the worst.
std::size_t run_case(const GemmCase& c, Knobs knobs, std::mt19937& rng) {
  OpGraph g = build_case(c);
  EXPECT_TRUE(g.validate().is_good()) << g.validate().message();
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  FactsCache facts(g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  Status sup = engine->check_support(g, ctx);
  EXPECT_TRUE(sup.is_good()) << describe(c) << ": " << sup.message();
  if (sup.is_bad()) return 1;
  if (knobs.empty()) {
    auto props = gemm::heuristics(HeurMode::A, ctx, {engine.get()});
    EXPECT_TRUE(props.is_good());
    for (const auto& pr : *props)
      if (!pr.backend_marker) knobs = pr.config.knobs;
  }
  auto plan = build_direct(*engine, g, PlanConfig{engine->id(), knobs, {}, -1}, ctx);
  EXPECT_TRUE(plan.is_good()) << plan.status().message();
  if (plan.is_bad()) return 1;
  Operands o;
  Status made = make_operands(*gpu().api, g, rng, o);  // the output poisoned
  EXPECT_TRUE(made.is_good()) << made.message();
  Status ran = (*plan)->execute(pack_of(o), device_ec());
  EXPECT_TRUE(ran.is_good()) << ran.message();
  EXPECT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
  return bad_elements(c, reference_out(g, o), o, " knobs {" + knobs_to_string(knobs) + "}");
}

// A random config the engine takes for case `c`: any proposable config (v2
// only on sm_90) with a random swap, raster and (v2) split count.
Knobs random_knobs(const GemmCase& c, std::mt19937& rng) {
  OpGraph g = build_case(c);
  EXPECT_TRUE(g.validate().is_good());  // analyze_gemm reads inferred strides
  auto p = gemm::analyze_gemm(g);
  EXPECT_TRUE(p.is_good()) << describe(c);
  std::vector<gemm::GemmConfig> ok;
  for (auto cfg : gemm::proposable_configs()) {
    if (cfg.version == 2 && gpu().props.major != 9) continue;
    cfg.swap_ab = rng() % 2 == 0;
    cfg.raster = static_cast<int>(rng() % 2);
    if (cfg.version == 2) cfg.split_k = static_cast<int>(1 + rng() % 4);
    if (cfg.version == 2) cfg.stream_k = cfg.split_k == 1 ? static_cast<int>(rng() % 2) : 0;
    // Only combinations the knob rules accept: a proposable stream-K config given a random
    // split would be refused at build (STREAM_K=1 needs SPLIT_K_SLC=1), failing the test for
    // the generator, not the kernel.
    if (!gemm::config_from_knobs(gemm::knobs_of(cfg)).is_good()) continue;
    if (p.is_good() && gemm::config_takes(*p, cfg)) ok.push_back(cfg);
  }
  if (ok.empty()) return gemm::knobs_of(gemm::GemmConfig{});
  return gemm::knobs_of(ok[rng() % ok.size()]);
}

class GemmGpu : public GemmGpuFixture {};

}  // namespace

TEST_F(GemmGpu, EveryLayoutAndTypeWithTailsHeuristicAndRandomKnobs) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> ext(1, 333);
  for (bool ac : {false, true})
    for (bool bc : {false, true})
      for (DataType in : {DataType::BFLOAT16, DataType::HALF})
        for (DataType out : {DataType::BFLOAT16, DataType::HALF, DataType::FLOAT}) {
          GemmCase c{1, ext(rng), ext(rng), ext(rng), ac, bc, in, out, {"bias", "relu"}};
          EXPECT_EQ(run_case(c, {}, rng), 0u);
          EXPECT_EQ(run_case(c, random_knobs(c, rng), rng), 0u);
        }
}

TEST_F(GemmGpu, AlignedClassTailsInsideTiles) {
  std::mt19937 rng(std::random_device{}());
  // Multiples of 8 but not of 32/64/128: the 16-byte class with partial tiles.
  for (auto [m, n, k] : {std::tuple{136, 200, 40}, {8, 1032, 264}, {520, 72, 8}, {257 * 8, 24, 1000}}) {
    for (bool ac : {false, true})
      for (bool bc : {false, true}) {
        GemmCase c{1, m, n, k, ac, bc, DataType::BFLOAT16, DataType::BFLOAT16, {}};
        EXPECT_EQ(run_case(c, random_knobs(c, rng), rng), 0u);
      }
  }
}

TEST_F(GemmGpu, EveryEpilogueKind) {
  std::mt19937 rng(std::random_device{}());
  const std::vector<std::vector<std::string>> chains = {
      {"bias"}, {"scale"}, {"residual"}, {"relu"}, {"gelu"}, {"gelu_tanh"}, {"swish"}, {"sigmoid"}, {"tanh"},
      {"bias", "gelu", "scale", "residual"}, {"scale", "bias", "swish", "sigmoid", "tanh"}};
  for (const auto& ch : chains) {
    GemmCase c{1, 97, 130, 72, false, true, DataType::BFLOAT16, DataType::FLOAT, ch};
    EXPECT_EQ(run_case(c, random_knobs(c, rng), rng), 0u);
  }
}

TEST_F(GemmGpu, BatchWithBroadcastWeight) {
  std::mt19937 rng(std::random_device{}());
  GemmCase c{3, 70, 90, 48, false, true, DataType::HALF, DataType::HALF, {"bias", "residual"}, true};
  EXPECT_EQ(run_case(c, {}, rng), 0u);
  c.b_broadcast = false;
  c.a_col = true;
  EXPECT_EQ(run_case(c, random_knobs(c, rng), rng), 0u);
}

TEST_F(GemmGpu, FlashInferShapedBindings) {
  // FlashInfer's mm_bf16 binds a (m, k) row-major activation and a weight
  // stored (n, k) as [1, m, k] and [1, k, n] (the weight column-major).
  std::mt19937 rng(std::random_device{}());
  for (std::int64_t m : {1, 16, 129})
    for (DataType out : {DataType::BFLOAT16, DataType::FLOAT}) {
      GemmCase c{1, m, 4096, 512, false, true, DataType::BFLOAT16, out, {}};
      EXPECT_EQ(run_case(c, {}, rng), 0u);
    }
}

TEST_F(GemmGpu, OnePlanCompilePerLayoutClass) {
  std::mt19937 rng(std::random_device{}());
  const Knobs k = gemm::knobs_of(gemm::GemmConfig{1, 64, 128, 3, 1, 1, false, 1});
  GemmCase c1{1, 77, 300, 96, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(c1, k, rng), 0u);
  auto* rt = gemm::shared_runtime_if_open();
  ASSERT_NE(rt, nullptr);
  const auto before = rt->cache().stats();
  GemmCase c2 = c1;
  c2.m = 513;
  c2.n = 40;
  c2.k = 1000;
  EXPECT_EQ(run_case(c2, k, rng), 0u);
  const auto after = rt->cache().stats();
  EXPECT_EQ(after.misses, before.misses) << "a second shape of the same class compiled again";
  EXPECT_EQ(after.bypassed, before.bypassed);
}

// gemm_v2 (TMA + wgmma) on every layout class and TILE_N, with tails in M, N
// and K (16-byte class: contiguous extents multiples of 8), split K, swap AB,
// both rasters, both input types and every output type.
TEST_F(GemmGpu, V2EveryLayoutTileSplitAndSwap) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 needs sm_90";
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> e8(1, 48);
  for (bool ac : {false, true})
    for (bool bc : {false, true})
      for (int tn : {256, 128, 64, 32, 16}) {
        if (!bc && tn < 64) continue;  // an N-major B needs TILE_N >= 64
        GemmCase c{1, 8 * e8(rng) + 128, 8 * e8(rng) + 64, 8 * e8(rng) + 64, ac, bc, DataType::BFLOAT16,
                   DataType::BFLOAT16, {"bias", "gelu"}};
        const int split = static_cast<int>(1 + rng() % 3);
        EXPECT_EQ(run_case(c, v2_knobs(tn, split, false, static_cast<int>(rng() % 2)), rng), 0u) << "TILE_N " << tn;
      }
  for (DataType out : {DataType::BFLOAT16, DataType::HALF, DataType::FLOAT}) {
    GemmCase c{1, 8 * e8(rng), 8 * e8(rng) + 256, 8 * e8(rng), false, true, DataType::HALF, out, {"scale", "residual"}};
    EXPECT_EQ(run_case(c, v2_knobs(128, 1, false), rng), 0u);
    EXPECT_EQ(run_case(c, v2_knobs(128, 4, true), rng), 0u);
  }
  // Small M through swap AB and split K (the decode shapes), and the heuristic's pick.
  for (std::int64_t m : {1, 16, 24, 128}) {
    GemmCase c{1, m, 4096, 520, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias"}};
    EXPECT_EQ(run_case(c, v2_knobs(m <= 16 ? 16 : m <= 32 ? 32 : 128, 4, m < 128), rng), 0u) << "M " << m;
    EXPECT_EQ(run_case(c, {}, rng), 0u) << "M " << m << " (pick)";
  }
  // Batch with a broadcast weight, K-major and M-major A.
  GemmCase b{3, 200, 136, 72, false, true, DataType::BFLOAT16, DataType::FLOAT, {"bias", "relu"}, true};
  EXPECT_EQ(run_case(b, v2_knobs(128, 2, false), rng), 0u);
  b.a_col = true;
  b.b_broadcast = false;
  EXPECT_EQ(run_case(b, v2_knobs(64, 1, false), rng), 0u);
  // A second shape of one class reuses the compiled kernel and the plan.
  GemmCase big{1, 1000, 1032, 264, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {}};
  EXPECT_EQ(run_case(big, {}, rng), 0u);
}

// CLUSTER_M = 2 (CTA pairs sharing B through TMA multicast): every layout
// class at TILE_N 256 and 128, an odd number of 128-row tiles (the pair's
// second tile past M), tails in N and K, split K, swap AB, a batch with a
// broadcast weight, and a problem larger than one wave of pairs.
TEST_F(GemmGpu, V2ClusterPairsEveryLayoutTailsSplitBatch) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 needs sm_90";
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> e8(1, 40);
  for (bool ac : {false, true})
    for (bool bc : {false, true})
      for (int tn : {256, 128}) {
        // 3 or 5 row tiles: the last pair has a phantom second tile.
        const std::int64_t m = 128 * (rng() % 2 ? 2 : 4) + 8 * e8(rng) % 120 + 8;
        GemmCase c{1, m, 8 * e8(rng) + 136, 8 * e8(rng) + 64, ac, bc, DataType::BFLOAT16, DataType::BFLOAT16,
                   {"bias", "gelu"}};
        const int split = static_cast<int>(1 + rng() % 3);
        EXPECT_EQ(run_case(c, v2_knobs(tn, split, false, static_cast<int>(rng() % 2), 2), rng), 0u)
            << "TILE_N " << tn << " split " << split;
      }
  GemmCase h{1, 8 * e8(rng) + 300, 8 * e8(rng) + 256, 8 * e8(rng), false, true, DataType::HALF, DataType::FLOAT,
             {"scale", "residual"}};
  EXPECT_EQ(run_case(h, v2_knobs(128, 1, false, 0, 2), rng), 0u);
  EXPECT_EQ(run_case(h, v2_knobs(256, 2, true, 1, 2), rng), 0u);
  GemmCase b{3, 264, 200, 72, false, true, DataType::BFLOAT16, DataType::FLOAT, {"bias", "relu"}, true};
  EXPECT_EQ(run_case(b, v2_knobs(128, 2, false, 0, 2), rng), 0u);
  // More tile pairs than resident clusters: every CTA pair takes several units.
  GemmCase big{1, 2048 + 8, 2048 + 24, 512 + 8, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias"}};
  EXPECT_EQ(run_case(big, v2_knobs(256, 1, false, 0, 2), rng), 0u);
  EXPECT_EQ(run_case(big, v2_knobs(128, 1, false, 1, 2), rng), 0u);
}

// STREAM_K = 1: more tiles than one wave; the tiles past the last whole wave
// (with one wave more where those are few) share their K blocks out evenly,
// a contiguous range per CTA (2-4 pieces a tile, partial sums in K order),
// while the others run whole; tails in M, N and K, both widths, a CTA pair
// cluster, a batch with a broadcast weight, fp32 output.
TEST_F(GemmGpu, V2StreamKMatchesTheReference) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 needs sm_90";
  std::mt19937 rng(std::random_device{}());
  struct Shape {
    std::int64_t batch, m, n, k;
    int tn, cluster;
  };
  // On 132 resident CTAs (66 pairs). K = 520 (9 blocks): 1100 x 2000 @128:
  // 9 x 16 = 144 tiles (12 past the wave: 108 blocks, so all 144 share);
  // 1100 x 4096 @256: 9 x 16; pairs @128: 5 x 32 = 160 on 66; batch 3 x 3 x 16
  // = 144. K = 704 (11 blocks): 1000 x 3662 @128: 8 x 29 = 232 tiles, 132
  // whole and 100 shared (8-9 blocks a CTA); pairs: 4 x 29 = 116, 66 whole.
  for (const Shape& sh : {Shape{1, 1100, 2000, 520, 128, 1}, Shape{1, 1100, 4096, 520, 256, 1},
                          Shape{1, 1100, 4000, 520, 128, 2}, Shape{3, 300, 2000, 520, 128, 1},
                          Shape{1, 1000, 3662, 704, 128, 1}, Shape{1, 1000, 3662, 704, 128, 2}}) {
    GemmCase c{sh.batch, sh.m, sh.n, sh.k, false, true, DataType::BFLOAT16, sh.batch > 1 ? DataType::FLOAT : DataType::BFLOAT16,
               {"bias", "gelu"}, sh.batch > 1};
    EXPECT_EQ(run_case(c, v2_knobs(sh.tn, 1, false, static_cast<int>(rng() % 2), sh.cluster, 1), rng), 0u)
        << sh.m << "x" << sh.n << "x" << sh.k << " TILE_N " << sh.tn << " CLUSTER_M " << sh.cluster;
  }
}

// WARP_SPEC_CFG = 1 (ping-pong: the consumer warpgroups take whole tiles in
// turn and share the ring): every layout class at TILE_N 128 and 64 with tails
// in M, N and K; split K (splits of unequal K ranges, so the warpgroups step
// over rings of different lengths); a stream-K tail (whole and split units
// interleaved); a CTA pair cluster; a batch with a broadcast weight; K of one
// block (fewer stages than the ring); a CTA with one unit (the second
// warpgroup idle) and with odd and even unit counts; long K (the ring wraps
// many times per tile).
TEST_F(GemmGpu, V2PingPongEveryLayoutTailsSplitStreamKClusterBatch) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 needs sm_90";
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> e8(1, 40);
  for (bool ac : {false, true})
    for (bool bc : {false, true})
      for (int tn : {128, 64}) {
        GemmCase c{1, 8 * e8(rng) + 200, 8 * e8(rng) + 136, 8 * e8(rng) + 64, ac, bc, DataType::BFLOAT16,
                   DataType::BFLOAT16, {"bias", "gelu"}};
        const int split = static_cast<int>(1 + rng() % 3);
        EXPECT_EQ(run_case(c, v2_knobs(tn, split, false, static_cast<int>(rng() % 2), 1, 0, 1), rng), 0u)
            << "TILE_N " << tn << " split " << split;
      }
  // fp16 in, fp32 out, swap AB, scale + residual.
  GemmCase h{1, 8 * e8(rng) + 300, 8 * e8(rng) + 256, 8 * e8(rng), false, true, DataType::HALF, DataType::FLOAT,
             {"scale", "residual"}};
  EXPECT_EQ(run_case(h, v2_knobs(128, 1, true, 0, 1, 0, 1), rng), 0u);
  // K of one block; split 3 over 7 blocks (2 / 2 / 3: unequal rings).
  GemmCase k1{1, 1000, 1000, 40, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "relu"}};
  EXPECT_EQ(run_case(k1, v2_knobs(128, 1, false, 0, 1, 0, 1), rng), 0u);
  GemmCase k7{1, 1000, 1000, 7 * 64 - 8, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias"}};
  EXPECT_EQ(run_case(k7, v2_knobs(128, 3, false, 1, 1, 0, 1), rng), 0u);
  // One tile: one unit, the second warpgroup has nothing to do.
  GemmCase one{1, 100, 120, 200, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(one, v2_knobs(128, 1, false, 0, 1, 0, 1), rng), 0u);
  // Several units per CTA (TILE_N 64: 9 x 34 = 306 tiles on 132 CTAs, 2 or 3
  // each), K of 17 blocks (the 8-deep ring wraps twice per tile).
  GemmCase big{1, 1032, 2152, 1032 + 8, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(big, v2_knobs(64, 1, false, 0, 1, 0, 1), rng), 0u);
  // A stream-K tail: 144 tiles = 132 whole + 12 split 2 ways.
  GemmCase sk{1, 1100, 2000, 520, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(sk, v2_knobs(128, 1, false, 1, 1, 1, 1), rng), 0u);
  // CTA pairs (CLUSTER_M = 2) with a phantom tile, split 2; a batch.
  GemmCase pr{1, 128 * 2 + 40, 8 * e8(rng) + 136, 8 * e8(rng) + 64, false, false, DataType::BFLOAT16,
              DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(pr, v2_knobs(128, 2, false, 0, 2, 0, 1), rng), 0u);
  EXPECT_EQ(run_case(big, v2_knobs(128, 1, false, 1, 2, 0, 1), rng), 0u);
  GemmCase b{3, 264, 200, 72, false, true, DataType::BFLOAT16, DataType::FLOAT, {"bias", "relu"}, true};
  EXPECT_EQ(run_case(b, v2_knobs(64, 2, false, 0, 1, 0, 1), rng), 0u);
}

// The suite the 64 x 256 and 256 x 128 tiles share: every layout class with
// tails in M, N and K (bias + gelu, split K of 1-3 ways of unequal ranges),
// fp16 in / fp32 out with swap AB, K of 7 blocks split 3 ways (2 / 2 / 3), a
// stream-K tail (M = `sk_m`), many units per CTA with long K (M = `big_m`),
// and a batch with a broadcast weight (N = `batch_n`). The loop's M and N
// start past `m0` and `n0` (multiples of 8: an M-major A stays in the
// 16-byte class).
struct TileSuite {
  int tile_m, tile_n, stages, pingpong;
  std::int64_t m0, n0, sk_m, big_m, batch_n;
};
void run_tile_suite(const TileSuite& s) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> e8(1, 40);
  gemm::GemmConfig tile;
  tile.version = 2;
  tile.tile_m = s.tile_m;
  tile.tile_n = s.tile_n;
  tile.stages = s.stages;
  tile.pingpong = s.pingpong;
  auto knobs = [&](int split, bool swap, int raster, int stream_k) {
    return run_knobs(tile, split, swap, raster, stream_k);
  };
  for (bool ac : {false, true})
    for (bool bc : {false, true}) {
      GemmCase c{1, 8 * e8(rng) + s.m0, 8 * e8(rng) + s.n0, 8 * e8(rng) + 64, ac, bc, DataType::BFLOAT16,
                 DataType::BFLOAT16, {"bias", "gelu"}};
      const int split = static_cast<int>(1 + rng() % 3);
      EXPECT_EQ(run_case(c, knobs(split, false, static_cast<int>(rng() % 2), 0), rng), 0u) << "split " << split;
    }
  GemmCase h{1, 8 * e8(rng) + 300, 8 * e8(rng) + 256, 8 * e8(rng), false, true, DataType::HALF, DataType::FLOAT,
             {"scale", "residual"}};
  EXPECT_EQ(run_case(h, knobs(1, true, 0, 0), rng), 0u);
  GemmCase k7{1, 1000, 1000, 7 * 64 - 8, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias"}};
  EXPECT_EQ(run_case(k7, knobs(3, false, 1, 0), rng), 0u);
  const GemmCase sk{1, s.sk_m, 2000, 520, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(sk, knobs(1, false, 0, 1), rng), 0u) << "stream-K tail";
  const GemmCase big{1, s.big_m, 2072, 1032 + 8, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(big, knobs(1, false, 0, 0), rng), 0u) << "many units per CTA";
  const GemmCase b{3, 264, s.batch_n, 72, false, true, DataType::BFLOAT16, DataType::FLOAT, {"bias", "relu"}, true};
  EXPECT_EQ(run_case(b, knobs(2, false, 0, 0), rng), 0u) << "batch";
}

// Ping-pong over 64 x 256 tiles (TILE_M = 64: one m64n256 wgmma per k16
// step, a 64-row A box).
TEST_F(GemmGpu, V2PingPong64x256EveryLayoutTailsSplitStreamKBatch) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 needs sm_90";
  // Stream-K at M = 1060: 17 x 8 = 136 tiles, 132 whole + 4 split.
  run_tile_suite({64, 256, 5, 1, 136, 264, 1060, 2056, 300});
}

// Cooperative 256 x 128 (TILE_M = 256: each consumer warpgroup 128 rows, two
// m64n128 wgmmas per k16 step; A boxes of 256 rows or four of 64; split K
// with four 64-row partial blocks per split tile; a last row tile mostly past M).
TEST_F(GemmGpu, V2Cooperative256x128EveryLayoutTailsSplitStreamKBatch) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 needs sm_90";
  // Stream-K at M = 2200: 9 x 16 = 144 tiles of 256 x 128, 132 whole + 12 split.
  run_tile_suite({256, 128, 4, 0, 264, 136, 2200, 4104, 200});
}

// EPI_TMA (cooperative 128 x 256 with 3 stages, the whole tile's copy, and a
// 16-bit output: the chain runs on the fragments in registers and the tile
// leaves through TMA stores of a swizzled shared copy): every layout class
// with tails in M and N (clipped by TMA; the chain's operands guarded), plain
// and chained (bias + gelu, scale + residual, a broadcast bias + relu), split
// K, a stream-K tail, a batch, fp16; an output whose row stride is not
// 16-byte aligned (odd N: the map is refused and the staged epilogue runs) and
// swap AB (the kernel view's output is not N-contiguous: a kernel without
// EPI_TMA).
TEST_F(GemmGpu, V2TmaStoreEpilogueEveryLayoutTailsSplitBatchFallbacks) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 needs sm_90";
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> e8(1, 40);
  gemm::GemmConfig et;  // 128 x 256, 3 stages
  et.version = 2;
  et.tile_n = 256;
  et.stages = 3;
  auto knobs = [&](int split, bool swap, int raster, int stream_k) {
    return run_knobs(et, split, swap, raster, stream_k);
  };
  for (bool ac : {false, true})
    for (bool bc : {false, true}) {
      GemmCase c{1, 8 * e8(rng) + 136, 8 * e8(rng) + 264, 8 * e8(rng) + 64, ac, bc, DataType::BFLOAT16,
                 DataType::BFLOAT16, {}};
      if (ac == bc) c.chain = {"bias", "gelu"};
      const int split = static_cast<int>(1 + rng() % 3);
      EXPECT_EQ(run_case(c, knobs(split, false, static_cast<int>(rng() % 2), 0), rng), 0u) << "split " << split;
    }
  GemmCase h{1, 8 * e8(rng) + 300, 8 * e8(rng) + 256, 8 * e8(rng), false, true, DataType::HALF, DataType::HALF, {}};
  EXPECT_EQ(run_case(h, knobs(1, false, 0, 0), rng), 0u);
  GemmCase hr = h;
  hr.chain = {"scale", "residual"};
  EXPECT_EQ(run_case(hr, knobs(1, false, 1, 0), rng), 0u);
  GemmCase odd{1, 300, 8 * e8(rng) + 257, 200, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(odd, knobs(1, false, 0, 0), rng), 0u) << "odd N: staged epilogue";
  EXPECT_EQ(run_case(h, knobs(2, true, 0, 0), rng), 0u) << "swap AB";
  // 9 x 16 = 144 tiles: 132 whole + 12 split; many units per CTA with long K.
  GemmCase sk{1, 1100, 4096, 520, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(sk, knobs(1, false, 0, 1), rng), 0u);
  GemmCase big{1, 2056, 2072, 1032 + 8, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {}};
  EXPECT_EQ(run_case(big, knobs(1, false, 1, 0), rng), 0u);
  GemmCase b{3, 264, 520, 72, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "relu"}, true};
  EXPECT_EQ(run_case(b, knobs(2, false, 0, 0), rng), 0u);
  // 128 x 128 with 5 stages (the pick of a plain 128-wide output): two
  // layout classes with tails, chained and plain, split K, many units per CTA.
  gemm::GemmConfig et128 = et;
  et128.tile_n = 128;
  et128.stages = 5;
  auto k128 = [&](int split) { return run_knobs(et128, split, false, 0, 0); };
  for (bool ac : {false, true}) {
    GemmCase c{1, 8 * e8(rng) + 136, 8 * e8(rng) + 136, 8 * e8(rng) + 64, ac, !ac, DataType::BFLOAT16,
               DataType::BFLOAT16, {}};
    if (ac) c.chain = {"bias", "gelu"};
    EXPECT_EQ(run_case(c, k128(ac ? 2 : 1), rng), 0u) << "128 x 128";
  }
  EXPECT_EQ(run_case(big, k128(1), rng), 0u) << "128 x 128";
  // Copies of fewer boxes than the tile has, stored in passes: 128 x 256 with
  // 4 stages holds two of its four boxes (two passes per tile); and 128 x 128
  // with 6 stages (its whole copy, sharing the staged epilogue's region). Tails,
  // a chain, split K, a stream-K tail, many units per CTA, CTA pairs.
  for (auto [tn, st] : {std::pair{256, 4}, std::pair{128, 6}}) {
    gemm::GemmConfig d = et;
    d.tile_n = tn;
    d.stages = st;
    for (bool ac : {false, true}) {
      GemmCase c{1, 8 * e8(rng) + 136, 8 * e8(rng) + 264, 8 * e8(rng) + 64, ac, true, DataType::BFLOAT16,
                 DataType::BFLOAT16, {}};
      if (ac) c.chain = {"bias", "gelu"};
      EXPECT_EQ(run_case(c, run_knobs(d, ac ? 2 : 1, false, 0, 0), rng), 0u) << tn << " wide, " << st << " stages";
    }
    EXPECT_EQ(run_case(sk, run_knobs(d, 1, false, 0, 1), rng), 0u) << tn << " wide, " << st << " stages, stream-K";
    EXPECT_EQ(run_case(big, run_knobs(d, 1, false, 1, 0), rng), 0u) << tn << " wide, " << st << " stages";
    gemm::GemmConfig pair = d;
    pair.cluster_m = 2;
    GemmCase odd_m{1, 128 * 3 + 8 * e8(rng), 8 * e8(rng) + 264, 8 * e8(rng) + 64, false, true, DataType::BFLOAT16,
                   DataType::BFLOAT16, {"bias", "gelu"}};
    EXPECT_EQ(run_case(odd_m, run_knobs(pair, 1, false, 0, 0), rng), 0u) << tn << " wide, " << st << " stages, pairs";
    EXPECT_EQ(run_case(big, run_knobs(pair, 1, false, 0, 0), rng), 0u) << tn << " wide, " << st << " stages, pairs";
  }
}

// 176-wide tiles (a K-major B): EPI_TMA with 4 stages (three 64-column boxes,
// the last overlapping the second by 16 columns: both stores carry the same
// values) and with 5 (a copy of two boxes: two passes, the second one box).
// A row- and column-major with tails in M, N and K, plain and bias + gelu,
// split K; fp16 in / fp32 out with a residual (staged), an odd N (the output
// map refused: staged), a stream-K tail, many units per CTA, a batch with a
// broadcast weight.
TEST_F(GemmGpu, V2Tile176KMajorBTailsSplitStreamKBatchBothEpilogues) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 needs sm_90";
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> e8(1, 40);
  for (int stages : {4, 5}) {
    gemm::GemmConfig t;
    t.version = 2;
    t.tile_n = 176;
    t.stages = stages;
    auto knobs = [&](int split, int raster, int stream_k) { return run_knobs(t, split, false, raster, stream_k); };
    for (bool ac : {false, true}) {
      GemmCase c{1, 8 * e8(rng) + 136, 8 * e8(rng) + 176, 8 * e8(rng) + 64, ac, true, DataType::BFLOAT16,
                 DataType::BFLOAT16, {}};
      if (ac) c.chain = {"bias", "gelu"};
      const int split = static_cast<int>(1 + rng() % 3);
      EXPECT_EQ(run_case(c, knobs(split, static_cast<int>(rng() % 2), 0), rng), 0u)
          << stages << " stages, split " << split;
    }
    GemmCase h{1, 8 * e8(rng) + 300, 8 * e8(rng) + 360, 8 * e8(rng), false, true, DataType::HALF, DataType::FLOAT,
               {"scale", "residual"}};
    EXPECT_EQ(run_case(h, knobs(1, 0, 0), rng), 0u) << stages << " stages, fp32 out";
    GemmCase odd{1, 300, 2 * e8(rng) + 353, 200, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
    EXPECT_EQ(run_case(odd, knobs(1, 1, 0), rng), 0u) << stages << " stages, odd N";
    // 9 x 15 = 135 tiles: 132 whole + 3 split.
    GemmCase sk{1, 1100, 2640, 520, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
    EXPECT_EQ(run_case(sk, knobs(1, 0, 1), rng), 0u) << stages << " stages, stream-K";
    GemmCase big{1, 2056, 2072, 1040, true, true, DataType::BFLOAT16, DataType::BFLOAT16, {}};
    EXPECT_EQ(run_case(big, knobs(1, 1, 0), rng), 0u) << stages << " stages, many units per CTA";
    GemmCase b{3, 264, 520, 72, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "relu"}, true};
    EXPECT_EQ(run_case(b, knobs(2, 0, 0), rng), 0u) << stages << " stages, batch";
  }
}

// 320-wide tiles (two wgmmas per K step, n256 + n64; a K-major B loads in two
// boxes of 160 rows): 3 stages, EPI_TMA's copy of three of the five boxes (two
// passes), and the staged epilogue (fp32 out, odd N). Both A and B layouts with
// tails in M, N and K, plain and bias + gelu, split K, a stream-K tail, many
// units per CTA, a batch with a broadcast weight.
TEST_F(GemmGpu, V2Tile320EveryLayoutTailsSplitStreamKBatchBothEpilogues) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 needs sm_90";
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> e8(1, 40);
  gemm::GemmConfig t;
  t.version = 2;
  t.tile_n = 320;
  t.stages = 3;
  auto knobs = [&](int split, int raster, int stream_k) { return run_knobs(t, split, false, raster, stream_k); };
  for (bool ac : {false, true})
    for (bool bc : {false, true}) {
      GemmCase c{1, 8 * e8(rng) + 136, 8 * e8(rng) + 320, 8 * e8(rng) + 64, ac, bc, DataType::BFLOAT16,
                 DataType::BFLOAT16, {}};
      if (ac == bc) c.chain = {"bias", "gelu"};
      const int split = static_cast<int>(1 + rng() % 3);
      EXPECT_EQ(run_case(c, knobs(split, static_cast<int>(rng() % 2), 0), rng), 0u) << "split " << split;
    }
  GemmCase h{1, 8 * e8(rng) + 300, 8 * e8(rng) + 360, 8 * e8(rng), false, true, DataType::HALF, DataType::FLOAT,
             {"scale", "residual"}};
  EXPECT_EQ(run_case(h, knobs(1, 0, 0), rng), 0u) << "fp32 out";
  GemmCase odd{1, 300, 2 * e8(rng) + 353, 200, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(odd, knobs(1, 1, 0), rng), 0u) << "odd N";
  // 9 x 15 = 135 tiles: 132 whole + 3 split.
  GemmCase sk{1, 1100, 4800, 520, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  EXPECT_EQ(run_case(sk, knobs(1, 0, 1), rng), 0u) << "stream-K";
  GemmCase big{1, 2056, 2072, 1040, true, false, DataType::BFLOAT16, DataType::BFLOAT16, {}};
  EXPECT_EQ(run_case(big, knobs(1, 1, 0), rng), 0u) << "many units per CTA";
  GemmCase b{3, 264, 680, 72, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "relu"}, true};
  EXPECT_EQ(run_case(b, knobs(2, 0, 0), rng), 0u) << "batch";
}
