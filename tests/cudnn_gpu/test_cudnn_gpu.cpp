// tests/cudnn_gpu/test_cudnn_gpu.cpp — the cuDNN engine family on a GPU (built
// with -DOPGRAPH_GPU_TESTS=ON; run by bench/cudnn_h200.sh, never on CI).
//
// Every lowered op family is planned for the real device, the first backend
// plan ("cudnn_eng<N>", engine id < 10000) is built and executed on device
// buffers (allocated and copied through the runtime's driver table; outputs
// poisoned with NaN first), and every output is compared with the CPU
// reference engine run on the same fresh random inputs. A second graph built
// identically is planned without a device, so the reference serves it.
// Tolerances: |got - want| <= atol + rtol * |want| per case (below).
// CudnnGpuBench.MatmulBf16 times bf16 matmuls through the cudnn plan (CUDA
// events, median of 20) and prints "RESULT ..." lines for the script's table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

#include "opgraph/graph.h"
#include "runtime/device.h"
#include "runtime/loader.h"

using namespace opgraph;

namespace {

struct Io {
  std::vector<TensorPtr> inputs;   // filled with random floats (by-value scalars excluded)
  std::vector<TensorPtr> outputs;  // compared
};
using Builder = std::function<Io(Graph&)>;

struct Case {
  std::string name;
  Builder build;
  double atol, rtol;
};

const runtime::CudaDriverApi* driver() {
  static const runtime::CudaDriverApi* api = [] {
    auto a = runtime::cuda_driver();
    if (a.is_bad()) return static_cast<const runtime::CudaDriverApi*>(nullptr);
    const auto* d = a.value();
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    if (d->init(0) != CUDA_SUCCESS || d->device_get(&dev, 0) != CUDA_SUCCESS ||
        d->primary_ctx_retain(&ctx, dev) != CUDA_SUCCESS || d->ctx_set_current(ctx) != CUDA_SUCCESS)
      return static_cast<const runtime::CudaDriverApi*>(nullptr);
    return d;
  }();
  return api;
}

struct DevMem {
  CUdeviceptr p = 0;
  explicit DevMem(std::size_t bytes) { driver()->mem_alloc(&p, std::max<std::size_t>(bytes, 4)); }
  ~DevMem() { driver()->mem_free(p); }
  void* ptr() const { return reinterpret_cast<void*>(p); }
};

std::size_t bytes_of(const Tensor& t) { return static_cast<std::size_t>(t.element_count()) * bits_of(t.get_data_type()) / 8; }

// The index of the first backend plan, or -1.
std::int64_t first_backend_plan(const Graph& g) {
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i)
    if (g.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) == 0) return i;
  return -1;
}

void run_case(const Case& c) {
  SCOPED_TRACE(c.name);
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good()) << props.status().to_string();
  ASSERT_NE(driver(), nullptr);
  // Device graph: planned for the device, run on the first backend plan.
  Graph gd;
  Io iod = c.build(gd);
  gd.set_device_properties(props.value());
  Status ps = gd.create_execution_plans({HeurMode::A, HeurMode::FALLBACK});
  ASSERT_TRUE(ps.is_good()) << ps.to_string();
  // The first backend plan that builds (a config cuDNN lists may still refuse to build).
  std::int64_t bi = -1, refused = 0;
  std::string first_refusal;
  for (std::int64_t i = 0; i < gd.get_execution_plan_count() && bi < 0; ++i) {
    if (gd.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) != 0) continue;
    Status bs = gd.build_plan_at_index(i);
    if (bs.is_good()) bi = i;
    else if (refused++ == 0) first_refusal = bs.to_string();
  }
  ASSERT_GE(bi, 0) << "no cudnn plan built (" << refused << " refused; first: " << first_refusal
                   << "); plan 0 is " << gd.get_plan_name_at_index(0).value();
  if (refused) std::printf("%s: %lld backend plan(s) refused to build first: %s\n", c.name.c_str(),
                           static_cast<long long>(refused), first_refusal.c_str());
  // Host graph: the reference.
  Graph gh;
  Io ioh = c.build(gh);
  ASSERT_TRUE(gh.create_execution_plans({HeurMode::FALLBACK}).is_good());
  ASSERT_EQ(gh.get_plan_name_at_index(0).value(), "reference[]");
  ASSERT_TRUE(gh.build_plans().is_good());

  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<std::vector<float>> host_in(iod.inputs.size());
  std::vector<std::unique_ptr<DevMem>> dev;
  VariantPack pd, ph;
  for (std::size_t i = 0; i < iod.inputs.size(); ++i) {
    ASSERT_EQ(iod.inputs[i]->get_data_type(), DataType::FLOAT);
    host_in[i].resize(static_cast<std::size_t>(iod.inputs[i]->element_count()));
    for (auto& x : host_in[i]) x = dist(rng);
    if (iod.inputs[i]->get_name().find("var") != std::string::npos)
      for (auto& x : host_in[i]) x = std::fabs(x) + 0.5f;  // positive (inverse) variances
    dev.push_back(std::make_unique<DevMem>(bytes_of(*iod.inputs[i])));
    driver()->memcpy_htod(dev.back()->p, host_in[i].data(), host_in[i].size() * 4);
    pd.set(iod.inputs[i]->get_uid(), dev.back()->ptr());
    ph.set(ioh.inputs[i]->get_uid(), host_in[i].data());
  }
  std::vector<std::vector<float>> want(iod.outputs.size()), got(iod.outputs.size());
  std::vector<CUdeviceptr> out_ptrs;
  for (std::size_t i = 0; i < iod.outputs.size(); ++i) {
    ASSERT_EQ(iod.outputs[i]->get_data_type(), DataType::FLOAT) << iod.outputs[i]->get_name();
    std::size_t n = static_cast<std::size_t>(iod.outputs[i]->element_count());
    want[i].assign(n, std::nanf(""));
    got[i].assign(n, 0.f);
    dev.push_back(std::make_unique<DevMem>(n * 4));
    driver()->memset_d32(dev.back()->p, 0xFFFFFFFFu, n);  // poison: NaN
    out_ptrs.push_back(dev.back()->p);
    pd.set(iod.outputs[i]->get_uid(), dev.back()->ptr());
    ph.set(ioh.outputs[i]->get_uid(), want[i].data());
  }
  auto ws = gd.get_workspace_size_plan_at_index(bi);
  ASSERT_TRUE(ws.is_good());
  DevMem wsm(static_cast<std::size_t>(ws.value()));
  Status es = gd.execute_plan_at_index(pd, Workspace{wsm.ptr(), ws.value()}, bi, nullptr);
  ASSERT_TRUE(es.is_good()) << es.to_string();
  ASSERT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
  ASSERT_TRUE(gh.execute(ph).is_good());
  std::printf("%-28s ran on %s (plan %lld of %lld), workspace %lld B\n", c.name.c_str(),
              gd.get_plan_name_at_index(bi).value().c_str(), static_cast<long long>(bi),
              static_cast<long long>(gd.get_execution_plan_count()), static_cast<long long>(ws.value()));
  for (std::size_t i = 0; i < iod.outputs.size(); ++i) {
    ASSERT_EQ(driver()->memcpy_dtoh(got[i].data(), out_ptrs[i], got[i].size() * 4), CUDA_SUCCESS);
    std::size_t bad = 0;
    double worst = 0;
    for (std::size_t k = 0; k < got[i].size(); ++k) {
      double w = want[i][k], v = got[i][k];
      double err = std::fabs(v - w);
      if (!(err <= c.atol + c.rtol * std::fabs(w))) ++bad;
      if (std::isfinite(err)) worst = std::max(worst, err);
    }
    EXPECT_EQ(bad, 0u) << "output '" << iod.outputs[i]->get_name() << "': " << bad << " of " << got[i].size()
                       << " elements off (max err " << worst << ")";
  }
}

TensorPtr out(TensorPtr t, const char* name) {
  t->set_output(true).set_name(name).set_data_type(DataType::FLOAT);
  return t;
}

std::vector<Case> cases() {
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
  for (const char* mode : {"ADD", "MUL", "SUB", "MAX", "DIV"})
    cs.push_back({std::string("pointwise_") + mode, [mode](Graph& g) {
                    g.set_compute_data_type(DataType::FLOAT);
                    auto x = g.tensor({4, 33, 17}, DataType::FLOAT, "x");
                    auto y = g.tensor({4, 33, 17}, DataType::FLOAT, "y");
                    return Io{{x, y}, {out(g.pointwise(x, y, nullptr, Attributes().set("mode", mode)), "z")}};
                  }, 1e-5, 1e-4});
  for (const char* mode : {"GELU_FWD", "SIGMOID_FWD", "TANH_FWD", "EXP", "ABS", "NEG", "SWISH_FWD", "ELU_FWD"})
    cs.push_back({std::string("pointwise_") + mode, [mode](Graph& g) {
                    g.set_compute_data_type(DataType::FLOAT);
                    auto x = g.tensor({8, 257}, DataType::FLOAT, "x");
                    return Io{{x}, {out(g.pointwise(x, nullptr, nullptr, Attributes().set("mode", mode)), "y")}};
                  }, 1e-5, 1e-4});
  for (const char* mode : {"RELU_BWD", "GELU_BWD", "SIGMOID_BWD"})
    cs.push_back({std::string("pointwise_") + mode, [mode](Graph& g) {
                    g.set_compute_data_type(DataType::FLOAT);
                    auto dy = g.tensor({8, 129}, DataType::FLOAT, "dy");
                    auto x = g.tensor({8, 129}, DataType::FLOAT, "x");
                    return Io{{dy, x}, {out(g.pointwise(dy, x, nullptr, Attributes().set("mode", mode)), "dx")}};
                  }, 1e-5, 1e-4});
  for (const char* mode : {"ADD", "MAX", "AMAX", "MUL"})
    cs.push_back({std::string("reduction_") + mode, [mode](Graph& g) {
                    g.set_compute_data_type(DataType::FLOAT);
                    auto x = g.tensor({16, 64, 8}, DataType::FLOAT, "x");
                    auto y = g.reduction(x, Attributes().set("mode", mode));
                    out(y, "y")->set_dim({16, 1, 8});
                    return Io{{x}, {y}};
                  }, 1e-4, 1e-4});
  auto norm_inputs = [](Graph& g, std::int64_t n, std::int64_t c, bool per_sample_scale) {
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto x = g.tensor({n, c, 1, 1}, DataType::FLOAT, "X");
    auto s = g.tensor({per_sample_scale ? n : 1, c, 1, 1}, DataType::FLOAT, "scale");
    auto b = g.tensor({per_sample_scale ? n : 1, c, 1, 1}, DataType::FLOAT, "bias");
    return std::array<TensorPtr, 3>{x, s, b};
  };
  for (const char* op : {"layernorm", "adalayernorm"})
    cs.push_back({std::string(op) + "_train", [=](Graph& g) {
                    auto [x, s, b] = norm_inputs(g, 64, 256, std::string(op) == "adalayernorm");
                    auto eps = g.tensor_scalar(1e-5, DataType::FLOAT);
                    Attributes at = Attributes().set("forward_phase", "TRAINING");
                    auto r = std::string(op) == "layernorm" ? g.layernorm(x, s, b, eps, at) : g.adalayernorm(x, s, b, eps, at);
                    return Io{{x, s, b}, {out(r[0], "Y"), out(r[1], "mean"), out(r[2], "inv_var")}};
                  }, 1e-4, 1e-3});
  cs.push_back({"rmsnorm_train", [=](Graph& g) {
                  auto [x, s, b] = norm_inputs(g, 64, 256, false);
                  (void)b;
                  auto eps = g.tensor_scalar(1e-5, DataType::FLOAT);
                  auto r = g.rmsnorm(x, s, eps, Attributes().set("forward_phase", "TRAINING"));
                  return Io{{x, s}, {out(r[0], "Y"), out(r[1], "inv_var")}};
                }, 1e-4, 1e-3});
  cs.push_back({"layernorm_backward", [=](Graph& g) {
                  auto [x, s, b] = norm_inputs(g, 32, 128, false);
                  (void)b;
                  auto dy = g.tensor({32, 128, 1, 1}, DataType::FLOAT, "dy");
                  auto mean = g.tensor({32, 1, 1, 1}, DataType::FLOAT, "mean");
                  auto iv = g.tensor({32, 1, 1, 1}, DataType::FLOAT, "inv_var");
                  auto r = g.layernorm_backward(dy, x, s, mean, iv);
                  return Io{{x, s, dy, mean, iv}, {out(r[0], "dx"), out(r[1], "dscale"), out(r[2], "dbias")}};
                }, 1e-3, 1e-3});
  cs.push_back({"rmsnorm_backward", [=](Graph& g) {
                  auto [x, s, b] = norm_inputs(g, 32, 128, false);
                  (void)b;
                  auto dy = g.tensor({32, 128, 1, 1}, DataType::FLOAT, "dy");
                  auto iv = g.tensor({32, 1, 1, 1}, DataType::FLOAT, "inv_var");
                  auto r = g.rmsnorm_backward(dy, x, s, iv);
                  return Io{{x, s, dy, iv}, {out(r[0], "dx"), out(r[1], "dscale"), out(r[2], "dbias")}};
                }, 1e-3, 1e-3});
  cs.push_back({"batchnorm_inference", [=](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto x = g.tensor({8, 32, 6, 6}, DataType::FLOAT, "X", {32 * 36, 1, 32 * 6, 32});  // NHWC
                  auto mean = g.tensor({1, 32, 1, 1}, DataType::FLOAT, "mean");
                  auto iv = g.tensor({1, 32, 1, 1}, DataType::FLOAT, "inv_var");
                  auto s = g.tensor({1, 32, 1, 1}, DataType::FLOAT, "scale");
                  auto b = g.tensor({1, 32, 1, 1}, DataType::FLOAT, "bias");
                  return Io{{x, mean, iv, s, b}, {out(g.batchnorm_inference(x, mean, iv, s, b), "Y")}};
                }, 1e-4, 1e-4});
  cs.push_back({"conv_fprop_nhwc", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto x = g.tensor({2, 16, 10, 10}, DataType::FLOAT, "X", {1600, 1, 160, 16});
                  auto w = g.tensor({32, 16, 3, 3}, DataType::FLOAT, "W", {144, 1, 48, 16});
                  auto y = g.conv_fprop(x, w, Attributes().set("padding", std::vector<std::int64_t>{1, 1}));
                  return Io{{x, w}, {out(y, "Y")}};
                }, 3e-2, 2e-2});  // TF32 allowed
  cs.push_back({"conv_dgrad_wgrad", [](Graph& g) {
                  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
                  auto dy = g.tensor({2, 8, 6, 6}, DataType::FLOAT, "dY");
                  auto w = g.tensor({8, 4, 3, 3}, DataType::FLOAT, "W");
                  auto x = g.tensor({2, 4, 8, 8}, DataType::FLOAT, "X");
                  auto dx = out(g.conv_dgrad(dy, w), "dX");
                  dx->set_dim({2, 4, 8, 8});
                  auto dw = out(g.conv_wgrad(dy, x), "dW");
                  dw->set_dim({8, 4, 3, 3});
                  return Io{{dy, w, x}, {dx, dw}};
                }, 3e-2, 2e-2});
  return cs;
}

}  // namespace

TEST(CudnnGpu, WhichLibcudnn) {
  auto api = runtime::cudnn();
  ASSERT_TRUE(api.is_good()) << api.status().to_string();
  std::printf("LIBCUDNN version %zu path %s\n", api.value()->version, api.value()->path.c_str());
}

TEST(CudnnGpu, EveryLoweredFamilyMatchesTheReference) {
  if (!driver()) GTEST_FAIL() << "no CUDA device";
  for (const Case& c : cases()) run_case(c);
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
    std::int64_t bi = first_backend_plan(g);
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
    const bool events = d->event_create && d->event_record && d->event_synchronize && d->event_elapsed_time;
    for (int it = 0; it < 20; ++it) {
      if (events) {
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
    }
    ASSERT_FALSE(ms.empty()) << "driver has no event functions";
    std::sort(ms.begin(), ms.end());
    double med = ms[ms.size() / 2];
    double tflops = 2.0 * double(n) * n * n / (med * 1e-3) / 1e12;
    std::printf("RESULT matmul_bf16 n=%lld plan=%s median_ms=%.4f tflops=%.1f\n", static_cast<long long>(n),
                g.get_plan_name_at_index(bi).value().c_str(), med, tflops);
  }
}
