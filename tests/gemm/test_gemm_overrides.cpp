// The gemm engine's execute-time shape overrides without a GPU (gemm_exec.h,
// overridden_view / override_fits_scratch; docs/dynamic_shapes.md): a plan's
// kernel runs other extents of its layout class — the kernel view at the call's
// M, N, K, batch and packed strides (SWAP_AB applied), the epilogue operands'
// broadcast strides — and refuses, naming the rule, extents that disagree
// between A, B and C (G9), a bias left at the old N (G5), extents that need
// another kernel (leaving the 16-byte class), and a split-K schedule larger than
// the scratch sized at build. The launch on the H200: tests/gemm_gpu/test_gemm_gpu_overrides.cpp.
// Also capture safety without a GPU: a split-K plan's first execute on a stream
// being captured is refused (its scratch slot would allocate and sync) with the
// fix named; after an eager execute, the captured one takes the stream's slot
// with no driver call.
#include <gtest/gtest.h>

#include <random>

#include "engines/gemm/gemm_exec.h"
#include "gemm_fake_driver.h"
#include "exec/declared_layout.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using namespace opgraph::gemm;

namespace {

// C = relu(A @ B + bias): A [1, 64, 128] row-major, B [1, 128, 96] column-major, bias [1, 1, 96].
struct G {
  OpGraph g;
  TensorPtr a, b, bias, c;
  DeclaredLayout layout;
  GemmProblem built;
  G() {
    g.set_name("gemm_over").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    a = g.tensor({1, 64, 128}, DataType::BFLOAT16, "A");
    b = g.tensor({1, 128, 96}, DataType::BFLOAT16, "B");
    b->set_stride({128 * 96, 1, 128});
    bias = g.tensor({1, 1, 96}, DataType::BFLOAT16, "bias");
    c = g.relu(g.bias(g.matmul(a, b), bias));
    c->set_output(true).set_name("C").set_data_type(DataType::BFLOAT16);
    EXPECT_TRUE(g.validate().is_good());
    layout = DeclaredLayout::compute(g).value();
    built = analyze_gemm(g).value();
  }
  // A pack of bare addresses with A [1,M,K], B [1,K,N] (column-major), bias [1,1,N], C [1,M,N].
  Result<VariantPack> pack(std::int64_t M, std::int64_t N, std::int64_t K, bool with_bias = true) {
    static char mem[16];
    VariantPack p;
    p.set(a, mem).set(b, mem).set(bias, mem).set(c, mem);
    p.override_shape(a->get_uid(), {1, M, K});
    p.override_shape(b->get_uid(), {1, K, N}, {K * N, 1, K});
    if (with_bias) p.override_shape(bias->get_uid(), {1, 1, N});
    p.override_shape(c->get_uid(), {1, M, N});
    VariantPack n;
    Status s = VariantPack::normalize(p, layout, n);
    if (s.is_bad()) return s;
    return n;
  }
};

GemmConfig v2(int tile_n, int split = 1, bool swap = false) {
  GemmConfig c;
  c.version = 2;
  c.tile_m = 128;
  c.tile_n = tile_n;
  c.stages = 4;
  c.split_k = split;
  c.swap_ab = swap;
  return c;
}

GemmConfig v1() {
  GemmConfig c;
  c.tile_m = c.tile_n = 64;
  c.stages = 2;
  return c;
}

}  // namespace

TEST(GemmOverrides, TheKernelViewTakesTheCallsExtentsAndStrides) {
  G t;
  std::mt19937_64 rng(2026);
  std::uniform_int_distribution<std::int64_t> e8(1, 64);
  for (int i = 0; i < 16; ++i) {
    const std::int64_t M = e8(rng) * 8 + 8, N = e8(rng) * 8 + 8, K = e8(rng) * 8 + 8;
    auto p = t.pack(M, N, K);
    ASSERT_TRUE(p.is_good()) << p.status().message();
    for (const GemmConfig& c : {v1(), v2(128)}) {
      auto kp = overridden_view(t.g, *p, t.built, c);
      ASSERT_TRUE(kp.is_good()) << kp.status().message();
      EXPECT_EQ(kp->m, M);
      EXPECT_EQ(kp->n, N);
      EXPECT_EQ(kp->k, K);
      EXPECT_EQ(kp->a.sr, K);  // row-major A: row stride K
      EXPECT_EQ(kp->a.sc, 1);
      EXPECT_EQ(kp->b.sc, K);  // column-major B: column stride K
      EXPECT_EQ(kp->b.sr, 1);
      EXPECT_EQ(kp->c.sr, N);
      ASSERT_EQ(kp->operands.size(), 1u);
      EXPECT_EQ(kp->operands[0].view.sr, 0);  // the bias broadcasts over rows
      EXPECT_EQ(kp->operands[0].view.sc, 1);
      EXPECT_EQ(kp->vec, 8);
      // The launch for the new extents: v1's grid covers M x N in 64 x 64 tiles.
      const LaunchPlan lp = launch_plan_for(*kp, c, 132, 0);
      if (c.version == 1) {
        EXPECT_EQ(static_cast<std::int64_t>(lp.dims.grid[0]), ((M + 63) / 64) * ((N + 63) / 64));
      }
      EXPECT_EQ(launch_params(*kp, lp.sched).problem.m, M);
    }
    // SWAP_AB: the kernel's M is the graph's N.
    auto sw = overridden_view(t.g, *p, t.built, v2(128, 1, true));
    ASSERT_TRUE(sw.is_good()) << sw.status().message();
    EXPECT_EQ(sw->m, N);
    EXPECT_EQ(sw->n, M);
  }
}

TEST(GemmOverrides, RefusalsNameTheRule) {
  G t;
  // G9: C's M disagrees with A's.
  {
    static char mem[16];
    VariantPack p;
    p.set(t.a, mem).set(t.b, mem).set(t.bias, mem).set(t.c, mem);
    p.override_shape(t.a->get_uid(), {1, 32, 128});
    VariantPack n;
    ASSERT_TRUE(VariantPack::normalize(p, t.layout, n).is_good());
    auto kp = overridden_view(t.g, n, t.built, v1());
    ASSERT_TRUE(kp.is_bad());
    EXPECT_EQ(kp.status().code(), ErrorCode::INVALID_VARIANT_PACK);
    for (const char* s : {"engine gemm: execute-time shape override refused", "G9", "A's M is 32, C's is 64", "'A'",
                          "override every operand"})
      EXPECT_NE(kp.status().message().find(s), std::string::npos) << s << " in " << kp.status().message();
  }
  // G5: N changed, the bias left at 96.
  {
    auto p = t.pack(64, 64, 128, false);
    ASSERT_TRUE(p.is_good());
    auto kp = overridden_view(t.g, *p, t.built, v1());
    ASSERT_TRUE(kp.is_bad());
    EXPECT_EQ(kp.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
    EXPECT_NE(kp.status().message().find("G5"), std::string::npos) << kp.status().message();
    EXPECT_NE(kp.status().message().find("'bias'"), std::string::npos) << kp.status().message();
  }
  // Another kernel: K = 100 leaves the 16-byte class (contiguous extent not a multiple of 8).
  {
    auto p = t.pack(64, 96, 100);
    ASSERT_TRUE(p.is_good());
    for (const GemmConfig& c : {v1(), v2(128)}) {
      auto kp = overridden_view(t.g, *p, t.built, c);
      ASSERT_TRUE(kp.is_bad());
      EXPECT_EQ(kp.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
      EXPECT_NE(kp.status().message().find("_vec1"), std::string::npos) << kp.status().message();
      EXPECT_NE(kp.status().message().find("_vec8"), std::string::npos) << kp.status().message();
    }
  }
}

// The per-call path compares the new problem's kernel request with the one computed at
// build field by field (same_kernel) instead of building both JSON cache keys: it must
// answer exactly as key equality does, and overridden_view with the built request given
// must answer as the form that derives it.
TEST(GemmOverrides, SameKernelAgreesWithCacheKeyEquality) {
  G t;
  std::vector<runtime::KernelRequest> reqs;
  for (const GemmConfig& c : {v1(), v2(128), v2(128, 4), v2(128, 1, true)})
    for (std::int64_t K : {128, 100, 256}) {
      auto p = t.pack(64, 96, K);
      ASSERT_TRUE(p.is_good());
      auto a = analyze_gemm(t.g, &*p);
      ASSERT_TRUE(a.is_good()) << a.status().message();
      reqs.push_back(kernel_request(*a, c));
    }
  runtime::KernelRequest renamed = reqs[0];
  renamed.defines.back().value += " ";
  reqs.push_back(renamed);
  runtime::KernelRequest fewer = reqs[0];
  fewer.defines.pop_back();
  reqs.push_back(fewer);
  int same = 0;
  for (const auto& x : reqs)
    for (const auto& y : reqs) {
      EXPECT_EQ(same_kernel(x, y), x.key("any") == y.key("any")) << x.kernel << " vs " << y.kernel;
      same += same_kernel(x, y);
    }
  EXPECT_GT(same, static_cast<int>(reqs.size()));  // equal requests were compared too (K 128 and 256 share one)
  for (const GemmConfig& c : {v1(), v2(128)})
    for (std::int64_t K : {128, 100}) {
      auto p = t.pack(72, 96, K);
      ASSERT_TRUE(p.is_good());
      auto derived = overridden_view(t.g, *p, t.built, c);
      auto given = overridden_view(t.g, *p, kernel_request(t.built, c), c);
      ASSERT_EQ(derived.is_good(), given.is_good());
      if (derived.is_good()) {
        EXPECT_EQ(derived->m, given->m);
        EXPECT_EQ(derived->k, given->k);
      } else {
        EXPECT_EQ(derived.status().message(), given.status().message());
      }
    }
}

TEST(GemmOverrides, SplitKScheduleMustFitTheScratchSizedAtBuild) {
  G t;
  const GemmConfig c = v2(128, 4);
  const LaunchPlan built = launch_plan_for(kernel_view(t.built, c), c, 132, 0);
  ASSERT_GT(built.partial_bytes, 0);
  // Smaller: fits. Larger: more tiles, more partials than the plan holds.
  auto small = t.pack(32, 64, 128);
  ASSERT_TRUE(small.is_good());
  auto ks = overridden_view(t.g, *small, t.built, c);
  ASSERT_TRUE(ks.is_good()) << ks.status().message();
  EXPECT_TRUE(override_fits_scratch(launch_plan_for(*ks, c, 132, 0), built).is_good());
  auto big = t.pack(1024, 1024, 1024);
  ASSERT_TRUE(big.is_good());
  auto kb = overridden_view(t.g, *big, t.built, c);
  ASSERT_TRUE(kb.is_good()) << kb.status().message();
  const Status s = override_fits_scratch(launch_plan_for(*kb, c, 132, 0), built);
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(s.message().find("sized at build"), std::string::npos) << s.message();
  // A plan without split-K has no scratch: a shape whose schedule splits nothing fits.
  const GemmConfig plain = v2(128);
  const LaunchPlan none = launch_plan_for(kernel_view(t.built, plain), plain, 132, 0);
  auto kp = overridden_view(t.g, *big, t.built, plain);
  ASSERT_TRUE(kp.is_good());
  EXPECT_TRUE(override_fits_scratch(launch_plan_for(*kp, plain, 132, 0), none).is_good());
}

// Past the scratch a split-K plan allocated, an override runs the built kernel with fewer
// K splits (the most that fit; the split count is a launch argument), down to one (no
// scratch), instead of being refused; the scratch's counters are sized at build for the
// partials' every schedule (scratch_counter_bytes), so more tiles at fewer splits fit.
TEST(GemmOverrides, PastTheScratchTheBuiltKernelRunsWithFewerSplits) {
  G t;
  const GemmConfig c = v2(128, 4);
  auto view = [&](std::int64_t M, std::int64_t N, std::int64_t K) {
    auto p = t.pack(M, N, K);
    EXPECT_TRUE(p.is_good());
    auto kp = overridden_view(t.g, *p, t.built, c);
    EXPECT_TRUE(kp.is_good()) << kp.status().message();
    return *kp;
  };
  // Built at 256 x 256 x 1024: 4 tiles x 4 splits of partials.
  const LaunchPlan built = launch_plan_for(view(256, 256, 1024), c, 132, 0);
  ASSERT_EQ(built.sched.splits, 4);
  LaunchPlan cap = built;
  cap.counter_bytes = scratch_counter_bytes(c, built);
  EXPECT_GE(cap.counter_bytes, built.counter_bytes);
  EXPECT_EQ(cap.counter_bytes, 4 * 4 / 2 * 8);  // 16 slots: 8 tiles at 2 splits, 8 bytes each
  // Within the scratch: the plan's own schedule.
  const LaunchPlan same = override_launch(view(128, 256, 1024), c, 132, 0, cap);
  EXPECT_EQ(same.sched.splits, 4);
  // 8 tiles: 4 and 3 splits need 32 and 24 slots, 2 splits fit the 16 held.
  const GemmProblem wider = view(512, 256, 1024);
  const LaunchPlan asked = launch_plan_for(wider, c, 132, 0);
  EXPECT_TRUE(override_fits_scratch(asked, cap).is_bad());
  const LaunchPlan fewer = override_launch(wider, c, 132, 0, cap);
  EXPECT_EQ(fewer.sched.splits, 2);
  EXPECT_EQ(fewer.sched.tiles, asked.sched.tiles);
  EXPECT_TRUE(override_fits_scratch(fewer, cap).is_good());
  // The same kernel's launch: block, shared memory and cluster unchanged.
  EXPECT_EQ(fewer.dims.shared_bytes, asked.dims.shared_bytes);
  EXPECT_EQ(fewer.dims.block[0], asked.dims.block[0]);
  EXPECT_EQ(fewer.dims.cluster[0], asked.dims.cluster[0]);
  EXPECT_EQ(launch_params(wider, fewer.sched).problem.m, 512);
  // 64 tiles: no split count fits; un-split, no scratch.
  const LaunchPlan none = override_launch(view(1024, 1024, 1024), c, 132, 0, cap);
  EXPECT_EQ(none.sched.splits, 1);
  EXPECT_EQ(none.partial_bytes, 0);
  EXPECT_EQ(none.counter_bytes, 0);
  // A plan without split-K allocates no counters.
  const GemmConfig plain = v2(128);
  EXPECT_EQ(scratch_counter_bytes(plain, launch_plan_for(view(256, 256, 1024), plain, 132, 0)), 0);
}

namespace {
class GemmCaptureScratch : public opgraph::gemm_fake::FakeDriverTest {};
CUstream g_capturing = nullptr;  // the stream the fake driver reports as being captured
}  // namespace

TEST_F(GemmCaptureScratch, FirstUseUnderCaptureIsRefusedNamingTheFix) {
  runtime::CudaDriverApi api = api_;
  api.stream_is_capturing = [](CUstream s, CUstreamCaptureStatus* st) -> CUresult {
    *st = s == g_capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
  };
  const CUstream s = opgraph::gemm_fake::stream_handle(0x7700);
  StreamScratch scratch(4096, 256, opgraph::gemm_fake::scratch_ctx());
  g_capturing = s;
  auto refused = scratch.acquire(api, s);
  ASSERT_TRUE(refused.is_bad());
  EXPECT_EQ(refused.status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(refused.status().message().find("execute the plan once on this stream before capturing"),
            std::string::npos) << refused.status().message();
  EXPECT_TRUE(fake_.live.empty());  // nothing allocated, nothing synchronised
  EXPECT_TRUE(fake_.calls.empty());
  // Eagerly first: the slot is made; then under capture the stream's own slot costs no driver call.
  g_capturing = nullptr;
  auto eager = scratch.acquire(api, s);
  ASSERT_TRUE(eager.is_good()) << eager.status().message();
  ASSERT_TRUE(scratch.release(api, *eager, s, true).is_good());
  const std::size_t calls = fake_.calls.size();
  g_capturing = s;
  auto captured = scratch.acquire(api, s);
  ASSERT_TRUE(captured.is_good()) << captured.status().message();
  EXPECT_EQ(captured->partials, eager->partials);
  EXPECT_EQ(fake_.calls.size(), calls);
  ASSERT_TRUE(scratch.release(api, *captured, s, true).is_good());
  g_capturing = nullptr;
}
