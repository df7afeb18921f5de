// tests/linear_attention/test_la_nvrtc.cpp — the linear_attention family's kernels through NVRTC for
// sm_90a, as the engine compiles them, without a GPU: every declared specialisation, the fused prefill's
// variants under trial (bench/gdn_ws_variants.sh runs them on the GPU), and the bench cubin tool's options
// against the runtime's.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/la_engine.h"
#include "linear_attention/la_nvrtc_test_util.h"
#include "runtime/loader.h"
#include "runtime/nvrtc_compiler.h"

namespace {

using namespace opgraph;

TEST(LaNvrtc, EveryDeclaredSpecialisationCompilesForSm90a) {
  if (auto api = runtime::nvrtc(); api.is_bad())
    GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  auto all = linear_attention::declared_specialisations();
  // 8 entries (gdn_decode and gdn_decode_small among them) x d {64, 128} x {bf16, fp16}, the four fused ones (prefill, summary, span summary,
  // span scan) x {bf16, fp16}, gdn_summary_scan (gdn_summary at d = 64, in the two-pass builds) x {bf16, fp16},
  // their warp-specialised builds (PIPELINE_ARCH 3: prefill, span summary,
  // span scan) x {bf16, fp16} and their fp16-inverse builds (PIPELINE_ARCH 4, kernels ending _h: the same x {bf16,
  // fp16}), 4's guarded prefill and its fp32 fallback (_h_g, _g) x {bf16, fp16}, the builds writing state_checkpoints (the prefill and the span scan, the three fused forms: 6 x {bf16,
  // fp16}, two of them _h; the two-pass scan and span scan: 2 x d {64, 128} x {bf16, fp16}), the pool copy, and
  // gdn_bwd's 65 (12 entries, the chain split's among them, at both head dims, the six fused ones — the forward
  // recompute, the reverse scan and their split's four — at d = 128, and the one-pass form's five at d = 128, bf16;
  // compiled by LaBwd's own test, test_la_bwd.cpp).
  const auto bwd = linear_attention::gdn_bwd_declared_specialisations();
  ASSERT_EQ(bwd.size(), 65u);
  ASSERT_EQ(all.size(), 79u + bwd.size());
  const auto n_ws = std::count_if(all.begin(), all.end(), [](const runtime::KernelRequest& r) {
    return r.kernel.size() > 3 && r.kernel.compare(r.kernel.size() - 3, 3, "_ws") == 0;
  });
  EXPECT_EQ(n_ws, 6);  // cache warm --all covers the fused plan the list ranks first
  const auto n_ckpt = std::count_if(all.begin(), all.end(), [](const runtime::KernelRequest& r) {
    return r.kernel.size() > 5 && r.kernel.compare(r.kernel.size() - 5, 5, "_ckpt") == 0;
  });
  EXPECT_EQ(n_ckpt, 16);
  const auto n_h = std::count_if(all.begin(), all.end(), [](const runtime::KernelRequest& r) {
    return r.kernel.size() > 2 && r.kernel.compare(r.kernel.size() - 2, 2, "_h") == 0;
  });
  EXPECT_EQ(n_h, 10);  // the 6 warp-specialised builds and the 4 checkpoint ones
  // One compile a build (source and defines), each entry a function symbol of its cubin: what `opgraph cache
  // warm` stores (EntriesOfOneBuildCompileToOneCubin below).
  std::vector<runtime::KernelRequest> fwd;
  for (const auto& r : all)
    if (r.kernel.rfind("gdn_bwd_", 0) != 0) fwd.push_back(r);
  EXPECT_EQ(fwd.size(), 79u);
  EXPECT_EQ(la_test::compile_each_build_once(fwd), 32u);
}

// `opgraph cache warm` compiles a build (source and defines) once and stores its cubin for every entry of the
// build (KernelCache::warm): an entry's own compile is byte for byte that cubin (the extern "C" entries' name
// expressions change nothing), checked on the decode build's two entries at both head dims.
TEST(LaNvrtc, EntriesOfOneBuildCompileToOneCubin) {
  if (auto api = runtime::nvrtc(); api.is_bad())
    GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  int pairs = 0;
  const auto all = linear_attention::declared_specialisations();
  for (const auto& a : all) {
    if (a.entry != "gdn_decode" || a.kernel.find("_bf16") == std::string::npos) continue;
    for (const auto& b : all) {
      if (b.entry != "gdn_decode_small" || b.build_key() != a.build_key()) continue;
      auto ka = runtime::compile_kernel(a, "sm_90a"), kb = runtime::compile_kernel(b, "sm_90a");
      ASSERT_TRUE(ka.is_good() && kb.is_good()) << a.kernel << " / " << b.kernel;
      EXPECT_EQ(kb->lowered_name, b.entry);
      EXPECT_TRUE(ka->cubin == kb->cubin) << a.kernel << " and " << b.kernel << " compile to different cubins";
      EXPECT_TRUE(runtime::validate_cubin(ka->cubin, b.entry).is_good());
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 2);  // d = 64 and 128, bf16
}

// The fused pass's variants under trial (kernels/gdn_fused.cu, gdn_fused_ws*.cuh): GDN_FUSED_INV_COL=1,
// the diagonal blocks by columns; the warp-specialised forms (GDN_FUSED_WS=1, PIPELINE_ARCH 3's build,
// the R3 form by default) with GDN_WS_CLOCK=1, their phase clocks; R3's auxiliary side as it was before
// 0b900ea (GDN_WS3_GATES, GDN_WS3_TF32RAW at 0; its L / P epilogue is the one form since) and before
// 2026-12-04 (GDN_WS3_GATES=1: warp 8's gates; GDN_WS3_MERGE2=0: the merges in four phases; GDN_WS3_EPIW=0: one
// L / P epilogue for the four warps; GDN_WS3_LD=65: the fp32 L / T tiles' odd row stride); GDN_WS3_NORMMID=1,
// the state side's norms in its first product group's shadow, and GDN_WS3_DIAG8=1 (8 x 8 diagonal blocks and
// their merge on mma), together (each is a compile-time constant in plain `if`s and `#if` blocks of its own, so the
// pair's build compiles every line either adds; the off forms are the engine's), GDN_WS3_ADDR32=1 (the merges'
// shared accesses by 32-bit addresses) with GDN_BWD_ONEPASS=1 (the one-pass backward's first pass,
// gdn_bwd_fwd_st_fused: an entry of its own, so the pair's cubin holds it beside the others), and, the engine's since 2026-12-06, GDN_SPAN_TAIL (a chain split's value-row
// span summaries from their vanishing suffix only) and GDN_WALK_SKIP (the vanishing spans' M rows store a word
// instead of zeros; the walk's side: ChainSplitWithoutWalkSkipCompilesForSm90a) turned off, both in one build (as
// the pair above), and GDN_SPLIT_ADAPT (the engine's since 2026-12-06 too: a batch's split over its compact span
// map) turned off, GDN_WS3_LSYM=1 in PIPELINE_ARCH 4's build
// (its L blocks below the diagonal shared out among the four warps' epilogues) (GDN_WS3_F16INV=1, the inverse on fp16
// tiles, is PIPELINE_ARCH 4's declared build since c482527: EveryDeclaredSpecialisation...)
// (the 16 x 16 blocks' four-column reads, GDN_WS3_DIAGV, are the
// default since 2026-12-04: GDN_WS3_LD=65 checks the column form they fall back to); the previous two-stage form
// (GDN_WS_R3=0, ws_pass) with
// GDN_WS_ROWS_AT=1, the rows requested earlier, and with GDN_WS_LOADS and GDN_WS_KE, the state side
// loading the rows and forming X.
// No plan runs them; bench/gdn_fused_ab.sh runs them on the GPU against the engine's build. They
// compile for sm_90a from the embedded sources as the engine would compile them, bf16 inputs (each
// cubin holds all four fused entries: the prefill, the summary, the span summary and the span scan).
TEST(LaNvrtc, FusedTrialVariantsCompileForSm90a) {
  if (auto api = runtime::nvrtc(); api.is_bad())
    GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  using Defines = std::vector<std::pair<std::string, std::string>>;
  const std::vector<std::pair<const char*, Defines>> variants = {
      {"inv_col", {{"GDN_FUSED_INV_COL", "1"}}},
      {"ws_clock", {{"GDN_FUSED_WS", "1"}, {"GDN_WS_CLOCK", "1"}}},
      {"ws3_aux_before", {{"GDN_FUSED_WS", "1"}, {"GDN_WS3_GATES", "0"}, {"GDN_WS3_TF32RAW", "0"}}},
      {"ws3_gates1_merge4_epi",
       {{"GDN_FUSED_WS", "1"}, {"GDN_WS3_GATES", "1"}, {"GDN_WS3_MERGE2", "0"}, {"GDN_WS3_EPIW", "0"}}},
      {"ws3_ld65", {{"GDN_FUSED_WS", "1"}, {"GDN_WS3_LD", "65"}}},
      {"ws3_diag8_normmid", {{"GDN_FUSED_WS", "1"}, {"GDN_WS3_DIAG8", "1"}, {"GDN_WS3_NORMMID", "1"}}},
      {"ws3_addr32_onepass", {{"GDN_FUSED_WS", "1"}, {"GDN_WS3_ADDR32", "1"}, {"GDN_BWD_ONEPASS", "1"}}},
      {"ws3_no_span_tail_no_walk_skip", {{"GDN_FUSED_WS", "1"}, {"GDN_SPAN_TAIL", "0"}, {"GDN_WALK_SKIP", "0"}}},
      {"ws3_default_span_map", {{"GDN_FUSED_WS", "1"}, {"GDN_SPLIT_ADAPT", "0"}}},
      {"ws3_f16inv_lsym", {{"GDN_FUSED_WS", "1"}, {"GDN_WS3_F16INV", "1"}, {"GDN_WS3_LSYM", "1"}}},
      {"ws2_rows_at_1", {{"GDN_FUSED_WS", "1"}, {"GDN_WS_R3", "0"}, {"GDN_WS_ROWS_AT", "1"}}},
      {"ws2_loads_ke",
       {{"GDN_FUSED_WS", "1"}, {"GDN_WS_R3", "0"}, {"GDN_WS_ROWS_AT", "1"}, {"GDN_WS_LOADS", "1"}, {"GDN_WS_KE", "1"}}},
  };
  // bf16 only (the input type is a define the forms share; the declared set compiles both), from
  // the eight-warp request (the WS form itself is declared: EveryDeclaredSpecialisation...).
  int fused = 0;
  for (auto r : linear_attention::declared_specialisations()) {
    if (r.entry != "gdn_prefill_fused" || r.kernel != "gdn_prefill_fused_d128_bf16") continue;
    ++fused;
    for (const auto& [name, defines] : variants) {
      runtime::KernelRequest v = r;
      for (const auto& d : defines) v.defines.push_back({d.first, d.second});
      v.kernel += std::string("_") + name;
      auto k = runtime::compile_kernel(v, "sm_90a");
      ASSERT_TRUE(k.is_good()) << v.kernel << ": " << k.status().message();
      EXPECT_TRUE(runtime::validate_cubin(k->cubin, k->lowered_name).is_good()) << v.kernel;
    }
  }
  EXPECT_EQ(fused, 1);
}

// GDN_SPLIT_ADAPT=0 (kernels/gdn_params.cuh; 1 the engine's since 2026-12-06), the default span map's A/B form, in
// the forward walk's build (gdn_two_pass.cu: gdn_span_fixup counts a sequence's spans by seq_spans, which reads
// split_min_chunks under 1); the fused entries' build is FusedTrialVariantsCompileForSm90a's ws3_default_span_map.
TEST(LaNvrtc, DefaultSpanMapWalkCompilesForSm90a) {
  if (auto api = runtime::nvrtc(); api.is_bad())
    GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  int n = 0;
  for (const auto& base : linear_attention::declared_specialisations()) {
    if (base.entry != "gdn_span_fixup" || base.kernel.find("_d128_bf16") == std::string::npos) continue;
    runtime::KernelRequest r = base;
    r.defines.push_back({"GDN_SPLIT_ADAPT", "0"});
    r.kernel += "_default_span_map";
    auto k = runtime::compile_kernel(r, "sm_90a");
    ASSERT_TRUE(k.is_good()) << r.kernel << ": " << k.status().message();
    EXPECT_TRUE(runtime::validate_cubin(k->cubin, "gdn_span_fixup").is_good()) << r.kernel;
    ++n;
  }
  EXPECT_EQ(n, 1);
}

// GDN_WALK_SKIP=0's other builds (gdn_common.cuh; 1, the default, skips the walk's product where the span summaries
// wrote the vanishing word, 0 has them store zeros as M): the scans' forms' summaries and the forward walk
// (gdn_two_pass.cu: gdn_span_summary, gdn_span_fixup in one cubin) and the backward's (gdn_bwd_states.cu:
// gdn_bwd_fwd_summary, gdn_bwd_span_fixup and its reverse form), d = 128 (the fused forms' split's head dim), bf16
// (the fused build's side: FusedTrialVariantsCompileForSm90a above). Each build's entries are functions of its one
// cubin.
TEST(LaNvrtc, ChainSplitWithoutWalkSkipCompilesForSm90a) {
  if (auto api = runtime::nvrtc(); api.is_bad())
    GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  auto all = linear_attention::declared_specialisations();
  int n = 0;
  for (const auto& base : all) {
    const bool fwd = base.entry == "gdn_span_fixup", bwd = base.entry == "gdn_bwd_span_fixup";
    if ((!fwd && !bwd) || base.kernel.find("_d128_bf16") == std::string::npos) continue;
    runtime::KernelRequest r = base;
    r.defines.push_back({"GDN_WALK_SKIP", "0"});
    r.kernel += "_no_walk_skip";
    auto k = runtime::compile_kernel(r, "sm_90a");
    ASSERT_TRUE(k.is_good()) << r.kernel << ": " << k.status().message();
    const std::vector<std::string> entries =
        fwd ? std::vector<std::string>{"gdn_span_fixup", "gdn_span_summary"}
            : std::vector<std::string>{"gdn_bwd_span_fixup", "gdn_bwd_span_fixup_rev", "gdn_bwd_fwd_summary"};
    for (const auto& e : entries) EXPECT_TRUE(runtime::validate_cubin(k->cubin, e).is_good()) << r.kernel << ": " << e;
    ++n;
  }
  EXPECT_EQ(n, 2);  // the two builds
}

// bench/nvrtc_cubin.cpp builds the A/B harnesses' cubins (bench/gdn_fused_ab.sh, gdn_bwd_ab.sh,
// gdn_bwd_profile.sh) "with the engine's options": every option the runtime compiles with must be in its
// list (it cannot call the runtime: the harnesses build on the GPU machine without cmake), so the two
// cannot drift apart unnoticed. The architecture comes from its command line.
TEST(LaNvrtc, BenchCubinToolUsesTheRuntimesOptions) {
  std::ifstream in(std::string(OPGRAPH_SOURCE_DIR) + "/bench/nvrtc_cubin.cpp");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string src = text.str();
  for (const std::string& o : runtime::nvrtc_options("sm_90a")) {
    if (o == "-lineinfo") continue;  // only under OPGRAPH_NVRTC_LINEINFO=1 (the profile scripts pass it)
    const std::string want = o.rfind("--gpu-architecture=", 0) == 0 ? "\"--gpu-architecture=\") + argv[2]"
                                                                   : "\"" + o + "\"";
    EXPECT_NE(src.find(want), std::string::npos) << "bench/nvrtc_cubin.cpp lacks the runtime's option " << o;
  }
}

}  // namespace
