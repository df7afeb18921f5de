// gemm_v2 (PIPELINE_ARCH=2, TMA + wgmma) without a GPU: which configs the
// knob domains accept, which problems v2 takes (facts only), the heuristic's
// picks on an sm_90 target (swap AB and split K for small M, wide tiles for
// large), the specialisation key (layout class, not shape; split is run-time),
// launch geometry and split-K scratch sizes.
#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "engines/gemm/gemm_declared.h"
#include "engines/gemm/gemm_engine.h"
#include "engines/gemm/gemm_tma.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using namespace opgraph::gemm;

namespace {

// A [1, m, k] @ B [1, k, n] (+ bias, gelu when `fused`), `out` (bf16) out.
OpGraph v2_graph(std::int64_t m, std::int64_t n, std::int64_t k, bool a_col = false, bool b_col = true,
                 std::int64_t align = 16, bool fused = true, DataType out = DataType::BFLOAT16) {
  OpGraph g;
  g.set_name("gemm_v2").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto a = g.tensor({1, m, k}, DataType::BFLOAT16, "A");
  if (a_col) a->set_stride({m * k, 1, m});
  auto b = g.tensor({1, k, n}, DataType::BFLOAT16, "B");
  if (b_col) b->set_stride({k * n, 1, k});
  a->set_alignment(align);
  b->set_alignment(align);
  auto c = g.matmul(a, b);
  auto y = fused ? g.gelu(g.bias(c, g.tensor({1, 1, n}, DataType::BFLOAT16, "bias"))) : c;
  y->set_output(true).set_name("Y").set_data_type(out);
  EXPECT_TRUE(g.validate().is_good()) << g.validate().message();
  return g;
}

GemmConfig v2(int tn, int stages, int split = 1, bool swap = false) {
  GemmConfig c;
  c.version = 2;
  c.tile_n = tn;
  c.stages = stages;
  c.split_k = split;
  c.swap_ab = swap;
  return c;
}

// The value of `r`'s prelude define `name` ("" when absent).
std::string define_of(const runtime::KernelRequest& r, const std::string& name) {
  for (const auto& d : r.defines)
    if (d.name == name) return d.value;
  return {};
}

// `t` is a valid config, and a ping-pong, clustered, 256-row, `stages`-deep
// or v1 copy of it (the rules of the wide cooperative-only tiles) is not.
void expect_only_cooperative_single(const GemmConfig& t, int stages) {
  ASSERT_TRUE(config_from_knobs(knobs_of(t)).is_good()) << config_from_knobs(knobs_of(t)).status().message();
  for (int which = 0; which < 5; ++which) {
    GemmConfig x = t;
    if (which == 0) x.pingpong = 1;
    if (which == 1) x.cluster_m = 2;
    if (which == 2) x.tile_m = 256;
    if (which == 3) x.stages = stages;
    if (which == 4) x.version = 1, x.stages = 3;
    EXPECT_TRUE(config_from_knobs(knobs_of(x)).is_bad()) << "edit " << which;
  }
}
}  // namespace

TEST(GemmV2Knobs, DomainsAcceptV2AndRejectImpossibleCombinations) {
  EXPECT_TRUE(config_from_knobs(knobs_of(v2(256, 4))).is_good());
  EXPECT_TRUE(config_from_knobs(knobs_of(v2(16, 8, 8, true))).is_good());
  // 256-wide with 6 stages needs 6 * 48 KiB of shared memory: over 227 KiB.
  auto big = config_from_knobs(knobs_of(v2(256, 6)));
  ASSERT_TRUE(big.is_bad());
  EXPECT_NE(big.status().message().find("227 KiB"), std::string::npos) << big.status().message();
  GemmConfig bad = v2(128, 4);
  bad.tile_m = 64;
  EXPECT_TRUE(config_from_knobs(knobs_of(bad)).is_bad());
  GemmConfig v1;
  v1.split_k = 2;
  EXPECT_TRUE(config_from_knobs(knobs_of(v1)).is_bad());
  v1.split_k = 1;
  v1.tile_n = 256;
  EXPECT_TRUE(config_from_knobs(knobs_of(v1)).is_bad());
  // Round trip of every proposable config (v1 and v2), and the labels say the version.
  for (const auto& c : proposable_configs()) {
    auto back = config_from_knobs(knobs_of(c));
    ASSERT_TRUE(back.is_good()) << back.status().message();
    EXPECT_EQ(*back, c);
  }
  auto e = make_gemm_engine(EngineIdentity{20100, "gemm"});
  EXPECT_EQ(e->label(PlanConfig{20100, knobs_of(v2(16, 8, 4, true)), {}, -1}), "gemm_v2_128x16s8_swap_k4");
}

TEST(GemmV2Support, TakesTheSixteenByteClassOnly) {
  auto p = analyze_gemm(v2_graph(200, 136, 72));
  ASSERT_TRUE(p.is_good());
  EXPECT_TRUE(config_takes(*p, v2(128, 6)));
  EXPECT_TRUE(config_takes(*p, v2(16, 8)));  // B K-major: any TILE_N
  // 8-byte alignment: the element-wise class; v1 only.
  auto q = analyze_gemm(v2_graph(200, 136, 72, false, true, 8));
  ASSERT_TRUE(q.is_good());
  EXPECT_EQ(q->vec, 1);
  EXPECT_FALSE(config_takes(*q, v2(128, 6)));
  EXPECT_TRUE(config_takes(*q, GemmConfig{}));
  // An N-major B (row-major) needs TILE_N >= 64; so does a swapped M-major A.
  auto r = analyze_gemm(v2_graph(200, 136, 72, true, false));
  ASSERT_TRUE(r.is_good());
  EXPECT_FALSE(config_takes(*r, v2(32, 8)));
  EXPECT_TRUE(config_takes(*r, v2(64, 8)));
  EXPECT_FALSE(config_takes(*r, v2(16, 8, 1, true)));
  // K not a multiple of 8 with K-major A: no TMA (strides must be 16-byte multiples).
  auto s = analyze_gemm(v2_graph(64, 64, 36));
  ASSERT_TRUE(s.is_good());
  EXPECT_FALSE(config_takes(*s, v2(64, 8)));
}

TEST(GemmV2Heuristics, HopperPicksFromFacts) {
  // Large: v2, 256-wide tiles, no split, 4 stages (EPI_TMA: the plain 16-bit
  // output through TMA stores, a copy of two boxes); 128-wide when the chain
  // loads a tensor (bias).
  auto big = analyze_gemm(v2_graph(4096, 4096, 4096, false, true, 16, false));
  ASSERT_TRUE(big.is_good());
  GemmConfig c = pick_config(*big, 132, false, true);
  EXPECT_EQ(c.version, 2);
  EXPECT_EQ(c.tile_n, 256);
  EXPECT_EQ(c.stages, 4);
  EXPECT_TRUE(v2_epi_tma(*big, c));
  EXPECT_EQ(c.split_k, 1);
  EXPECT_FALSE(c.swap_ab);
  auto fused = analyze_gemm(v2_graph(4096, 4096, 4096));
  ASSERT_TRUE(fused.is_good());
  EXPECT_EQ(pick_config(*fused, 132, false, true).tile_n, 256);  // bias (broadcast) + gelu: EPI_TMA
  // 1024 x 14336: 448 tiles of 128x256 fill 85% of the last wave, 896 of
  // 128x128 97%, 656 of 128x176 99% (a K-major B: 176; an N-major one: 128).
  auto wide = analyze_gemm(v2_graph(1024, 14336, 4096, false, true, 16, false));
  ASSERT_TRUE(wide.is_good());
  EXPECT_EQ(pick_config(*wide, 132, false, true).tile_n, 176);
  auto wide_n = analyze_gemm(v2_graph(1024, 14336, 4096, false, false, 16, false));
  ASSERT_TRUE(wide_n.is_good());
  EXPECT_EQ(pick_config(*wide_n, 132, false, true).tile_n, 128);
  // Decode-sized M: swap AB, a 16-wide tile over the graph's M, split K to fill 132 SMs.
  auto dec = analyze_gemm(v2_graph(16, 4096, 4096));
  ASSERT_TRUE(dec.is_good());
  c = pick_config(*dec, 132, false, true);
  EXPECT_EQ(c.version, 2);
  EXPECT_TRUE(c.swap_ab);
  EXPECT_EQ(c.tile_n, 16);
  EXPECT_GT(c.split_k, 1);
  const GemmProblem k = kernel_view(*dec, c);
  const std::int64_t units = (k.m + 127) / 128 * ((k.n + c.tile_n - 1) / c.tile_n) * c.split_k;
  EXPECT_GE(units, 100) << "split " << c.split_k;
  EXPECT_LE(units, 132);
  // M = 128: no swap, 128-wide tiles, split.
  auto m128 = analyze_gemm(v2_graph(128, 4096, 4096));
  ASSERT_TRUE(m128.is_good());
  c = pick_config(*m128, 132, false, true);
  EXPECT_FALSE(c.swap_ab);
  EXPECT_EQ(c.tile_n, 128);
  EXPECT_GT(c.split_k, 1);
  // Not Hopper, or the element-wise class: v1. FALLBACK: v1's portable tile.
  EXPECT_EQ(pick_config(*big, 132, false, false).version, 1);
  auto q = analyze_gemm(v2_graph(200, 136, 72, false, true, 8));
  EXPECT_EQ(pick_config(*q, 132, false, true).version, 1);
  EXPECT_EQ(pick_config(*big, 132, true, true).version, 1);
  // Every pick is accepted by its own domain and takes its problem.
  for (auto [m, n, kk] : {std::tuple{16, 14336, 4096}, {1024, 28672, 8192}, {1, 4096, 4096}, {300, 4104, 8}}) {
    auto p = analyze_gemm(v2_graph(m, n, kk));
    ASSERT_TRUE(p.is_good());
    const GemmConfig pc = pick_config(*p, 132, false, true);
    EXPECT_TRUE(config_from_knobs(knobs_of(pc)).is_good());
    EXPECT_TRUE(config_takes(*p, pc));
  }
}

TEST(GemmV2Codegen, OneKernelPerLayoutClassSplitIsRunTime) {
  auto p1 = analyze_gemm(v2_graph(200, 136, 72));
  auto p2 = analyze_gemm(v2_graph(4096, 1024, 8192));
  auto p3 = analyze_gemm(v2_graph(200, 136, 72, true, false));
  ASSERT_TRUE(p1.is_good() && p2.is_good() && p3.is_good());
  EXPECT_EQ(kernel_request(*p1, v2(128, 6)).key("sm_90a"), kernel_request(*p2, v2(128, 6, 4)).key("sm_90a"));
  EXPECT_NE(kernel_request(*p1, v2(128, 6)).key("sm_90a"), kernel_request(*p3, v2(128, 6)).key("sm_90a"));
  EXPECT_EQ(kernel_request(*p1, v2(128, 6)).entry, "gemm_v2");
  // Launch: persistent grid of min(units, SMs) CTAs of 384 threads.
  unsigned grid[3], block[3];
  grid_of(*p2, v2(128, 6), grid, block, 132);
  EXPECT_EQ(grid[0], 132u);
  EXPECT_EQ(block[0], 384u);
  grid_of(*p1, v2(128, 6), grid, block, 132);
  EXPECT_EQ(grid[0], 4u);  // 2 x 2 tiles
  // Split scratch: partials per (tile, split) of 128 x TILE_N fp32; counters per (tile, consumer).
  EXPECT_EQ(v2_partial_bytes(v2(128, 6), v2_schedule(*p1, v2(128, 6))), 0);
  EXPECT_EQ(v2_partial_bytes(v2(128, 6, 2), v2_schedule(*p1, v2(128, 6, 2))), 4 * 2 * 128 * 128 * 4);
  EXPECT_EQ(v2_counter_bytes(v2(128, 6, 2), v2_schedule(*p1, v2(128, 6, 2))), 4 * 2 * 4);
  // The split never exceeds the K blocks (72 -> 2 blocks of 64).
  EXPECT_EQ(v2_splits(*p1, v2(128, 6, 8)), 2);
  EXPECT_LE(smem_bytes(*p1, v2(256, 4)), 232448u);
}

TEST(GemmV2Heuristics, BackendMarkerPerMeasuredShapeClass) {
  auto cls = [](std::int64_t m, std::int64_t k) {
    auto p = analyze_gemm(v2_graph(m, 4096, k));
    EXPECT_TRUE(p.is_good());
    return shape_class(*p);
  };
  EXPECT_EQ(cls(16, 4096), ShapeClass::DECODE);
  EXPECT_EQ(cls(128, 4096), ShapeClass::SMALL);
  EXPECT_EQ(cls(4096, 4096), ShapeClass::LARGE_SHORT_K);
  EXPECT_EQ(cls(1024, 14336), ShapeClass::LARGE_LONG_K);
  // Measured on the H200: cuDNN's best plan leads (or ties within the spread)
  // in every class, so the marker stays first in all of them.
  for (ShapeClass c : {ShapeClass::DECODE, ShapeClass::SMALL, ShapeClass::LARGE_SHORT_K, ShapeClass::LARGE_LONG_K})
    EXPECT_FALSE(ours_first(c)) << to_string(c);
}

// CLUSTER_M = 2: CTA pairs along M sharing B (v2 only): what the domains take,
// which problems (an N-major B needs whole 64-wide boxes per CTA: TILE_N >=
// 128), its own specialisation, an even persistent grid within the resident
// clusters, and scratch slots for the phantom tile past M.
TEST(GemmV2Cluster, DomainsKeySpecialisationGridAndScratch) {
  GemmConfig c2 = v2(128, 6);
  c2.cluster_m = 2;
  EXPECT_TRUE(config_from_knobs(knobs_of(c2)).is_good());
  GemmConfig v1;
  v1.cluster_m = 2;
  auto bad = config_from_knobs(knobs_of(v1));
  ASSERT_TRUE(bad.is_bad());
  EXPECT_NE(bad.status().message().find("clusters"), std::string::npos) << bad.status().message();
  auto e = make_gemm_engine(EngineIdentity{20100, "gemm"});
  EXPECT_EQ(e->label(PlanConfig{20100, knobs_of(c2), {}, -1}), "gemm_v2_128x128s6_c2");

  auto r = analyze_gemm(v2_graph(200, 136, 72, false, false));  // N-major B
  ASSERT_TRUE(r.is_good());
  EXPECT_TRUE(config_takes(*r, c2));
  GemmConfig narrow = v2(64, 8);
  narrow.cluster_m = 2;
  EXPECT_FALSE(config_takes(*r, narrow));
  auto p = analyze_gemm(v2_graph(300, 136, 72));  // K-major B: 3 row tiles, 2 column tiles
  ASSERT_TRUE(p.is_good());
  EXPECT_TRUE(config_takes(*p, narrow));

  const auto req1 = kernel_request(*p, v2(128, 6)), req2 = kernel_request(*p, c2);
  EXPECT_NE(req1.key("sm_90a"), req2.key("sm_90a"));
  EXPECT_EQ(define_of(req2, "OPGRAPH_GEMM_CLUSTER_M"), "2");

  unsigned grid[3], block[3];
  grid_of(*p, c2, grid, block, 132);
  EXPECT_EQ(grid[0], 8u);  // 2 row-tile pairs x 2 column tiles = 4 units, a CTA pair each
  auto big = analyze_gemm(v2_graph(4096, 4096, 4096, false, true, 16, false));
  ASSERT_TRUE(big.is_good());
  grid_of(*big, c2, grid, block, 132);
  EXPECT_EQ(grid[0], 132u);  // 66 resident pairs by default
  grid_of(*big, c2, grid, block, 132, 60);
  EXPECT_EQ(grid[0], 120u);  // the device answered 60 resident clusters
  // Split scratch: 2 row-tile pairs (one half past M) x 2 column tiles = 8 CTA tile slots.
  c2.split_k = 2;
  EXPECT_EQ(v2_counter_bytes(c2, v2_schedule(*p, c2)), 4 * 2 * 2 * 4);
  EXPECT_EQ(v2_partial_bytes(c2, v2_schedule(*p, c2)), 4 * 2 * 2 * 128 * 128 * 4);
}

// Walks every cluster's list of schedule `s` the way gemm_v2 does
// (gemm_sched.cuh) and checks what the kernel relies on: every K block of
// every tile is run exactly once; whole tiles come first; a tile's pieces are
// its splits 0..nsplit-1 in K order, all with the same nsplit; every split
// piece has its own workspace slot inside the scratch and its tile's counter;
// units and splits are what the schedule says. Returns each cluster's K blocks.
static std::vector<std::int64_t> walk_schedule(const GemmConfig& c, const V2Schedule& s, std::int64_t kblocks) {
  const opgraph_gemm_sched::Sched a = v2_sched_args(s, kblocks);
  std::vector<std::int64_t> done(static_cast<std::size_t>(s.tiles * kblocks), 0), per(s.resident, 0);
  std::vector<std::vector<opgraph_gemm_sched::Piece>> of(static_cast<std::size_t>(s.tiles));
  std::set<std::int64_t> slots;
  const std::int64_t slot_count = s.splits > 1 ? v2_partial_bytes(c, s) / (std::int64_t{128} * c.tile_n * 4) : 0;
  std::int64_t units = 0, most = 1;
  for (std::int64_t cl = 0; cl < s.resident; ++cl) {
    bool split_seen = false;
    opgraph_gemm_sched::Piece w;
    for (std::int64_t it = 0; opgraph_gemm_sched::piece_at(a, cl, it, w); ++it, ++units) {
      EXPECT_LT(w.tile, s.tiles);
      EXPECT_LT(w.kb0, w.kb1);
      EXPECT_LE(w.kb1, kblocks);
      if (w.tile < s.split_from) {
        EXPECT_TRUE(w.nsplit == 1 && w.kb0 == 0 && w.kb1 == kblocks) << "tile " << w.tile;
      }
      EXPECT_FALSE(split_seen && w.tile < s.split_from) << "whole tiles first";
      split_seen = split_seen || w.tile >= s.split_from;
      for (std::int64_t k = w.kb0; k < w.kb1; ++k) ++done[static_cast<std::size_t>(w.tile * kblocks + k)];
      per[cl] += w.kb1 - w.kb0;
      most = std::max<std::int64_t>(most, w.nsplit);
      of[static_cast<std::size_t>(w.tile)].push_back(w);
      if (w.nsplit > 1) {
        EXPECT_EQ(w.counter, w.tile - s.split_from);
        const std::int64_t slot = w.ws0 + w.split * w.wstep;
        EXPECT_TRUE(slots.insert(slot).second) << "slot " << slot << " twice";
        EXPECT_LT(slot, slot_count);
        // Every split of the tile reads the same slots.
        EXPECT_EQ(w.ws0, of[static_cast<std::size_t>(w.tile)].front().ws0);
      }
    }
  }
  for (std::size_t i = 0; i < done.size(); ++i)
    EXPECT_EQ(done[i], 1) << "tile " << i / kblocks << " block " << i % kblocks;
  for (auto& pieces : of) {
    std::sort(pieces.begin(), pieces.end(), [](auto& x, auto& y) { return x.kb0 < y.kb0; });
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      EXPECT_EQ(pieces[i].split, static_cast<std::int64_t>(i));
      EXPECT_EQ(pieces[i].nsplit, static_cast<std::int64_t>(pieces.size()));
    }
  }
  EXPECT_EQ(units, s.units);
  EXPECT_EQ(most, s.splits);
  return per;
}

// STREAM_K = 1: the tiles past the last whole wave share their K blocks out
// evenly, one contiguous range per resident CTA; the knobs, the label, the
// schedule's figures and scratch; the pick leaves it off.
TEST(GemmV2StreamK, ScheduleKnobsAndPick) {
  GemmConfig sk = v2(256, 4);
  sk.stream_k = 1;
  EXPECT_TRUE(config_from_knobs(knobs_of(sk)).is_good());
  GemmConfig both = sk;
  both.split_k = 2;
  auto bad = config_from_knobs(knobs_of(both));
  ASSERT_TRUE(bad.is_bad());
  EXPECT_NE(bad.status().message().find("SPLIT_K_SLC=1"), std::string::npos) << bad.status().message();
  GemmConfig v1;
  v1.stream_k = 1;
  EXPECT_TRUE(config_from_knobs(knobs_of(v1)).is_bad());
  auto e = make_gemm_engine(EngineIdentity{20100, "gemm"});
  EXPECT_EQ(e->label(PlanConfig{20100, knobs_of(sk), {}, -1}), "gemm_v2_128x256s4_sk");

  // 1024 x 14336 x 4096 at 128x256: 448 tiles = 3 waves of 132 + 52; the 52
  // tiles' 52 x 64 K blocks go 25 or 26 to each of the 132 CTAs.
  auto wide = analyze_gemm(v2_graph(1024, 14336, 4096, false, true, 16, false));
  ASSERT_TRUE(wide.is_good());
  V2Schedule s = v2_schedule(*wide, sk, 132);
  EXPECT_TRUE(s.stream);
  EXPECT_EQ(s.tiles, 448);
  EXPECT_EQ(s.split_from, 396);
  EXPECT_EQ(s.splits, 4);  // 64 blocks over ranges of 25-26: at most 4 pieces
  const auto per = walk_schedule(sk, s, 64);
  for (const std::int64_t b : per) EXPECT_TRUE(b == 3 * 64 + 25 || b == 3 * 64 + 26) << b;
  unsigned grid[3], block[3];
  grid_of(*wide, sk, grid, block, 132);
  EXPECT_EQ(grid[0], 132u);
  // Scratch: a slot per (tile, CTA) piece, at most 52 + 132; a counter per split tile.
  EXPECT_EQ(v2_partial_bytes(sk, s), (52 + 132) * 128 * 256 * 4);
  EXPECT_EQ(v2_counter_bytes(sk, s), 52 * 2 * 4);
  auto sched = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    auto p = analyze_gemm(v2_graph(m, n, k, false, true, 16, false));
    EXPECT_TRUE(p.is_good());
    return v2_schedule(*p, sk, 132);
  };
  // Whole waves (4096 x 8448 at 128x256: 32 x 33 = 1056 = 8 x 132): nothing to split.
  s = sched(4096, 8448, 4096);
  EXPECT_FALSE(s.stream);
  EXPECT_EQ(s.splits, 1);
  EXPECT_EQ(s.units, s.tiles);
  // A 4-tile tail with 8 K blocks: 32 blocks < 8 per CTA, so one wave more
  // shares in (136 tiles' 1088 blocks); with 2 K blocks even that is < 4 per CTA.
  s = sched(128 * 17, 256 * 8, 512);
  EXPECT_TRUE(s.stream);
  EXPECT_EQ(s.split_from, 0);
  walk_schedule(sk, s, 8);
  EXPECT_FALSE(sched(128 * 17, 256 * 8, 128).stream);
  // Fewer tiles than CTAs: no wave to finish (SPLIT_K_SLC's case).
  EXPECT_FALSE(sched(1024, 4096, 4096).stream);
  // Without STREAM_K the same problem is not split.
  EXPECT_EQ(v2_schedule(*wide, v2(256, 4), 132).splits, 1);

  // The pick takes it from 10 waves on, without a chain (S10-1): 1024 x 14336
  // (3.4 waves) and 8192 x 4096 x 4096 (7.8) stay off; 16384 x 4096 (15.5
  // waves) and 4096 x 28672 (27.2) take it, not with bias + gelu.
  EXPECT_EQ(pick_config(*wide, 132, false, true).stream_k, 0);
  auto pick = [&](std::int64_t m, std::int64_t n, std::int64_t k, bool chain) {
    auto p = analyze_gemm(v2_graph(m, n, k, false, true, 16, chain));
    EXPECT_TRUE(p.is_good());
    return pick_config(*p, 132, false, true);
  };
  EXPECT_EQ(pick(8192, 4096, 4096, false).stream_k, 0);
  auto tall_p = analyze_gemm(v2_graph(16384, 4096, 4096, false, true, 16, false));
  ASSERT_TRUE(tall_p.is_good());
  const GemmConfig tall = pick_config(*tall_p, 132, false, true);
  EXPECT_EQ(tall.stream_k, 1);
  EXPECT_EQ(tall.tile_n, 256);
  EXPECT_EQ(tall.split_k, 1);
  EXPECT_TRUE(v2_schedule(*tall_p, tall, 132).stream);
  EXPECT_EQ(pick(4096, 28672, 8192, false).stream_k, 1);
  EXPECT_EQ(pick(16384, 4096, 4096, true).stream_k, 0);
  auto all = proposable_configs();
  EXPECT_NE(std::find(all.begin(), all.end(), tall), all.end()) << "the stream-K pick is in the autotuner's domain";
  // A 32-bit output (no EPI_TMA): unmeasured, off.
  auto f32 = analyze_gemm(v2_graph(16384, 4096, 4096, false, true, 16, false, DataType::FLOAT));
  ASSERT_TRUE(f32.is_good());
  EXPECT_EQ(pick_config(*f32, 132, false, true).stream_k, 0);
  // Fewer CTAs (a smaller part): the same shape has more waves.
  auto few = analyze_gemm(v2_graph(4096, 8192, 4096, false, true, 16, false));
  EXPECT_EQ(pick_config(*few, 132, false, true).stream_k, 0);  // 7.8 waves of 132
  EXPECT_EQ(pick_config(*few, 60, false, true).stream_k, 1);   // 17 of 60
}

// Random problems, tiles, CTA pairs, resident counts and split kinds: the
// walk covers every K block once, and stream-K's CTAs run within one K block
// of each other.
TEST(GemmV2StreamK, EveryScheduleCoversEachBlockOnce) {
  std::mt19937 rng(20261201);
  int streamed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t m = 1 + rng() % 3000, n = 16 + rng() % 5000, k = 1 + rng() % 3000;
    auto p = analyze_gemm(v2_graph(m, n, k, false, true, 16, false));
    ASSERT_TRUE(p.is_good());
    GemmConfig c = v2(rng() % 2 ? 256 : 128, 4);
    c.cluster_m = rng() % 4 == 0 ? 2 : 1;
    if (rng() % 2) c.stream_k = 1;
    else c.split_k = 1 + static_cast<int>(rng() % 4);
    const int sms = 8 + static_cast<int>(rng() % 132);
    const V2Schedule s = v2_schedule(*p, c, sms);
    SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << " tile " << c.tile_n << " cluster "
                                      << c.cluster_m << " sk " << c.stream_k << " split " << c.split_k << " sms "
                                      << sms);
    const std::int64_t kblocks = (k + 63) / 64;
    const auto per = walk_schedule(c, s, kblocks);
    if (s.stream) {
      ++streamed;
      EXPECT_EQ(s.split_from % s.resident, 0);
      const auto [lo, hi] = std::minmax_element(per.begin(), per.end());
      EXPECT_LE(*hi - *lo, 1);
      EXPECT_GE(*lo, s.split_from / s.resident * kblocks + 4);
    }
  }
  EXPECT_GT(streamed, 50);
}

// WARP_SPEC_CFG = 1 (ping-pong): v2 only, TILE_N <= 128 (a warpgroup holds a
// whole tile), its own specialisation and label; the grid and scratch are the
// cooperative kernel's (same units, same 128-row tiles).
TEST(GemmV2PingPong, DomainsKeyLabelAndSchedule) {
  GemmConfig pp = v2(128, 6);
  pp.pingpong = 1;
  EXPECT_TRUE(config_from_knobs(knobs_of(pp)).is_good());
  EXPECT_EQ(config_from_knobs(knobs_of(pp))->pingpong, 1);
  GemmConfig wide = v2(256, 4);
  wide.pingpong = 1;
  auto bad = config_from_knobs(knobs_of(wide));
  ASSERT_TRUE(bad.is_bad());
  EXPECT_NE(bad.status().message().find("TILE_M x TILE_N <= 128 x 128"), std::string::npos) << bad.status().message();
  GemmConfig v1;
  v1.pingpong = 1;
  auto bad1 = config_from_knobs(knobs_of(v1));
  ASSERT_TRUE(bad1.is_bad());
  EXPECT_NE(bad1.status().message().find("WARP_SPEC_CFG=0"), std::string::npos) << bad1.status().message();
  auto e = make_gemm_engine(EngineIdentity{20100, "gemm"});
  EXPECT_EQ(e->label(PlanConfig{20100, knobs_of(pp), {}, -1}), "gemm_v2_128x128s6_pp");

  auto p = analyze_gemm(v2_graph(300, 136, 72));
  ASSERT_TRUE(p.is_good());
  const auto coop = kernel_request(*p, v2(128, 6)), ping = kernel_request(*p, pp);
  EXPECT_NE(coop.key("sm_90a"), ping.key("sm_90a"));
  EXPECT_EQ(define_of(ping, "OPGRAPH_GEMM_PINGPONG"), "1");
  unsigned g1[3], b1[3], g2[3], b2[3];
  grid_of(*p, v2(128, 6), g1, b1, 132);
  grid_of(*p, pp, g2, b2, 132);
  EXPECT_EQ(g1[0], g2[0]);
  EXPECT_EQ(b2[0], 384u);
  pp.split_k = 2;
  GemmConfig coop2 = v2(128, 6, 2);
  EXPECT_EQ(v2_partial_bytes(pp, v2_schedule(*p, pp)), v2_partial_bytes(coop2, v2_schedule(*p, coop2)));
  // Ping-pong over 64 x 256 tiles: a valid config with its own kernel (TILE_M
  // = 64 in the key and the defines), A's box of 64 rows, twice the row tiles
  // of 128 x 256, shared memory within 227 KiB; TILE_M = 64 needs ping-pong
  // and no CTA pairs.
  GemmConfig p64 = v2(256, 5);
  p64.tile_m = 64;
  p64.pingpong = 1;
  ASSERT_TRUE(config_from_knobs(knobs_of(p64)).is_good()) << config_from_knobs(knobs_of(p64)).status().message();
  EXPECT_EQ(e->label(PlanConfig{20100, knobs_of(p64), {}, -1}), "gemm_v2_64x256s5_pp");
  EXPECT_TRUE(config_takes(*p, p64));
  const auto k64 = kernel_request(*p, p64);
  EXPECT_NE(k64.key("sm_90a"), kernel_request(*p, v2(256, 4)).key("sm_90a"));
  EXPECT_EQ(define_of(k64, "OPGRAPH_GEMM_TILE_M"), "64");
  EXPECT_LE(smem_bytes(*p, p64), 232448u);
  auto big = analyze_gemm(v2_graph(4096, 4096, 4096));
  ASSERT_TRUE(big.is_good());
  EXPECT_EQ(v2_schedule(*big, p64).tiles, 2 * v2_schedule(*big, v2(256, 4)).tiles);
  GemmConfig c64 = p64;
  c64.pingpong = 0;
  auto bad64 = config_from_knobs(knobs_of(c64));
  ASSERT_TRUE(bad64.is_bad());
  EXPECT_NE(bad64.status().message().find("64 with WARP_SPEC_CFG=1"), std::string::npos) << bad64.status().message();
  c64 = p64;
  c64.cluster_m = 2;
  ASSERT_TRUE(config_from_knobs(knobs_of(c64)).is_bad());
  bool proposed = false;
  for (const GemmConfig& c : proposable_configs()) proposed = proposed || (c == p64);
  EXPECT_TRUE(proposed) << "the CI compile set has the 64 x 256 ping-pong kernel";
  // Cooperative 256 x 128 (two warpgroups of 128 rows): valid, its own kernel
  // (TILE_M = 256), half the row tiles of 128 x 128, split-K scratch for 256
  // rows per split tile; not with ping-pong, a 256-wide tile or CTA pairs.
  GemmConfig t256 = v2(128, 4);
  t256.tile_m = 256;
  ASSERT_TRUE(config_from_knobs(knobs_of(t256)).is_good()) << config_from_knobs(knobs_of(t256)).status().message();
  EXPECT_EQ(e->label(PlanConfig{20100, knobs_of(t256), {}, -1}), "gemm_v2_256x128s4");
  EXPECT_TRUE(config_takes(*p, t256));
  EXPECT_LE(smem_bytes(*p, t256), 232448u);
  EXPECT_EQ(2 * v2_schedule(*big, t256).tiles, v2_schedule(*big, v2(128, 6)).tiles);
  GemmConfig t256s = t256;
  t256s.split_k = 2;
  GemmConfig c128s = v2(128, 6, 2);
  EXPECT_EQ(v2_partial_bytes(t256s, v2_schedule(*big, t256s)), v2_partial_bytes(c128s, v2_schedule(*big, c128s)));
  for (auto edit : {+[](GemmConfig& c) { c.pingpong = 1; }, +[](GemmConfig& c) { c.tile_n = 256; },
                    +[](GemmConfig& c) { c.cluster_m = 2; }}) {
    GemmConfig x = t256;
    edit(x);
    EXPECT_TRUE(config_from_knobs(knobs_of(x)).is_bad());
  }
  proposed = false;
  for (const GemmConfig& c : proposable_configs()) proposed = proposed || (c == t256);
  EXPECT_TRUE(proposed) << "the CI compile set has the 256 x 128 cooperative kernel";
  // EPI_TMA: a 16-bit output (its chain applied in registers) through TMA
  // stores where a 16-bit copy of at least one 64-column box fits beside the
  // ring: the whole tile's four boxes at 128 x 256 with 3 stages, two (stored
  // in two passes) with 4; not with a 32-bit output or ping-pong.
  auto plain = analyze_gemm(v2_graph(4096, 4096, 4096, false, true, 16, false));
  ASSERT_TRUE(plain.is_good());
  EXPECT_EQ(v2_epi_boxes(*plain, v2(256, 3)), 4);
  EXPECT_EQ(v2_epi_boxes(*plain, v2(256, 4)), 2);
  EXPECT_EQ(v2_epi_boxes(*plain, v2(128, 5)), 2);
  EXPECT_EQ(v2_epi_boxes(*plain, v2(128, 6)), 2);  // the copy shares the staged epilogue's region
  EXPECT_TRUE(v2_epi_tma(*big, v2(256, 4)));      // bias + gelu
  GemmConfig pair = v2(256, 4);
  pair.cluster_m = 2;
  EXPECT_EQ(v2_epi_boxes(*plain, pair), 2);  // CTA pairs too
  GemmConfig pp3 = v2(128, 5);
  pp3.pingpong = 1;
  EXPECT_FALSE(v2_epi_tma(*plain, pp3));
  auto f32 = analyze_gemm(v2_graph(4096, 4096, 4096, false, true, 16, false, DataType::FLOAT));
  ASSERT_TRUE(f32.is_good());
  EXPECT_FALSE(v2_epi_tma(*f32, v2(256, 3)));
  auto et_of = [](const runtime::KernelRequest& r) { return define_of(r, "OPGRAPH_GEMM_EPI_TMA"); };
  const auto ket = kernel_request(*plain, v2(256, 4));
  EXPECT_EQ(et_of(ket), "2");
  EXPECT_EQ(ket.kernel.substr(ket.kernel.size() - 4), "_et2");
  EXPECT_EQ(et_of(kernel_request(*plain, v2(256, 3))), "4");
  EXPECT_EQ(et_of(kernel_request(*f32, v2(256, 3))), "0");
  EXPECT_NE(ket.key("sm_90a"), kernel_request(*big, v2(256, 4)).key("sm_90a"));
  EXPECT_NE(ket.key("sm_90a"), kernel_request(*plain, v2(256, 3)).key("sm_90a"));
  // The ring (48 KiB a stage: 16 of A, 32 of B), 1280 bytes of alignment and
  // barriers, and the copy: 128 rows x 128 B a box.
  EXPECT_EQ(smem_bytes(*big, v2(256, 3)), 3u * 49152u + 1280u + 4u * 16384u);
  EXPECT_EQ(smem_bytes(*big, v2(256, 4)), 4u * 49152u + 1280u + 2u * 16384u);
  EXPECT_EQ(smem_bytes(*f32, v2(256, 4)), 4u * 49152u + 1280u + 8u * 16u * 24u * 4u);  // the staging rows
  EXPECT_LE(smem_bytes(*plain, v2(256, 4)), 232448u - 64u);
  proposed = false;
  for (const GemmConfig& c : proposable_configs()) proposed = proposed || (c == v2(256, 4));
  EXPECT_TRUE(proposed) << "the CI compile set has the 4-stage 256-wide kernel (EPI_TMA with a 16-bit output)";
  // The pick: a chain 128 wide with at least two tiles per SM runs
  // ping-pong; a plain 16-bit output runs cooperative with EPI_TMA (128 wide:
  // one stage less); 256 wide and split-K picks stay cooperative.
  auto pick = [](std::int64_t m, std::int64_t n, std::int64_t k, bool fused) {
    auto q = analyze_gemm(v2_graph(m, n, k, false, true, 16, fused));
    EXPECT_TRUE(q.is_good());
    return pick_config(*q, 132, false, true);
  };
  // 1024x14336x4096: 176-wide tiles fill the waves (656 tiles, 0.99 of 5
  // waves; 128 wide: 0.97 of 7, 256 wide: 0.85 of 4): 128 x 176 with EPI_TMA.
  GemmConfig c = pick(1024, 14336, 4096, false);
  EXPECT_EQ(c.tile_n, 176);
  EXPECT_EQ(c.pingpong, 0);
  EXPECT_EQ(c.stages, 4);
  // Where 176's waves are not clearly better, the established width stays.
  c = pick(4096, 14336, 4096, false);  // 0.994 x 0.975 against 0.970 for 256
  EXPECT_EQ(c.tile_n, 256);
  c = pick(1024, 4096, 14336, false);  // 192 tiles of 176: 0.73 of 2 waves
  EXPECT_EQ(c.tile_n, 256);
  // 896 tiles of 128 x 128 (an N-major B cannot take 176): 5 stages, EPI_TMA.
  {
    auto q = analyze_gemm(v2_graph(1024, 14336, 4096, false, false, 16, false));
    ASSERT_TRUE(q.is_good());
    c = pick_config(*q, 132, false, true);
    EXPECT_EQ(c.tile_n, 128);
    EXPECT_EQ(c.pingpong, 0);
    EXPECT_EQ(c.stages, 5);
  }
  // A [1, m, 4096] @ B [1, 4096, n] (column-major), `tail` applied to the
  // product, output Y of `out`: the pick on 132 SMs, and whether it stores
  // through TMA.
  auto pick_tail = [](std::int64_t m, std::int64_t n, DataType out, auto tail, bool* tma) {
    OpGraph g;
    g.set_name("tail").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto a = g.tensor({1, m, 4096}, DataType::BFLOAT16, "A");
    auto b = g.tensor({1, 4096, n}, DataType::BFLOAT16, "B");
    b->set_stride({4096 * n, 1, 4096});
    tail(g, g.matmul(a, b))->set_output(true).set_name("Y").set_data_type(out);
    EXPECT_TRUE(g.validate().is_good());
    auto q = analyze_gemm(g);
    EXPECT_TRUE(q.is_good());
    const GemmConfig f = pick_config(*q, 132, false, true);
    *tma = v2_epi_tma(*q, f);
    return f;
  };
  bool tma = true;
  // The same through a 32-bit output (no EPI_TMA): ping-pong, 6 stages.
  c = pick_tail(1024, 14336, DataType::FLOAT, [](OpGraph&, auto x) { return x; }, &tma);
  EXPECT_EQ(c.tile_n, 128);
  EXPECT_EQ(c.pingpong, 1);
  EXPECT_EQ(c.stages, 6);
  EXPECT_FALSE(tma);
  // bias + gelu: a broadcast operand where the plain rule is 256 wide in
  // whole waves: cooperative 128 x 256 with EPI_TMA (the chain in registers).
  c = pick(4096, 4096, 4096, true);
  EXPECT_EQ(c.tile_n, 256);
  EXPECT_EQ(c.pingpong, 0);
  EXPECT_EQ(c.stages, 4);
  c = pick(1024, 14336, 4096, true);  // 176 wide by the plain rule: 128 x 176, EPI_TMA
  EXPECT_EQ(c.tile_n, 176);
  EXPECT_EQ(c.pingpong, 0);
  EXPECT_EQ(c.stages, 4);
  {  // 128 wide by the plain rule (an N-major B): ping-pong
    auto q = analyze_gemm(v2_graph(1024, 14336, 4096, false, false, 16, true));
    ASSERT_TRUE(q.is_good());
    c = pick_config(*q, 132, false, true);
    EXPECT_EQ(c.tile_n, 128);
    EXPECT_EQ(c.pingpong, 1);
  }
  // A full-tensor operand (a residual): at most 128 wide, ping-pong.
  c = pick_tail(
      4096, 4096, DataType::BFLOAT16,
      [](OpGraph& g, auto x) { return g.add(x, g.tensor({1, 4096, 4096}, DataType::BFLOAT16, "R")); }, &tma);
  EXPECT_EQ(c.tile_n, 128);
  EXPECT_EQ(c.pingpong, 1);
  c = pick(4096, 4096, 4096, false);
  EXPECT_EQ(c.tile_n, 256);
  EXPECT_EQ(c.pingpong, 0);
  // A chain of by-value steps only (gelu): 128 x 256 with EPI_TMA where the
  // 256-wide tiles fill whole waves (512 tiles); fewer (128) keep the
  // 256-wide cooperative tile with 4 stages, which stores through TMA too.
  auto gelu = [](OpGraph& g, auto x) { return g.gelu(x); };
  c = pick_tail(4096, 4096, DataType::BFLOAT16, gelu, &tma);
  EXPECT_EQ(c.tile_n, 256);
  EXPECT_EQ(c.pingpong, 0);
  EXPECT_EQ(c.stages, 4);
  EXPECT_TRUE(tma);
  c = pick_tail(1024, 4096, DataType::BFLOAT16, gelu, &tma);
  EXPECT_EQ(c.tile_n, 256);
  EXPECT_EQ(c.pingpong, 0);
  EXPECT_EQ(c.stages, 4);
  EXPECT_TRUE(tma);
  c = pick(128, 4096, 4096, true);  // 32 tiles: split K, one unit per CTA
  EXPECT_GT(c.split_k, 1);
  EXPECT_EQ(c.pingpong, 0);
  c = pick(1024, 1024, 4096, true);  // 64 tiles: fewer than two per SM
  EXPECT_EQ(c.pingpong, 0);
  // Every proposable ping-pong config is a valid one (the CI compile set has some).
  int n = 0;
  for (const GemmConfig& c : proposable_configs())
    if (c.pingpong) {
      ++n;
      EXPECT_TRUE(config_from_knobs(knobs_of(c)).is_good());
    }
  EXPECT_GE(n, 1);
}

namespace {
// What the stub of cuTensorMapEncodeTiled was last asked for.
struct Encoded {
  int calls = 0;
  cuuint64_t dims[4] = {};
  cuuint64_t strides[3] = {};
  cuuint32_t box[2] = {};
};
Encoded g_encoded;
CUresult CUDAAPI encode_stub(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t* dims,
                             const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t*,
                             CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                             CUtensorMapFloatOOBfill) {
  ++g_encoded.calls;
  for (int i = 0; i < 4; ++i) g_encoded.dims[i] = dims[i];
  for (int i = 0; i < 3; ++i) g_encoded.strides[i] = strides[i];
  g_encoded.box[0] = box[0];
  g_encoded.box[1] = box[1];
  return CUDA_SUCCESS;
}
}  // namespace

// EPI_TMA's output map: encoded (flag 16) only for a 16-bit, N-contiguous
// output whose base and other strides are non-zero 16-byte multiples; boxes
// of 64 x 64; else the flag stays clear and the driver is not asked.
TEST(GemmV2TmaStore, OutputMapOnlyWhereTmaCanStoreEveryTile) {
  runtime::CudaDriverApi api;
  api.tensor_map_encode_tiled = &encode_stub;
  auto plain = analyze_gemm(v2_graph(300, 264, 128, false, true, 16, false));
  ASSERT_TRUE(plain.is_good());
  const std::uint64_t base = 0x10000;
  auto flags_of = [&](const GemmProblem& p, std::uint64_t ptr) {
    TmaCache cache;
    CUtensorMap m;
    std::int64_t flags = 1;
    EXPECT_TRUE(cache.output_map(api, p, ptr, &m, &flags).is_good());
    return flags;
  };
  g_encoded = {};
  EXPECT_EQ(flags_of(*plain, base), 1 | 16);
  EXPECT_EQ(g_encoded.calls, 1);
  EXPECT_EQ(g_encoded.dims[0], 264u);  // N inside
  EXPECT_EQ(g_encoded.dims[1], 300u);  // then M
  EXPECT_EQ(g_encoded.strides[0], 264u * 2u);
  EXPECT_EQ(g_encoded.box[0], 64u);
  EXPECT_EQ(g_encoded.box[1], 64u);
  g_encoded = {};
  EXPECT_EQ(flags_of(*plain, base + 8), 1);  // base not 16-byte aligned
  GemmProblem odd = *plain;
  odd.c.sr = 263;  // a row stride of 526 bytes
  EXPECT_EQ(flags_of(odd, base), 1);
  GemmProblem f32 = *plain;
  f32.out = DataType::FLOAT;
  EXPECT_EQ(flags_of(f32, base), 1);
  GemmProblem col = *plain;  // M-contiguous output (the kernel view of swap AB)
  col.c.sc = 300;
  col.c.sr = 1;
  EXPECT_EQ(flags_of(col, base), 1);
  GemmProblem folded = *plain;  // a batch axis of stride 0 would clip every batch past 0
  folded.batch1 = 3;
  folded.c.s1 = 0;
  EXPECT_EQ(flags_of(folded, base), 1);
  EXPECT_EQ(g_encoded.calls, 0);
  GemmProblem batched = *plain;
  batched.batch1 = 3;
  batched.c.s1 = 300 * 264;
  EXPECT_EQ(flags_of(batched, base), 1 | 16);
  EXPECT_EQ(g_encoded.dims[2], 3u);
  EXPECT_EQ(g_encoded.strides[1], 300u * 264u * 2u);
  // The engine's path: A's, B's and the output's maps in one maps() call,
  // into the kernel's argument, from the pointers in it; the flag bits ORed
  // into those the schedule set.
  TmaCache cache;
  GemmV2Params g{};
  g.problem.a.ptr = base;
  g.problem.b.ptr = base;
  g.problem.c.ptr = base + 64;
  g.flags = opgraph_gemm::kFlagStreamK;
  g_encoded = {};
  ASSERT_TRUE(cache.maps(api, *plain, v2(256, 3), true, g).is_good());
  EXPECT_EQ(g.flags, opgraph_gemm::kFlagStreamK | opgraph_gemm::kFlagCTma);  // no batch axes; the output's map
  EXPECT_EQ(g_encoded.calls, 3);
  EXPECT_EQ(g_encoded.dims[0], 264u);  // the output's, last
  g.flags = 0;
  ASSERT_TRUE(cache.maps(api, *plain, v2(256, 3), false, g).is_good());
  EXPECT_EQ(g.flags, 0);  // no output map asked for
  // A batched A (b1 axis) and B (b0 axis) set their bits.
  GemmProblem batched_ab = *plain;
  batched_ab.batch1 = 2;
  batched_ab.batch0 = 3;
  batched_ab.a.s1 = 300 * 128;
  batched_ab.a.s0 = 0;  // broadcast along b0: addressed at 0
  batched_ab.b.s1 = 0;
  batched_ab.b.s0 = 128 * 264;
  g.flags = 0;
  ASSERT_TRUE(cache.maps(api, batched_ab, v2(256, 3), false, g).is_good());
  EXPECT_EQ(g.flags, opgraph_gemm::kFlagA1 | opgraph_gemm::kFlagB0);
}

TEST(GemmV2Knobs, Tile176TakesAKMajorBCooperativeWithoutPairs) {
  // 176 wide: a K-major B only (an N-major B loads whole 64-wide boxes), the
  // 128-row cooperative schedule, no CTA pairs; EPI_TMA with 4 stages (the
  // copy's three 64-column boxes, the last overlapping) and with 5 (a copy of
  // two boxes: two passes); both in the CI compile set.
  GemmConfig t = v2(176, 5);
  expect_only_cooperative_single(t, 6);
  auto kmaj = analyze_gemm(v2_graph(1000, 904, 520, false, true, 16, false));
  auto nmaj = analyze_gemm(v2_graph(1000, 904, 520, false, false, 16, false));
  ASSERT_TRUE(kmaj.is_good() && nmaj.is_good());
  EXPECT_TRUE(config_takes(*kmaj, t));
  EXPECT_FALSE(config_takes(*nmaj, t));
  EXPECT_TRUE(config_takes(*nmaj, v2(256, 4)));
  EXPECT_EQ(v2_epi_boxes(*kmaj, t), 2);  // 5 stages + the whole copy: over 227 KiB
  EXPECT_EQ(v2_epi_boxes(*kmaj, v2(176, 4)), 3);
  // Stages of 16 KiB (A) + 22 KiB (B), 1280 bytes, and the copy: 128 rows x boxes x 128 B.
  EXPECT_EQ(smem_bytes(*kmaj, v2(176, 4)), 4u * (16384u + 22528u) + 1280u + 128u * 3u * 128u);
  EXPECT_EQ(smem_bytes(*kmaj, t), 5u * (16384u + 22528u) + 1280u + 128u * 2u * 128u);
  EXPECT_LE(smem_bytes(*kmaj, t), 232448u - 64u);
  auto big = analyze_gemm(v2_graph(1024, 14336, 4096));
  ASSERT_TRUE(big.is_good());
  EXPECT_EQ(v2_schedule(*big, t).tiles, 8 * 82);  // 14336 = 81 x 176 + 80
  const auto k = kernel_request(*kmaj, v2(176, 4));
  EXPECT_EQ(define_of(k, "OPGRAPH_GEMM_TILE_N"), "176");
  EXPECT_EQ(define_of(k, "OPGRAPH_GEMM_EPI_TMA"), "3");
  int proposed = 0;
  for (const GemmConfig& c : proposable_configs()) proposed += c == t || c == v2(176, 4);
  EXPECT_EQ(proposed, 2) << "the CI compile set has both 176-wide kernels";
}

TEST(GemmV2Knobs, Tile320RunsCooperativeWithoutPairsInThreeStages) {
  // 320 wide: two wgmmas per K step (n256 + n64), either B layout, the
  // 128-row cooperative schedule without CTA pairs, 3 stages (4 exceed 227
  // KiB); EPI_TMA's copy holds three of its five boxes (two passes); a K-major
  // B loads in two boxes of 160 rows. In the CI compile set.
  GemmConfig t = v2(320, 3);
  expect_only_cooperative_single(t, 4);
  auto kmaj = analyze_gemm(v2_graph(1000, 904, 520, false, true, 16, false));
  auto nmaj = analyze_gemm(v2_graph(1000, 904, 520, false, false, 16, false));
  ASSERT_TRUE(kmaj.is_good() && nmaj.is_good());
  EXPECT_TRUE(config_takes(*kmaj, t));
  EXPECT_TRUE(config_takes(*nmaj, t));  // five whole 64-wide boxes
  EXPECT_EQ(v2_epi_boxes(*kmaj, t), 3);
  // Stages of 16 KiB (A) + 40 KiB (B), 1280 bytes, the copy of three boxes.
  EXPECT_EQ(smem_bytes(*kmaj, t), 3u * (16384u + 40960u) + 1280u + 3u * 16384u);
  EXPECT_LE(smem_bytes(*kmaj, t), 232448u - 64u);
  auto big = analyze_gemm(v2_graph(4096, 14336, 4096));
  ASSERT_TRUE(big.is_good());
  EXPECT_EQ(v2_schedule(*big, t).tiles, 32 * 45);  // 14336 = 44 x 320 + 256
  EXPECT_NE(pick_config(*big, 132, false, true).tile_n, 320);  // not the heuristic's
  int proposed = 0;
  for (const GemmConfig& c : proposable_configs()) proposed += c == t;
  EXPECT_EQ(proposed, 1) << "the CI compile set has the 320-wide kernel";
}

// The launch contract (kernels/gemm_params.cuh): what a plan builds once
// from the kernel view and its schedule. Every extent, stride and by-value
// operand is in it; the pointers, maps and scratch are zero (execute fills
// them per call); the schedule's split count, split_from and stream-K bit
// are the launch's.
TEST(GemmV2Launch, ArgumentCarriesTheProblemAndTheSchedule) {
  // (A @ B) * 0.5 + row operand, the two epilogue operand kinds.
  const GemmProblem p = sample_problem(DataType::BFLOAT16, DataType::BFLOAT16, true, true, 8,
                                       {EpiKind::MUL, EpiKind::ADD});
  const GemmConfig c = v2(128, 6, 3);
  const V2Schedule s = v2_schedule(p, c, 132);
  ASSERT_FALSE(s.stream);
  const GemmV2Params g = launch_params(p, s);
  EXPECT_EQ(g.problem.m, p.m);
  EXPECT_EQ(g.problem.n, p.n);
  EXPECT_EQ(g.problem.k, p.k);
  EXPECT_EQ(g.problem.batch0, p.batch0);
  EXPECT_EQ(g.problem.batch1, p.batch1);
  EXPECT_EQ(g.problem.a.sr, p.a.sr);
  EXPECT_EQ(g.problem.a.sc, p.a.sc);
  EXPECT_EQ(g.problem.b.sr, p.b.sr);
  EXPECT_EQ(g.problem.b.sc, p.b.sc);
  EXPECT_EQ(g.problem.c.sr, p.c.sr);
  EXPECT_EQ(g.problem.scalar[0], 0.5);  // MUL by value
  EXPECT_EQ(g.problem.epi[0].ptr, 0u);
  EXPECT_EQ(g.problem.epi[1].sr, 0);  // the row operand: broadcast along M
  EXPECT_EQ(g.problem.epi[1].sc, 1);
  EXPECT_EQ(g.problem.a.ptr | g.problem.b.ptr | g.problem.c.ptr | g.problem.epi[1].ptr, 0u);
  EXPECT_EQ(g.workspace | g.counters, 0u);
  EXPECT_EQ(g.splits, 3);
  EXPECT_EQ(g.split_from, s.split_from);
  EXPECT_EQ(g.flags, 0);
  const unsigned char* map = reinterpret_cast<const unsigned char*>(&g.a_map);
  EXPECT_TRUE(std::all_of(map, map + 3 * sizeof(TmaMap), [](unsigned char b) { return b == 0; }));

  // Stream-K (1024 x 14336 x 4096 at 128 x 256): its bit, kernel split count 1.
  auto wide = analyze_gemm(v2_graph(1024, 14336, 4096, false, true, 16, false));
  ASSERT_TRUE(wide.is_good());
  GemmConfig sk = v2(256, 4);
  sk.stream_k = 1;
  const V2Schedule ss = v2_schedule(*wide, sk, 132);
  ASSERT_TRUE(ss.stream);
  const GemmV2Params gs = launch_params(*wide, ss);
  EXPECT_EQ(gs.flags, opgraph_gemm::kFlagStreamK);
  EXPECT_EQ(gs.splits, 1);
  EXPECT_EQ(gs.split_from, ss.split_from);
  // The maps sit 64-byte aligned in the argument (TMA reads them in place).
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&gs.a_map) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&gs.c_map) % 64, 0u);
}
