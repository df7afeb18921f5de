// CUDA-graph-safe execute on the gemm engine (part of test_gemm_gpu; run on the
// H200 only; docs/dynamic_shapes.md, "Capture"): one execute is captured into a
// CUDA graph on a non-blocking stream (cuStreamBeginCapture, thread-local mode,
// through the loader's driver table: tests/gpu/capture.h), instantiated, and
// replayed on NEW contents of the same buffers, several times; each replay's
// output (poisoned first) against the reference engine (float64) on those
// contents. v1, v2, v2 with CTA pairs, and v2 split-K (whose first execute on a
// stream allocates its scratch slot: one eager execute comes first, as the
// engine's contract says), and a plan executed with shape overrides (the
// captured launch keeps the call's extents). A capture the driver invalidates
// (a host sync, a pageable copy, an allocation inside execute) fails the test.
#include <gtest/gtest.h>

#include "engines/gemm/gemm_engine.h"
#include "gemm_gpu/gemm_gpu_fixture.h"
#include "gpu/capture.h"

using namespace opgraph;
using namespace opgraph::gemm_testing;

namespace {

Result<std::unique_ptr<CompiledPlan>> plan_for(const Engine& engine, const OpGraph& g, const Knobs& knobs) {
  FactsCache facts(g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  OPGRAPH_CHECK(engine.check_support(g, ctx));
  return build_direct(engine, g, PlanConfig{engine.id(), knobs, {}, -1}, ctx);
}

// New random contents for every input of `g` in o's host and device buffers
// (the same device allocations), and the output poisoned.
void refill(const OpGraph& g, Operands& o, std::mt19937& rng) {
  for (auto& [uid, h] : o.host) {
    if (uid == o.out_uid) continue;
    const TensorPtr t = g.tensor_by_uid(uid);
    const std::size_t bytes = h.size();
    fill_random(h, t->get_data_type(), span_of(*t), rng);
    h.resize(bytes, 0);
    ASSERT_EQ(gpu().api->memcpy_htod(o.dev.at(uid)->ptr(), h.data(), bytes), CUDA_SUCCESS);
  }
  poison(o);
}

// Captures one execute of `plan` on `pack` (over o's buffers), then replays it
// `rounds` times on new contents, each checked against the reference of `g`.
void capture_and_replay(const CompiledPlan& plan, const VariantPack& pack, const OpGraph& g, const GemmCase& c,
                        Operands& o, std::mt19937& rng, const std::string& what, int rounds = 3) {
  gpu_testing::CapturedGraph cg;
  const Status captured = cg.capture(*gpu().api, gpu().stream, [&] { return plan.execute(pack, device_ec()); });
  ASSERT_TRUE(captured.is_good()) << what << ": " << captured.to_string();
  // Capturing ran nothing: the output still holds its poison.
  std::vector<unsigned char> got(o.host.at(o.out_uid).size());
  ASSERT_EQ(gpu().api->ctx_synchronize(), CUDA_SUCCESS);
  ASSERT_EQ(gpu().api->memcpy_dtoh(got.data(), o.dev.at(o.out_uid)->ptr(), got.size()), CUDA_SUCCESS);
  EXPECT_EQ(got, std::vector<unsigned char>(got.size(), 0xFF)) << what << ": capture executed the kernel";
  for (int r = 0; r < rounds; ++r) {
    refill(g, o, rng);
    ASSERT_TRUE(cg.launch(gpu().stream).is_good());
    ASSERT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
    EXPECT_EQ(bad_elements(c, reference_out(g, o), o, what + " replay " + std::to_string(r)), 0u);
  }
}

class GemmGpuCapture : public GemmGpuFixture {};

}  // namespace

TEST_F(GemmGpuCapture, CapturedExecuteReplaysOnNewContents) {
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  struct Config {
    std::string name;
    Knobs knobs;
    bool eager_first;  // split-K: the stream's scratch slot is allocated by an eager execute
  };
  std::vector<Config> configs = {{"v1 128x128", gemm::knobs_of(gemm::GemmConfig{}), false}};
  if (gpu().props.major == 9) {
    configs.push_back({"v2 128x128", v2_knobs(128, 1, false), false});
    configs.push_back({"v2 128x128 cluster 2", v2_knobs(128, 1, false, 0, 2), false});
    configs.push_back({"v2 128x128 split 3", v2_knobs(128, 3, false), true});
    configs.push_back({"v2 128x128 stream-K", v2_knobs(128, 1, false, 0, 1, 1), true});
  }
  const GemmCase c{1, 520, 776, 1032, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  for (const Config& cfg : configs) {
    OpGraph g = build_case(c);
    ASSERT_TRUE(g.validate().is_good());
    auto plan = plan_for(*engine, g, cfg.knobs);
    ASSERT_TRUE(plan.is_good()) << cfg.name << ": " << plan.status().message();
    Operands o;
    ASSERT_TRUE(make_operands(*gpu().api, g, rng, o).is_good());
    const VariantPack pack = pack_of(o);
    if (cfg.eager_first) {
      ASSERT_TRUE((*plan)->execute(pack, device_ec()).is_good());
      ASSERT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
      poison(o);
    }
    capture_and_replay(**plan, pack, g, c, o, rng, " " + cfg.name);
  }
}

TEST_F(GemmGpuCapture, CapturedOverriddenExecuteKeepsTheCallsExtents) {
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  const GemmCase declared{1, 1024, 1024, 512, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "relu"}};
  OpGraph g = build_case(declared);
  ASSERT_TRUE(g.validate().is_good());
  const Knobs knobs = gpu().props.major == 9 ? v2_knobs(128, 1, false) : gemm::knobs_of(gemm::GemmConfig{});
  auto plan = plan_for(*engine, g, knobs);
  ASSERT_TRUE(plan.is_good()) << plan.status().message();
  GemmCase now = declared;
  now.m = 136, now.n = 264, now.k = 200;
  OpGraph gs = build_case(now);
  ASSERT_TRUE(gs.validate().is_good());
  Operands o;
  ASSERT_TRUE(make_operands(*gpu().api, gs, rng, o).is_good());
  VariantPack pack = pack_of(o);
  for (const auto& t : gs.tensors())
    if (!t->get_is_virtual() && !t->get_is_pass_by_value())
      pack.override_shape(t->get_uid(), t->get_dim(), t->get_stride());
  capture_and_replay(**plan, pack, gs, now, o, rng, " overridden to " + describe(now));
}
