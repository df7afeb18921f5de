// tests/cudnn_gpu/test_cudnn_gpu.cpp — the cuDNN engine family on a GPU (built
// with -DOPGRAPH_GPU_TESTS=ON; run by bench/cudnn_h200.sh, never on CI).
//
// The core cases (matmul, pointwise at ranks 2..4 and odd extents, reductions,
// the norms, convolutions one per graph) run through the harness
// (gpu_harness.h): each either runs on its first cudnn plan and matches the
// reference, or — where cuDNN 9.14 on the H200 has no engine or the lowering
// declines — must decline cleanly with the named reason. Also: a build error
// names cuDNN's status, the step and the engine; bf16 matmul timing
// (CudnnGpuBench.MatmulBf16, CUDA events, median of 20, "RESULT ..." lines).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cudnn_gpu/gpu_harness.h"
#include "runtime/device.h"

using namespace opgraph;

namespace cudnn_gpu {

std::vector<Case> core_cases() {
  std::vector<Case> cs;
  cs.push_back({"matmul_f32", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto a = g.tensor({2, 64, 48}, DataType::FLOAT, "A");
                  auto b = g.tensor({2, 48, 40}, DataType::FLOAT, "B");
                  return Io{{a, b}, {out(g.matmul(a, b), "C")}};
                }, 2e-2, 2e-2});  // TF32 allowed
  cs.push_back({"matmul_bias_relu", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto a = g.tensor({1, 128, 64}, DataType::FLOAT, "A");
                  auto b = g.tensor({1, 64, 96}, DataType::FLOAT, "B");
                  auto bias = g.tensor({1, 1, 96}, DataType::FLOAT, "bias");
                  return Io{{a, b, bias}, {out(g.relu(g.add(g.matmul(a, b), bias)), "Y")}};
                }, 2e-2, 2e-2});
  cs.push_back({"matmul_rowsum", [](Graph& g) {  // matmul -> reduction ADD over N (fused)
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto a = g.tensor({1, 64, 32}, DataType::FLOAT, "A");
                  auto b = g.tensor({1, 32, 48}, DataType::FLOAT, "B");
                  auto r = g.reduction(g.matmul(a, b), Attributes().set("mode", "ADD"));
                  r->set_dim({1, 64, 1});
                  return Io{{a, b}, {out(r, "R")}};
                }, 1e-1, 2e-2});
  // Binary pointwise at rank 3, 2 (odd extents) and with a broadcast operand.
  for (const char* mode : {"ADD", "MUL", "SUB", "MAX", "DIV"})
    cs.push_back({std::string("pointwise_") + mode, [mode](Graph& g) {
                    g.set_compute_data_type(DataType::FLOAT);
                    auto x = g.tensor({4, 33, 17}, DataType::FLOAT, "x");
                    auto y = g.tensor({4, 33, 17}, DataType::FLOAT, "y");
                    return Io{{x, y}, {out(g.pointwise(x, y, nullptr, Attributes().set("mode", mode)), "z")}};
                  }});
  cs.push_back({"pointwise_ADD_2d_bcast", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT);
                  auto x = g.tensor({9, 257}, DataType::FLOAT, "x");
                  auto y = g.tensor({1, 257}, DataType::FLOAT, "y");
                  return Io{{x, y}, {out(g.add(x, y), "z")}};
                }});
  // Unary forward modes on 2-D (the H200 failure: rank 2 now goes down as 3), 3-D and 4-D.
  const std::vector<std::vector<std::int64_t>> shapes = {{8, 257}, {3, 5, 129}, {2, 3, 7, 33}};
  for (const char* mode : {"GELU_FWD", "SIGMOID_FWD", "TANH_FWD", "EXP", "ABS", "NEG", "SWISH_FWD", "ELU_FWD"})
    for (const auto& dims : shapes) {
      if (dims.size() != 2 && std::string(mode) != "GELU_FWD" && std::string(mode) != "NEG") continue;
      cs.push_back({std::string("pointwise_") + mode + "_" + std::to_string(dims.size()) + "d", [mode, dims](Graph& g) {
                      g.set_compute_data_type(DataType::FLOAT);
                      auto x = g.tensor(dims, DataType::FLOAT, "x");
                      return Io{{x}, {out(g.pointwise(x, nullptr, nullptr, Attributes().set("mode", mode)), "y")}};
                    }});
    }
  // Row-major 4-D / 5-D pointwise graphs go down channels-last (lowering.h); a broadcast bias too.
  // A broadcast per-channel bias on a row-major 4-D tensor (add + relu): cuDNN 9.14 lists no
  // engine for it, permuted or not (H200, 2026-11-30).
  Case bias4{"pointwise_ADD_4d_nchw_bias", [](Graph& g) {
               g.set_compute_data_type(DataType::FLOAT);
               auto x = g.tensor({2, 16, 9, 9}, DataType::FLOAT, "x");
               auto b = g.tensor({16, 1, 1}, DataType::FLOAT, "bias");
               return Io{{x, b}, {out(g.relu(g.add(x, b)), "y")}};
             }};
  bias4.expect = Expect::DECLINES;
  bias4.decline_note = "no engine config";
  cs.push_back(bias4);
  cs.push_back({"pointwise_TANH_FWD_5d", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT);
                  auto x = g.tensor({2, 3, 4, 5, 7}, DataType::FLOAT, "x");
                  return Io{{x}, {out(g.pointwise(x, nullptr, nullptr, Attributes().set("mode", "TANH_FWD")), "y")}};
                }});
  for (const char* mode : {"RELU_BWD", "GELU_BWD", "SIGMOID_BWD"})
    for (const auto& dims : std::vector<std::vector<std::int64_t>>{{8, 129}, {3, 7, 65}})
      cs.push_back({std::string("pointwise_") + mode + "_" + std::to_string(dims.size()) + "d", [mode, dims](Graph& g) {
                      g.set_compute_data_type(DataType::FLOAT);
                      auto dy = g.tensor(dims, DataType::FLOAT, "dy");
                      auto x = g.tensor(dims, DataType::FLOAT, "x");
                      return Io{{dy, x}, {out(g.pointwise(dy, x, nullptr, Attributes().set("mode", mode)), "dx")}};
                    }});
  // Standalone reductions. cuDNN 9.14 (H200, 2026-11-30) runs ADD / MAX / AMAX of a 4-D NHWC
  // tensor to its channels; it lists no engine for a MUL reduction ("Unsupported reduction op"),
  // for a reduction over the innermost axis, nor for a 3-D one keeping the innermost axis
  // ("!is_NHWC"): those decline.
  for (const char* mode : {"ADD", "MAX", "AMAX", "MUL"}) {
    const bool runs = std::string(mode) != "MUL";
    Case nhwc{std::string("reduction_") + mode + "_nhwc_per_channel", [mode](Graph& g) {
                g.set_compute_data_type(DataType::FLOAT);
                auto x = g.tensor({4, 16, 6, 6}, DataType::FLOAT, "x", {576, 1, 96, 16});
                auto y = g.reduction(x, Attributes().set("mode", mode));
                out(y, "y")->set_dim({1, 16, 1, 1}).set_stride({16, 1, 16, 16});
                return Io{{x}, {y}};
              }, 1e-4, 1e-4};
    Case rows{std::string("reduction_") + mode + "_rows", [mode](Graph& g) {
                g.set_compute_data_type(DataType::FLOAT);
                auto x = g.tensor({2, 64, 32}, DataType::FLOAT, "x");
                auto y = g.reduction(x, Attributes().set("mode", mode));
                out(y, "y")->set_dim({2, 64, 1});
                return Io{{x}, {y}};
              }, 1e-4, 1e-4};
    Case inner{std::string("reduction_") + mode + "_keep_inner_3d", [mode](Graph& g) {
                 g.set_compute_data_type(DataType::FLOAT);
                 auto x = g.tensor({16, 64, 8}, DataType::FLOAT, "x");
                 auto y = g.reduction(x, Attributes().set("mode", mode));
                 out(y, "y")->set_dim({1, 1, 8});
                 return Io{{x}, {y}};
               }, 1e-3, 1e-4};
    rows.expect = Expect::DECLINES;
    rows.decline_note = "no engine config";
    for (Case* c : {&nhwc, &inner})
      if (!runs || c == &inner) {
        c->expect = Expect::DECLINES;
        c->decline_note = "no engine config";
      }
    cs.push_back(nhwc);
    cs.push_back(rows);
    cs.push_back(inner);
  }
  auto norm_inputs = [](Graph& g, std::int64_t n, std::int64_t c) {
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto x = g.tensor({n, c, 1, 1}, DataType::FLOAT, "X");
    auto s = g.tensor({1, c, 1, 1}, DataType::FLOAT, "scale");
    auto b = g.tensor({1, c, 1, 1}, DataType::FLOAT, "bias");
    return std::array<TensorPtr, 3>{x, s, b};
  };
  cs.push_back({"layernorm_train", [=](Graph& g) {
                  auto [x, s, b] = norm_inputs(g, 64, 256);
                  auto eps = g.tensor_scalar(1e-5, DataType::FLOAT);
                  auto r = g.layernorm(x, s, b, eps, Attributes().set("forward_phase", "TRAINING"));
                  return Io{{x, s, b}, {out(r[0], "Y"), out(r[1], "mean"), out(r[2], "inv_var")}};
                }, 1e-4, 1e-3});
  cs.push_back({"rmsnorm_train", [=](Graph& g) {
                  auto [x, s, b] = norm_inputs(g, 64, 256);
                  (void)b;
                  auto eps = g.tensor_scalar(1e-5, DataType::FLOAT);
                  auto r = g.rmsnorm(x, s, eps, Attributes().set("forward_phase", "TRAINING"));
                  return Io{{x, s}, {out(r[0], "Y"), out(r[1], "inv_var")}};
                }, 1e-4, 1e-3});
  cs.push_back({"layernorm_backward", [=](Graph& g) {
                  auto [x, s, b] = norm_inputs(g, 32, 128);
                  (void)b;
                  auto dy = g.tensor({32, 128, 1, 1}, DataType::FLOAT, "dy");
                  auto mean = g.tensor({32, 1, 1, 1}, DataType::FLOAT, "mean");
                  auto iv = g.tensor({32, 1, 1, 1}, DataType::FLOAT, "inv_var");
                  auto r = g.layernorm_backward(dy, x, s, mean, iv);
                  return Io{{x, s, dy, mean, iv}, {out(r[0], "dx"), out(r[1], "dscale"), out(r[2], "dbias")}};
                }, 1e-3, 1e-3});
  cs.push_back({"rmsnorm_backward", [=](Graph& g) {
                  auto [x, s, b] = norm_inputs(g, 32, 128);
                  (void)b;
                  auto dy = g.tensor({32, 128, 1, 1}, DataType::FLOAT, "dy");
                  auto iv = g.tensor({32, 1, 1, 1}, DataType::FLOAT, "inv_var");
                  auto r = g.rmsnorm_backward(dy, x, s, iv);
                  return Io{{x, s, dy, iv}, {out(r[0], "dx"), out(r[1], "dscale"), out(r[2], "dbias")}};
                }, 1e-3, 1e-3});
  // adaLN as cudnn-frontend's sample declares it: X [B, S, D], per-sample scale / bias [B, 1, D].
  cs.push_back({"adalayernorm_train_bsd", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto x = g.tensor({4, 64, 128}, DataType::FLOAT, "X");
                  auto s = g.tensor({4, 1, 128}, DataType::FLOAT, "scale");
                  auto b = g.tensor({4, 1, 128}, DataType::FLOAT, "bias");
                  auto eps = g.tensor_scalar(1e-5, DataType::FLOAT);
                  auto r = g.adalayernorm(x, s, b, eps, Attributes().set("forward_phase", "TRAINING"));
                  return Io{{x, s, b}, {out(r[0], "Y"), out(r[1], "mean"), out(r[2], "inv_var")}};
                }, 1e-4, 1e-3});
  cs.push_back({"adalayernorm_backward_bsd", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto x = g.tensor({4, 64, 128}, DataType::FLOAT, "X");
                  auto dy = g.tensor({4, 64, 128}, DataType::FLOAT, "dy");
                  auto s = g.tensor({4, 1, 128}, DataType::FLOAT, "scale");
                  auto mean = g.tensor({4, 64, 1}, DataType::FLOAT, "mean");
                  auto iv = g.tensor({4, 64, 1}, DataType::FLOAT, "inv_var");
                  auto r = g.adalayernorm_backward(dy, x, s, mean, iv);
                  return Io{{x, dy, s, mean, iv}, {out(r[0], "dx"), out(r[1], "dscale"), out(r[2], "dbias")}};
                }, 1e-3, 1e-3});
  // Convolutions, NHWC, one per graph; dgrad + wgrad in one graph declines in the lowering.
  cs.push_back({"conv_fprop_nhwc", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto x = g.tensor({2, 16, 10, 10}, DataType::FLOAT, "X", {1600, 1, 160, 16});
                  auto w = g.tensor({32, 16, 3, 3}, DataType::FLOAT, "W", {144, 1, 48, 16});
                  auto y = g.conv_fprop(x, w, Attributes().set("padding", std::vector<std::int64_t>{1, 1}));
                  return Io{{x, w}, {out(y, "Y")}};
                }, 3e-2, 2e-2});  // TF32 allowed
  cs.push_back({"conv_dgrad_nhwc", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto dy = g.tensor({2, 8, 6, 6}, DataType::FLOAT, "dY", {288, 1, 48, 8});
                  auto w = g.tensor({8, 4, 3, 3}, DataType::FLOAT, "W", {36, 1, 12, 4});
                  auto dx = out(g.conv_dgrad(dy, w), "dX");
                  dx->set_dim({2, 4, 8, 8}).set_stride({256, 1, 32, 4});
                  return Io{{dy, w}, {dx}};
                }, 3e-2, 2e-2});
  cs.push_back({"conv_wgrad_nhwc", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto dy = g.tensor({2, 8, 6, 6}, DataType::FLOAT, "dY", {288, 1, 48, 8});
                  auto x = g.tensor({2, 4, 8, 8}, DataType::FLOAT, "X", {256, 1, 32, 4});
                  auto dw = out(g.conv_wgrad(dy, x), "dW");
                  dw->set_dim({8, 4, 3, 3}).set_stride({36, 1, 12, 4});
                  return Io{{dy, x}, {dw}};
                }, 3e-2, 2e-2});
  Case both{"conv_dgrad_wgrad_one_graph", [](Graph& g) {
              auto dy = g.tensor({2, 8, 6, 6}, DataType::FLOAT, "dY", {288, 1, 48, 8});
              auto w = g.tensor({8, 4, 3, 3}, DataType::FLOAT, "W", {36, 1, 12, 4});
              auto x = g.tensor({2, 4, 8, 8}, DataType::FLOAT, "X", {256, 1, 32, 4});
              auto dx = out(g.conv_dgrad(dy, w), "dX");
              dx->set_dim({2, 4, 8, 8});
              auto dw = out(g.conv_wgrad(dy, x), "dW");
              dw->set_dim({8, 4, 3, 3});
              return Io{{dy, w, x}, {dx, dw}};
            }};
  both.expect = Expect::DECLINES;
  both.decline_note = "one convolution per operation graph";
  cs.push_back(both);
  return cs;
}

}  // namespace cudnn_gpu

namespace {

using namespace cudnn_gpu;

void run_all(const std::vector<Case>& cases, const char* title) {
  std::vector<Outcome> outcomes;
  for (const Case& c : cases) outcomes.push_back(run_case(c));
  std::printf("---- %s: %zu cases\n", title, outcomes.size());
  for (const auto& o : outcomes) std::printf("CASE %-34s %s\n", o.name.c_str(), o.what.substr(0, 240).c_str());
}

TEST(CudnnGpu, WhichLibcudnn) {
  auto api = runtime::cudnn();
  ASSERT_TRUE(api.is_good()) << api.status().to_string();
  std::printf("LIBCUDNN version %zu path %s\n", api.value()->version, api.value()->path.c_str());
}

TEST(CudnnGpu, CoreFamiliesMatchTheReferenceOrDecline) {
  ASSERT_NE(driver(), nullptr) << "no CUDA device";
  run_all(core_cases(), "core");
}

TEST(CudnnGpu, OpFamiliesMatchTheReferenceOrDecline) {
  ASSERT_NE(driver(), nullptr) << "no CUDA device";
  run_all(op_cases(), "ops");
}

// A config cuDNN never offered: building it fails at the BUILD step with cuDNN's
// status name and the engine in the message.
TEST(CudnnGpu, BuildErrorNamesStatusStepAndEngine) {
  ASSERT_NE(driver(), nullptr);
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good());
  Graph g;
  auto x = g.tensor({1, 8, 64}, DataType::FLOAT, "x");
  out(g.relu(x), "y");
  g.set_device_properties(props.value());
  ASSERT_TRUE(g.create_execution_plan(9999, {}).is_good());
  Status s = g.build_plan_at_index(0);
  ASSERT_TRUE(s.is_bad());
  const std::string m = s.message();
  std::printf("build error: %s\n", s.to_string().c_str());
  EXPECT_NE(m.find("CUDNN_STATUS_"), std::string::npos) << m;
  EXPECT_NE(m.find("cudnn build"), std::string::npos) << m;
  EXPECT_NE(m.find("engine 9999"), std::string::npos) << m;
  EXPECT_NE(m.find("op 'pointwise'"), std::string::npos) << m;  // the graph's operations
}

TEST(CudnnGpuBench, MatmulBf16) {
  const auto* d = driver();
  ASSERT_NE(d, nullptr);
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good());
  for (std::int64_t n : {4096, 8192}) {
    Graph g;
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto a = g.tensor({1, n, n}, DataType::BFLOAT16, "A");
    auto b = g.tensor({1, n, n}, DataType::BFLOAT16, "B");
    auto c = g.matmul(a, b);
    c->set_output(true).set_name("C").set_data_type(DataType::BFLOAT16);
    g.set_device_properties(props.value());
    ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
    std::int64_t bi = -1;
    for (std::int64_t i = 0; i < g.get_execution_plan_count() && bi < 0; ++i)
      if (g.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) == 0) bi = i;
    ASSERT_GE(bi, 0);
    ASSERT_TRUE(g.build_plan_at_index(bi).is_good());
    std::size_t bytes = static_cast<std::size_t>(n * n * 2);
    DevMem ma(bytes), mb(bytes), mc(bytes);
    d->memset_d32(ma.p, 0x3F803F80u, bytes / 4);  // bf16 1.0 pairs
    d->memset_d32(mb.p, 0x3F003F00u, bytes / 4);  // bf16 0.5 pairs
    std::int64_t ws = g.get_workspace_size_plan_at_index(bi).value();
    DevMem mw(static_cast<std::size_t>(ws));
    VariantPack p;
    p.set(a->get_uid(), ma.ptr()).set(b->get_uid(), mb.ptr()).set(c->get_uid(), mc.ptr());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(g.execute_plan_at_index(p, {mw.ptr(), ws}, bi, nullptr).is_good());
    ASSERT_EQ(d->ctx_synchronize(), CUDA_SUCCESS);
    // Every element of C is n * 0.5 (exact in bf16 for powers of two): the run computed the product.
    std::vector<std::uint16_t> hc(16);
    d->memcpy_dtoh(hc.data(), mc.p, 32);
    float c0;
    std::uint32_t u = std::uint32_t{hc[0]} << 16;
    std::memcpy(&c0, &u, 4);
    EXPECT_EQ(c0, static_cast<float>(n) * 0.5f);
    std::vector<double> ms;
    ASSERT_TRUE(d->event_create && d->event_record && d->event_synchronize && d->event_elapsed_time)
        << "driver has no event functions";
    for (int it = 0; it < 20; ++it) {
      CUevent e0, e1;
      d->event_create(&e0, 0);
      d->event_create(&e1, 0);
      d->event_record(e0, nullptr);
      ASSERT_TRUE(g.execute_plan_at_index(p, {mw.ptr(), ws}, bi, nullptr).is_good());
      d->event_record(e1, nullptr);
      d->event_synchronize(e1);
      float t = 0;
      d->event_elapsed_time(&t, e0, e1);
      ms.push_back(t);
      d->event_destroy(e0);
      d->event_destroy(e1);
    }
    std::sort(ms.begin(), ms.end());
    double med = ms[ms.size() / 2];
    double tflops = 2.0 * double(n) * n * n / (med * 1e-3) / 1e12;
    std::printf("RESULT matmul_bf16 n=%lld plan=%s median_ms=%.4f tflops=%.1f\n", static_cast<long long>(n),
                g.get_plan_name_at_index(bi).value().c_str(), med, tflops);
  }
}

}  // namespace
