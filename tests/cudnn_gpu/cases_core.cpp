// tests/cudnn_gpu/cases_core.cpp — the core GPU cases of test_cudnn_gpu: matmul
// (+ bias/relu, + row-sum reduction), pointwise at ranks 2..5 with odd extents
// and broadcasts, standalone reductions, the layer / rms / ada-layer norms
// forward and backward, convolutions (NHWC, one per graph). Expectations are
// what cuDNN 9.14 did on the H200 (bench/results/2026-11-30-cudnn-h200.txt).
// Also linked into the CI suite test_cudnn, which checks that every case
// validates and lowers (or declines in the lowering) as expected without a GPU.
#include <string>

#include "cudnn_gpu/gpu_harness.h"

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
