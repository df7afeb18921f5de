// gemm_gpu_util.h — host-side helpers for the gemm GPU tests and benchmark:
// bf16/fp16 encodings, graphs of one matmul plus an epilogue chain, a
// device-memory mirror of a graph's operands (through the runtime's driver
// table), the suites' device handle and their output comparison.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "exec/declared_layout.h"
#include "gpu/gpu_buffer.h"
#include "opgraph/engine.h"
#include "opgraph/op_graph.h"

namespace opgraph::gemm_testing {

// A plan an engine built directly (no Graph), as Graph would hand it its
// buffers: the engine reads the graph's declared layout at build and checks a
// pack normalised against it at execute (its operand table). This keeps the
// layout alive beside the plan and normalises the caller's pack on every call
// (what Graph::execute does).
class DirectPlan final : public CompiledPlan {
 public:
  DirectPlan(std::unique_ptr<DeclaredLayout> layout, std::unique_ptr<CompiledPlan> plan)
      : layout_(std::move(layout)), plan_(std::move(plan)) {}
  std::int64_t workspace_size() const override { return plan_->workspace_size(); }
  Status execute(const VariantPack& caller, const ExecutionContext& ec) const override {
    VariantPack pack;
    OPGRAPH_CHECK(VariantPack::normalize(caller, *layout_, pack));
    return plan_->execute(pack, ec);
  }
  const CompiledPlan& inner() const { return *plan_; }

 private:
  std::unique_ptr<DeclaredLayout> layout_;
  std::unique_ptr<CompiledPlan> plan_;
};

// engine.build_plan on `g` with the graph's layout in the context (`ctx`'s
// facts kept), wrapped as a DirectPlan.
inline Result<std::unique_ptr<CompiledPlan>> build_direct(const Engine& engine, const OpGraph& g,
                                                          const PlanConfig& config, const PlanContext& ctx) {
  auto layout = DeclaredLayout::compute(g);
  if (layout.is_bad()) return layout.status();
  auto owned = std::make_unique<DeclaredLayout>(std::move(layout.value()));
  PlanContext with{ctx.facts, owned.get()};
  auto plan = engine.build_plan(g, config, with);
  if (plan.is_bad()) return plan.status();
  return std::unique_ptr<CompiledPlan>(std::make_unique<DirectPlan>(std::move(owned), std::move(plan.value())));
}

// The engine's own plan inside a DirectPlan (or `p` itself).
inline const CompiledPlan& inner_plan(const CompiledPlan& p) {
  const auto* d = dynamic_cast<const DirectPlan*>(&p);
  return d ? d->inner() : p;
}

inline std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
inline float from_bf16(std::uint16_t h) {
  std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float from_f16(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? std::ldexp(static_cast<float>(m), -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : std::ldexp(static_cast<float>(m | 1024), e - 25);
  return s ? -v : v;
}
// Exact for the values the tests draw (multiples of 2^-8 in [-2, 2]).
inline std::uint16_t to_f16_exact(float f) {
  if (f == 0.f) return 0;
  const std::uint16_t s = f < 0 ? 0x8000 : 0;
  int e;
  const float m = std::frexp(std::fabs(f), &e);  // f = m * 2^e, m in [0.5, 1)
  const int biased = e - 1 + 15;
  const int mant = static_cast<int>(std::lround((m * 2.f - 1.f) * 1024.f));
  return static_cast<std::uint16_t>(s | (biased << 10) | mant);
}

inline std::size_t elem_bytes(DataType d) { return d == DataType::FLOAT ? 4 : 2; }

inline double read_elem(const std::vector<unsigned char>& b, DataType d, std::size_t i) {
  if (d == DataType::FLOAT) {
    float f;
    std::memcpy(&f, b.data() + 4 * i, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, b.data() + 2 * i, 2);
  return d == DataType::BFLOAT16 ? from_bf16(h) : from_f16(h);
}

// Span of a strided tensor in elements (max offset + 1).
inline std::size_t span_of(const Tensor& t) {
  std::int64_t s = 1;
  for (std::size_t i = 0; i < t.get_dim().size(); ++i) s += (t.get_dim()[i] - 1) * t.get_stride()[i];
  return static_cast<std::size_t>(s);
}

// Random values in [-1, 1], multiples of 1/128: exact in bf16, fp16 and fp32.
inline void fill_random(std::vector<unsigned char>& b, DataType d, std::size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> q(-128, 128);
  b.assign(n * elem_bytes(d), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(q(rng)) / 128.f;
    if (d == DataType::FLOAT) std::memcpy(b.data() + 4 * i, &v, 4);
    else {
      const std::uint16_t h = d == DataType::BFLOAT16 ? to_bf16(v) : to_f16_exact(v);
      std::memcpy(b.data() + 2 * i, &h, 2);
    }
  }
}

struct GemmCase {
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
  bool a_col = false, b_col = false;
  DataType in = DataType::BFLOAT16, out = DataType::BFLOAT16;
  std::vector<std::string> chain;  // bias, scale, residual, relu, gelu, gelu_tanh, swish, sigmoid, tanh
  bool b_broadcast = false;        // B declared [1, K, N] against a batched A
};

inline std::string describe(const GemmCase& c) {
  std::string s = std::to_string(c.batch) + "x" + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                  std::to_string(c.k) + (c.a_col ? " Acol" : " Arow") + (c.b_col ? " Bcol" : " Brow") + " " +
                  std::string(to_string(c.in)) + "->" + std::string(to_string(c.out));
  for (const auto& e : c.chain) s += " " + e;
  return s;
}

// [batch, m, k] @ [batch|1, k, n] then the chain; all intermediates FLOAT.
inline OpGraph build_case(const GemmCase& c) {
  OpGraph g;
  g.set_name("gemm_case").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto mat = [&](std::int64_t b, std::int64_t r, std::int64_t cc, bool col, const char* name) {
    auto x = g.tensor({b, r, cc}, c.in, name);
    if (col) x->set_stride({r * cc, 1, r});
    return x;
  };
  auto a = mat(c.batch, c.m, c.k, c.a_col, "A");
  auto b = mat(c.b_broadcast ? 1 : c.batch, c.k, c.n, c.b_col, "B");
  TensorPtr x = g.matmul(a, b);
  for (const auto& op : c.chain) {
    if (op == "bias") x = g.bias(x, g.tensor({1, 1, c.n}, DataType::BFLOAT16, "bias"));
    else if (op == "scale") x = g.scale(x, g.tensor_scalar(0.75));
    else if (op == "residual") x = g.add(x, g.tensor({c.batch, c.m, c.n}, DataType::FLOAT, "residual"));
    else if (op == "relu") x = g.relu(x);
    else if (op == "gelu") x = g.gelu(x);
    else if (op == "gelu_tanh") x = g.gelu_approx_tanh(x);
    else if (op == "swish") x = g.swish(x);
    else if (op == "sigmoid") x = g.sigmoid(x);
    else if (op == "tanh") x = g.tanh(x);
  }
  x->set_output(true).set_name("C").set_data_type(c.out);
  return g;
}

// Host and device copies of every non-virtual, non-by-value tensor of a graph.
struct Operands {
  std::map<std::int64_t, std::vector<unsigned char>> host;
  std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> dev;
  std::int64_t out_uid = -1;
};

// Fills inputs at random, poisons the output (all bits set: NaN in every
// output type) on the device, copies inputs to the device.
inline Status make_operands(const runtime::CudaDriverApi& api, const OpGraph& g, std::mt19937& rng, Operands& o) {
  for (const auto& t : g.tensors()) {
    if (t->get_is_virtual() || t->get_is_pass_by_value()) continue;
    const std::size_t n = span_of(*t), bytes = ((n * elem_bytes(t->get_data_type()) + 3) / 4) * 4;
    auto& h = o.host[t->get_uid()];
    const bool output = g.producer_of(t.get()) != nullptr;
    if (output) {
      o.out_uid = t->get_uid();
      h.assign(bytes, 0);
    } else {
      fill_random(h, t->get_data_type(), n, rng);
      h.resize(bytes, 0);
    }
    auto d = std::make_unique<DeviceBuffer>(api, bytes);
    OPGRAPH_CHECK(d->status());
    if (output) OPGRAPH_CHECK(runtime::cuda_check(api, api.memset_d32(d->ptr(), 0xFFFFFFFFu, bytes / 4), "poison"));
    else OPGRAPH_CHECK(runtime::cuda_check(api, api.memcpy_htod(d->ptr(), h.data(), bytes), "cuMemcpyHtoD"));
    o.dev[t->get_uid()] = std::move(d);
  }
  return runtime::cuda_check(api, api.ctx_synchronize(), "cuCtxSynchronize");
}

// Device 0 for the GPU suites, opened once on the first caller's thread (the
// gtest main thread): its primary context is current there.
struct Gpu {
  std::unique_ptr<runtime::KernelRuntime> context;  // retains device 0's primary context
  const runtime::CudaDriverApi* api = nullptr;
  DeviceProperties props;
  CUstream stream = nullptr;  // a non-blocking stream, created by the suite's fixture
};
inline Gpu& gpu() {
  static Gpu* g = [] {
    auto* x = new Gpu;
    auto rt = runtime::KernelRuntime::open(0, runtime::CacheOptions{});
    if (rt.is_good()) x->context = std::move(*rt);
    auto p = runtime::read_device_properties(0);
    if (p.is_good()) x->props = *p;
    auto api = runtime::cuda_driver();
    if (api.is_good()) x->api = *api;
    return x;
  }();
  return *g;
}

// Output elements of case `c` outside |got - want| <= rtol*|want| + atol (NaN
// fails): rtol = 1/64 (bf16 out), 1/512 (fp16 out), 1e-4 (fp32 out), atol =
// 1e-5 * K + 1e-3 (fp32 accumulation order). `worst`: the largest error's index.
inline std::size_t count_bad(const GemmCase& c, const std::vector<unsigned char>& want,
                             const std::vector<unsigned char>& got, std::size_t* worst = nullptr) {
  const double rtol = c.out == DataType::BFLOAT16 ? 1.0 / 64 : c.out == DataType::HALF ? 1.0 / 512 : 1e-4;
  const double atol = 1e-5 * static_cast<double>(c.k) + 1e-3;
  const std::size_t count = static_cast<std::size_t>(c.batch * c.m * c.n);
  std::size_t bad = 0, w = 0;
  double worst_err = -1;
  for (std::size_t i = 0; i < count; ++i) {
    const double r = read_elem(want, c.out, i), x = read_elem(got, c.out, i);
    const double err = std::fabs(x - r);
    if (!(err <= rtol * std::fabs(r) + atol)) ++bad;
    if (!(err <= worst_err)) worst_err = err, w = i;
  }
  if (worst) *worst = w;
  return bad;
}

}  // namespace opgraph::gemm_testing
