// bench/cuda_bench.h — what the standalone CUDA benches (bench/*.cu, built by nvcc on the GPU
// machine: gdn_decode_sweep, gdn_fused_ab, gdn_bwd_ab) share: the runtime- and driver-API checks, bf16 by rounding to
// nearest even and back, the RMS ratio of two outputs, a host vector copied to the device, the median of samples, a stream with two
// events timing what a callable enqueues, and the gdn kernels' argument for dense inputs.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "linear_attention/kernels/gdn_params.cuh"

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                             \
    }                                                                                           \
  } while (0)

// The driver-API check (the A/B benches load cubins with cuModuleLoad).
#define CD(x)                                                                        \
  do {                                                                               \
    CUresult r_ = (x);                                                               \
    if (r_ != CUDA_SUCCESS) {                                                        \
      const char* s_ = nullptr;                                                      \
      cuGetErrorString(r_, &s_);                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

namespace cuda_bench {

inline unsigned short to_bf16(float x) {
  unsigned u;
  std::memcpy(&u, &x, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
}

inline float from_bf16(unsigned short h) {
  const unsigned u = static_cast<unsigned>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// RMS ratio ||b - a|| / ||a||; nan if an element of either is not finite.
inline double rms_ratio(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(b[i]) || !std::isfinite(a[i])) return std::nan("");
    num += (double(b[i]) - a[i]) * (double(b[i]) - a[i]);
    den += double(a[i]) * a[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

template <class T>
T* dev_copy(const std::vector<T>& h) {
  T* d = nullptr;
  CK(cudaMalloc(&d, h.size() * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

inline double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

// The gdn benches' random inputs, drawn from N(0, 1) by `nd` in place: bf16 rows, log-space gates
// logsigmoid(x), betas sigmoid(x), fp32 state entries 0.1 x.
enum class Draw { kBf16, kLogGate, kBeta, kState };
template <class T, class Rng, class Dist>
void draw(std::vector<T>& v, Draw kind, Rng& rng, Dist& nd) {
  for (auto& x : v) {
    const float r = nd(rng);
    if constexpr (sizeof(T) == 2) {
      x = to_bf16(r);
    } else {
      x = kind == Draw::kLogGate ? -std::log1p(std::exp(-r)) : kind == Draw::kBeta ? 1.f / (1.f + std::exp(-r)) : 0.1f * r;
    }
  }
}

// A non-blocking stream and two events: ms(f) is the time, in milliseconds, of what f enqueues
// on `stream`, by events around it (synchronised).
struct EventTimer {
  cudaStream_t stream = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  EventTimer() {
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
  }
  template <class F>
  float ms(F&& f) {
    CK(cudaEventRecord(e0, stream));
    f();
    CK(cudaEventRecord(e1, stream));
    CK(cudaEventSynchronize(e1));
    float t = 0.f;
    CK(cudaEventElapsedTime(&t, e0, e1));
    return t;
  }
};

// The gdn kernels' argument for dense inputs: q, k [T, hq, d] and v [T, hv, d] bf16, g and beta
// [T, hv] fp32 (log-space gates), cu_seqlens int32 [n + 1], fp32 state rows [state_rows, hv, d,
// d] (initial and final: the same buffer for a pool in place), O bf16 [T, hv, d]; hq = hk, hv =
// ho; scale d^-1/2; `flags` as gdn_params.cuh names them.
inline opgraph_gdn::GdnParams dense_gdn_params(const void* q, const void* k, const void* v, const void* g,
                                               const void* beta, const void* cu, const void* init, void* fin,
                                               const void* idx, void* o, long long t, long long n, long long hq,
                                               long long hv, long long d, long long state_rows, long long flags) {
  namespace gdn = opgraph_gdn;
  auto u = [](const void* x) { return reinterpret_cast<unsigned long long>(x); };
  gdn::GdnParams p{};
  p.q = u(q), p.k = u(k), p.v = u(v), p.g = u(g), p.beta = u(beta), p.cu_seqlens = u(cu);
  p.initial_state = u(init), p.final_state = u(fin), p.state_indices = u(idx), p.o = u(o);
  p.t = t, p.n_seq = n, p.hq = p.hk = hq, p.hv = p.ho = hv;
  p.state_rows = state_rows, p.state_row_stride = hv * d * d;
  p.g_type = p.beta_type = p.state_type = p.a_log_type = p.dt_bias_type = gdn::kTypeF32;
  p.o_type = gdn::kTypeBf16;
  p.flags = flags;
  p.scale = 1.0 / std::sqrt(static_cast<double>(d));
  p.q_ts = hq * d, p.q_hs = d, p.k_ts = hq * d, p.k_hs = d, p.v_ts = hv * d, p.v_hs = d;
  return p;
}

}  // namespace cuda_bench
