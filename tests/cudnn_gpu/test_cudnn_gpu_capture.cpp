// CUDA-graph-safe execute on the cuDNN engine family (part of test_cudnn_gpu; run
// on the H200 only; docs/dynamic_shapes.md, "Capture"): SDPA forward, plain and
// with ALiBi (whose slopes the plan now holds in a device buffer written once at
// build, instead of a per-execute host-to-device copy), planned for the device;
// the first cudnn plan that builds is executed once eagerly (the thread's cuDNN
// handle and the variant pack are made then), then one execute is captured into
// a CUDA graph on a non-blocking stream (thread-local mode, tests/gpu/capture.h)
// and replayed on NEW random contents of the same device buffers, each replay's
// outputs (poisoned first) against the reference engine on those contents.
// Tolerances as test_cudnn_gpu_sdpa.cpp: bf16 O 2e-2, FLOAT Stats 5e-3.
#include "cudnn_gpu/sdpa_gpu_util.h"

#include "gpu/capture.h"
#include "gpu/stream_handle.h"
#include "runtime/device.h"

using namespace opgraph;
using namespace sdpa_gpu;

namespace {

class CudnnGpuCapture : public ::testing::TestWithParam<Spec> {};

TEST_P(CudnnGpuCapture, CapturedExecuteReplaysOnNewContents) {
  const Spec& s = GetParam();
  ASSERT_NE(drv(), nullptr) << "no CUDA device";
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good()) << props.status().to_string();
  std::mt19937 rng(std::random_device{}());
  const Data first = draw(s, rng);
  Graph gd;
  Built bd = build_forward(gd, s, first);
  gd.set_device_properties(props.value());
  ASSERT_TRUE(gd.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_good());
  std::int64_t bi = -1;
  for (std::int64_t i = 0; i < gd.get_execution_plan_count() && bi < 0; ++i)
    if (gd.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) == 0 && gd.build_plan_at_index(i).is_good()) bi = i;
  ASSERT_GE(bi, 0) << "no cudnn plan built";
  // Device buffers for every input and output; the workspace.
  VariantPack pd;
  std::vector<std::unique_ptr<DevMem>> in_mem, out_mem;
  for (const auto& [t, bytes] : bd.inputs) {
    in_mem.push_back(std::make_unique<DevMem>(bytes.size()));
    ASSERT_EQ(drv()->memcpy_htod(in_mem.back()->ptr(), bytes.data(), bytes.size()), CUDA_SUCCESS);
    pd.set(t->get_uid(), in_mem.back()->data());
  }
  for (const auto& t : bd.outputs) {
    out_mem.push_back(std::make_unique<DevMem>(bytes_of(*t) + 4));
    pd.set(t->get_uid(), out_mem.back()->data());
  }
  auto ws = gd.get_workspace_size_plan_at_index(bi);
  ASSERT_TRUE(ws.is_good());
  DevMem wsm(static_cast<std::size_t>(ws.value()));
  CUstream stream = nullptr;
  ASSERT_EQ(drv()->stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  gpu_testing::StreamHandle handle(stream, &props.value());
  const Workspace w{wsm.data(), ws.value()};
  // One eager execute: the thread's cuDNN handle and the finalized variant pack.
  ASSERT_TRUE(gd.execute_plan_at_index(pd, w, bi, &handle).is_good());
  ASSERT_EQ(drv()->stream_synchronize(stream), CUDA_SUCCESS);
  auto poison = [&] {
    for (std::size_t i = 0; i < bd.outputs.size(); ++i)
      ASSERT_EQ(drv()->memset_d32(out_mem[i]->ptr(), 0xFFFFFFFFu, (bytes_of(*bd.outputs[i]) + 3) / 4), CUDA_SUCCESS);
    ASSERT_EQ(drv()->ctx_synchronize(), CUDA_SUCCESS);
  };
  poison();
  gpu_testing::CapturedGraph cg;
  const Status captured = cg.capture(*drv(), stream, [&] { return gd.execute_plan_at_index(pd, w, bi, &handle); });
  ASSERT_TRUE(captured.is_good()) << s.name << " on " << gd.get_plan_name_at_index(bi).value() << ": "
                                  << captured.to_string();
  for (int round = 0; round < 3; ++round) {
    // New contents of the same buffers, and the reference on them (a graph built identically).
    const Data dt = draw(s, rng);
    Graph gh;
    Built bh = build_forward(gh, s, dt);
    ASSERT_EQ(bh.inputs.size(), bd.inputs.size());
    for (std::size_t i = 0; i < bh.inputs.size(); ++i)
      ASSERT_EQ(drv()->memcpy_htod(in_mem[i]->ptr(), bh.inputs[i].second.data(), bh.inputs[i].second.size()),
                CUDA_SUCCESS);
    poison();
    ASSERT_TRUE(cg.launch(stream).is_good());
    ASSERT_EQ(drv()->stream_synchronize(stream), CUDA_SUCCESS);
    const auto want = run_reference(gh, bh);
    for (std::size_t i = 0; i < bd.outputs.size(); ++i) {
      const Tensor& t = *bd.outputs[i];
      std::vector<unsigned char> got(bytes_of(t));
      ASSERT_EQ(drv()->memcpy_dtoh(got.data(), out_mem[i]->ptr(), got.size()), CUDA_SUCCESS);
      const double tol = t.get_data_type() == DataType::BFLOAT16 ? 2e-2 : 5e-3;
      const std::size_t n = got.size() / (t.get_data_type() == DataType::BFLOAT16 ? 2 : 4);
      std::size_t bad = 0;
      double worst = 0;
      for (std::size_t k = 0; k < n; ++k) {
        const double g = value_at(got, t.get_data_type(), static_cast<std::int64_t>(k)),
                     x = value_at(want[i], t.get_data_type(), static_cast<std::int64_t>(k));
        const double err = std::fabs(g - x);
        if (!(err <= tol + tol * std::fabs(x))) ++bad;
        if (std::isfinite(err)) worst = std::max(worst, err);
      }
      EXPECT_EQ(bad, 0u) << s.name << " replay " << round << ": output '" << t.get_name() << "' " << bad << "/" << n
                         << " off (max err " << worst << ")";
    }
  }
  EXPECT_EQ(drv()->stream_destroy(stream), CUDA_SUCCESS);
}

std::vector<Spec> capture_specs() {
  Spec plain;
  plain.name = "capture_fwd_causal";
  plain.causal = true;
  Spec alibi;
  alibi.name = "capture_fwd_alibi_causal";
  alibi.alibi = alibi.causal = true;
  Spec composite = alibi;
  composite.name = "capture_fwd_alibi_composite";
  composite.causal = false;
  composite.impl = "COMPOSITE";
  return {plain, alibi, composite};
}

INSTANTIATE_TEST_SUITE_P(Sdpa, CudnnGpuCapture, ::testing::ValuesIn(capture_specs()),
                         [](const ::testing::TestParamInfo<Spec>& i) { return i.param.name; });

}  // namespace
