// bench/gdn_decode_sweep.cu — the gdn decode kernel's CTA shapes against each other and
// against a copy of the same bytes, on the GPU, in one process.
//
// Every shape (rows per warp R, warps per CTA W, token inputs loaded before the state or
// after it) is an instantiation of decode_body (src/engines/linear_attention/kernels/
// gdn_decode.cu), compiled here by nvcc with the engine's defines (GDN_D 128, GDN_IO bf16).
// Per cell (B sequences of one token, HQ = HK = 16, HV = HO in {32, 64}, d = 128, fp32 state
// pool updated in place through a permuted state_indices, l2norm, fp32 gates and beta):
//   1. each shape runs once on the same inputs from the same pool contents; its O and pool
//      must equal gdn_decode's bitwise (every shape does the same arithmetic per row);
//   2. each shape, a float4 copy kernel and cudaMemcpyAsync of the pool's bytes are captured
//      as CUDA graphs of `reps` launches and replayed round by round (interleaved), timed with
//      CUDA events; the median per launch is reported.
// "state TB/s" counts the pool rows read and written once (2 x B x HO x d x d x 4 bytes).
//
// Build and run (the device script bench/gdn_decode_sweep.sh does both):
//   nvcc -std=c++20 -O3 -arch=sm_90a -DGDN_D=128 -DGDN_IO=0 -Isrc/engines -Isrc/runtime/kernels/include \
//        bench/gdn_decode_sweep.cu -o gdn_decode_sweep && ./gdn_decode_sweep
#define GDN_DECODE_VARIANTS                                                                                      \
  GDN_DECODE_VARIANT(8, 4, 0) GDN_DECODE_VARIANT(4, 4, 1) GDN_DECODE_VARIANT(2, 4, 1) GDN_DECODE_VARIANT(8, 2, 1) \
  GDN_DECODE_VARIANT(16, 4, 1) GDN_DECODE_VARIANT(16, 2, 1) GDN_DECODE_VARIANT(8, 8, 1)

#include "linear_attention/kernels/gdn_decode.cu"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

namespace {

struct Shape {
  std::string name;
  void (*fn)(GdnParams);
  int rows_per_cta, threads;
};

std::vector<Shape> shapes() {
  // The engine's two entries first (la_engine.h: decode_small picks by (sequence, head) pairs).
  std::vector<Shape> v{{"gdn_decode (R8 W4)", gdn_decode, kDecodeRows, kDecodeThreads},
                       {"gdn_decode_small (R4 W2)", gdn_decode_small, kDecodeSmallRows, kDecodeSmallThreads}};
#undef GDN_DECODE_VARIANT
#define GDN_DECODE_VARIANT(R, W, E) \
  v.push_back({"R" #R " W" #W " early" #E, gdn_decode_r##R##_w##W##_e##E, (R) * (W), 32 * (W)});
  GDN_DECODE_VARIANTS
#undef GDN_DECODE_VARIANT
  return v;
}

__global__ void copy_f4(const float4* __restrict__ src, float4* __restrict__ dst, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

unsigned short to_bf16(float x) {
  unsigned u;
  std::memcpy(&u, &x, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
}

template <class T>
T* dev_copy(const std::vector<T>& h) {
  T* d = nullptr;
  CK(cudaMalloc(&d, h.size() * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  const std::vector<Shape> sh = shapes();
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::mt19937_64 rng(20261203);
  std::normal_distribution<float> nd;
  int fails = 0;
  std::printf("%-6s %-5s %-24s %10s %10s %8s %8s\n", "heads", "B", "kernel", "us", "state TB/s", "/copy", "/decode");
  std::vector<std::string> summary;
  for (int ho : {32, 64})
    for (int b : {1, 64, 256, 1024}) {
      const int hq = 16, d = 128;
      const long long tq = static_cast<long long>(b) * hq * d, tv = static_cast<long long>(b) * ho * d;
      const long long pool = static_cast<long long>(b) * ho * d * d;
      std::vector<unsigned short> hqv(tq), hkv(tq), hvv(tv);
      for (auto& x : hqv) x = to_bf16(nd(rng));
      for (auto& x : hkv) x = to_bf16(nd(rng));
      for (auto& x : hvv) x = to_bf16(nd(rng));
      std::vector<float> hg(static_cast<size_t>(b) * ho), hb(static_cast<size_t>(b) * ho), hs(pool);
      for (auto& x : hg) x = -std::log1p(std::exp(-nd(rng)));  // logsigmoid
      for (auto& x : hb) x = 1.f / (1.f + std::exp(-nd(rng)));
      for (auto& x : hs) x = 0.1f * nd(rng);
      std::vector<int> cu(b + 1), idx(b);
      std::iota(cu.begin(), cu.end(), 0);
      std::iota(idx.begin(), idx.end(), 0);
      std::shuffle(idx.begin(), idx.end(), rng);
      auto* dq = dev_copy(hqv);
      auto* dk = dev_copy(hkv);
      auto* dv = dev_copy(hvv);
      auto* dg = dev_copy(hg);
      auto* db = dev_copy(hb);
      auto* dcu = dev_copy(cu);
      auto* didx = dev_copy(idx);
      float* dpool = dev_copy(hs);
      float* dsave = dev_copy(hs);
      float* dpool2 = nullptr;
      CK(cudaMalloc(&dpool2, pool * 4));
      unsigned short* dout = nullptr;
      CK(cudaMalloc(&dout, tv * 2));

      GdnParams p{};
      p.q = reinterpret_cast<unsigned long long>(dq);
      p.k = reinterpret_cast<unsigned long long>(dk);
      p.v = reinterpret_cast<unsigned long long>(dv);
      p.g = reinterpret_cast<unsigned long long>(dg);
      p.beta = reinterpret_cast<unsigned long long>(db);
      p.cu_seqlens = reinterpret_cast<unsigned long long>(dcu);
      p.initial_state = p.final_state = reinterpret_cast<unsigned long long>(dpool);
      p.state_indices = reinterpret_cast<unsigned long long>(didx);
      p.o = reinterpret_cast<unsigned long long>(dout);
      p.t = b;
      p.n_seq = b;
      p.hq = p.hk = hq;
      p.hv = p.ho = ho;
      p.state_rows = b;
      p.state_row_stride = static_cast<long long>(ho) * d * d;
      p.g_type = p.beta_type = p.state_type = kTypeF32;
      p.o_type = kTypeBf16;
      p.flags = kFlagL2Norm | kFlagHasInit | kFlagWriteFinal | kFlagPool;
      p.scale = 1.0 / std::sqrt(128.0);
      p.q_ts = hq * d, p.q_hs = d, p.k_ts = hq * d, p.k_hs = d, p.v_ts = ho * d, p.v_hs = d;

      auto launch = [&](const Shape& s) {
        dim3 grid(d / s.rows_per_cta, ho, b);
        s.fn<<<grid, s.threads, 0, stream>>>(p);
      };
      // 1. bitwise against gdn_decode, from the same pool contents.
      std::vector<unsigned short> o_ref(tv), o_x(tv);
      std::vector<float> s_ref(pool), s_x(pool);
      for (size_t i = 0; i < sh.size(); ++i) {
        CK(cudaMemcpyAsync(dpool, dsave, pool * 4, cudaMemcpyDeviceToDevice, stream));
        CK(cudaMemsetAsync(dout, 0xff, tv * 2, stream));  // poison: NaN bf16
        launch(sh[i]);
        CK(cudaStreamSynchronize(stream));
        CK(cudaGetLastError());
        CK(cudaMemcpy(i == 0 ? o_ref.data() : o_x.data(), dout, tv * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(i == 0 ? s_ref.data() : s_x.data(), dpool, pool * 4, cudaMemcpyDeviceToHost));
        if (i == 0) {
          bool finite = true;
          for (auto x : o_ref) finite &= (x & 0x7f80u) != 0x7f80u;
          if (!finite) {
            std::printf("FAIL %d/%d B=%d gdn_decode wrote a non-finite O (poison left)\n", hq, ho, b);
            ++fails;
          }
        } else if (std::memcmp(o_ref.data(), o_x.data(), tv * 2) != 0 ||
                   std::memcmp(s_ref.data(), s_x.data(), pool * 4) != 0) {
          std::printf("FAIL %d/%d B=%d %s differs from gdn_decode\n", hq, ho, b, sh[i].name.c_str());
          ++fails;
        }
      }
      // 2. graphs of `reps` launches, replayed round by round.
      const int reps = b >= 256 ? 5 : 20;
      std::vector<cudaGraphExec_t> ge;
      auto capture = [&](auto&& body) {
        cudaGraph_t g;
        cudaGraphExec_t x;
        CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int r = 0; r < reps; ++r) body();
        CK(cudaStreamEndCapture(stream, &g));
        CK(cudaGraphInstantiate(&x, g, 0));
        CK(cudaGraphDestroy(g));
        ge.push_back(x);
      };
      for (const auto& s : sh) capture([&] { launch(s); });
      const long long n4 = pool / 4;
      capture([&] { copy_f4<<<132 * 16, 256, 0, stream>>>(reinterpret_cast<const float4*>(dpool),
                                                          reinterpret_cast<float4*>(dpool2), n4); });
      capture([&] { CK(cudaMemcpyAsync(dpool2, dpool, pool * 4, cudaMemcpyDeviceToDevice, stream)); });
      std::vector<std::vector<double>> t(ge.size());
      for (auto& x : ge) CK(cudaGraphLaunch(x, stream));  // warm-up
      for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < ge.size(); ++i) {
          CK(cudaEventRecord(e0, stream));
          CK(cudaGraphLaunch(ge[i], stream));
          CK(cudaEventRecord(e1, stream));
          CK(cudaEventSynchronize(e1));
          float ms = 0.f;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          t[i].push_back(1000.0 * ms / reps);
        }
      const double bytes = 2.0 * pool * 4;
      const double copy_us = std::min(median(t[sh.size()]), median(t[sh.size() + 1]));
      const double dec_us = median(t[0]);
      size_t best = 0;
      for (size_t i = 0; i < ge.size(); ++i) {
        const double us = median(t[i]);
        const std::string name = i < sh.size() ? sh[i].name : i == sh.size() ? "copy kernel (float4)" : "cudaMemcpyAsync";
        std::printf("%2d/%-3d %-5d %-24s %10.2f %10.3f %8.3f %8.3f\n", hq, ho, b, name.c_str(), us, bytes / us * 1e-6,
                    us / copy_us, us / dec_us);
        if (i < sh.size() && us < median(t[best])) best = i;
      }
      // The engine's pick (la_engine.h decode_small: at most kDecodeSmallPairs (sequence, head) pairs).
      const size_t pick = static_cast<long long>(b) * ho <= kDecodeSmallPairs ? 1 : 0;
      char line[320];
      std::snprintf(line, sizeof line,
                    "%2d/%-3d B=%-5d engine picks %-24s %8.2f us = %.3f x copy, %.3f x best (%s %.2f us)", hq, ho, b,
                    sh[pick].name.c_str(), median(t[pick]), median(t[pick]) / copy_us, median(t[pick]) / median(t[best]),
                    sh[best].name.c_str(), median(t[best]));
      summary.push_back(line);
      for (auto& x : ge) CK(cudaGraphExecDestroy(x));
      for (void* x : {static_cast<void*>(dq), static_cast<void*>(dk), static_cast<void*>(dv), static_cast<void*>(dg),
                      static_cast<void*>(db), static_cast<void*>(dcu), static_cast<void*>(didx),
                      static_cast<void*>(dpool), static_cast<void*>(dsave), static_cast<void*>(dpool2),
                      static_cast<void*>(dout)})
        CK(cudaFree(x));
    }
  std::printf("\n== summary (medians of %d interleaved rounds; copy = the faster of the copy kernel and cudaMemcpyAsync; bitwise checks: %s)\n", rounds,
              fails ? "FAILED" : "all shapes equal gdn_decode");
  for (const auto& s : summary) std::printf("%s\n", s.c_str());
  return fails ? 1 : 0;
}
