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
// decode_body: rows a warp, warps, kEarly (0: token after the state, 1: before it, 2: token seq
// before cu_seqlens too, as gdn_decode and gdn_decode_small; 3: 2 with the state rows by bulk
// copies, decode_body's kBulk: faster here, slower as the engine's gdn_decode in the peers' run; 4: 2 with
// state_indices and cu_seqlens loaded first, decode_body's kEarly 3). R4 W2 early 4 is gdn_decode_small's shape
// until 2026-12-07; R2 W2, R2 W1 and R4 W1 (2-4x its CTAs) asked whether B = 1 gains from more of them, and R4 W1 early
// 4 won (bench/results/2026-12-07-gdn-onepass-pass1-h100.txt): gdn_decode_small is that shape since, so it is not
// listed again here, nor R8 W4 early 4 (gdn_decode).
#define GDN_DECODE_VARIANTS                                                                                      \
  GDN_DECODE_VARIANT(4, 2, 4) GDN_DECODE_VARIANT(2, 2, 4) GDN_DECODE_VARIANT(2, 1, 4)                            \
  GDN_DECODE_VARIANT(4, 2, 3) GDN_DECODE_VARIANT(8, 4, 1) GDN_DECODE_VARIANT(4, 2, 1) GDN_DECODE_VARIANT(4, 4, 2) \
  GDN_DECODE_VARIANT(16, 4, 2) GDN_DECODE_VARIANT(8, 4, 3) GDN_DECODE_VARIANT(8, 8, 3) GDN_DECODE_VARIANT(16, 4, 3)
// decode_staged (below): rows a CTA, rows a tile, warps, streaming stores (all shapes measured:
// bench/results/2026-12-03-gdn-decode-staged-h200.txt).
#define GDN_DECODE_STAGED_VARIANTS \
  GDN_DECODE_STAGED_VARIANT(16, 8, 4, 0) GDN_DECODE_STAGED_VARIANT(32, 8, 4, 0) GDN_DECODE_STAGED_VARIANT(32, 16, 4, 0)

#include "linear_attention/kernels/gdn_decode.cu"

// GDN_DECODE_OLD (an A/B aid): the quoted name of an older copy of gdn_decode.cu on the include path
// (-DGDN_DECODE_OLD='"gdn_decode_old.cu"' -I<its folder>); its two entries join the shapes as "old ..."
// right after the current ones, and must equal them bitwise like every shape.
#ifdef GDN_DECODE_OLD
#pragma push_macro("GDN_DECODE_VARIANTS")
#undef GDN_DECODE_VARIANTS
#define gdn_decode gdn_decode_old
#define gdn_decode_small gdn_decode_small_old
#define gdn_state_copy gdn_state_copy_old
#define decode_body decode_body_old
#include GDN_DECODE_OLD
#undef gdn_decode
#undef gdn_decode_small
#undef gdn_state_copy
#undef decode_body
#pragma pop_macro("GDN_DECODE_VARIANTS")
#endif

// ---- an alternative measured here, not in the engine: the CTA's rows staged in shared
// memory by cp.async, tile by tile (FlashInfer 0.7.2's float32 T = 1 schedule, as read) ----
// decode_staged<R, TR, W, CS>: a CTA of W warps covers R value rows of one (head, sequence) in
// tiles of TR rows; every tile's 16-byte pieces are requested at the start (cp.async, L2 only:
// one commit group a tile, each lane fetching exactly the pieces it reads back), then warp w
// computes rows w, w + W, ... of tile 0 as soon as tile 0 has landed and writes each back at
// once, then tile 1, ... (CS: the write-back streams, st.global.cs). A row's arithmetic is
// decode_body's, operation for operation, so the outputs are bitwise equal to gdn_decode's.
// Rows are independent in the recurrence (row v of S sees only v's value), so a tile runs all
// of a sequence's tokens before the next one; the first token's inputs are kept for every tile.
__device__ __forceinline__ void cp_async16_f(u32 dst, const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait_n() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
template <int kRows, int kTileRows, int kWarps, bool kCs>
__device__ __forceinline__ void decode_staged(const GdnParams& p) {
  static_assert(kRows % kTileRows == 0 && kTileRows % kWarps == 0 && kRows <= 32, "decode_staged shape");
  constexpr int kTiles = kRows / kTileRows, kRw = kTileRows / kWarps;  // rows a warp a tile
  __shared__ __align__(16) float stage[kRows * D];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const i64 h = blockIdx.y, seq = blockIdx.z;
  const i64 vbase = static_cast<i64>(blockIdx.x) * kRows;
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const i64 bos = cu_at(p, seq, 0), eos = cu_at(p, seq + 1, bos);
  const i64 srow = state_row(p, seq);
  const float scale = static_cast<float>(p.scale);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const i64 sbase = srow * p.state_row_stride + (h * D + vbase) * D + lane * EL;  // row 0 of the CTA
  const bool load = (p.flags & kFlagHasInit) && srow >= 0;
  const bool f4in = load && EL == 4 && p.state_type == kTypeF32 && (p.state_row_stride & 3) == 0 &&
                    ((p.initial_state + static_cast<u64>(sbase) * 4u) & 15u) == 0;
  // Row r of tile t that warp w computes: t * TR + w + W i.
  auto row_of = [&](int t, int i) { return t * kTileRows + warp + kWarps * i; };
  const u32 sst = static_cast<u32>(__cvta_generic_to_shared(stage)) + static_cast<u32>(lane) * 16u;
  if (f4in) {
    const float* src = reinterpret_cast<const float*>(p.initial_state) + sbase;
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
#pragma unroll
      for (int i = 0; i < kRw; ++i) cp_async16_f(sst + static_cast<u32>(row_of(t, i)) * (D * 4u), src + static_cast<i64>(row_of(t, i)) * D);
      cp_async_commit();
    }
  }

  const u16* qg = reinterpret_cast<const u16*>(p.q);
  const u16* kg = reinterpret_cast<const u16*>(p.k);
  const u16* vg = reinterpret_cast<const u16*>(p.v);
  // A token's inputs as decode_body forms them: q, k (normalised), a = e^g, beta, and the
  // value of row `lane` of the CTA (lane < R).
  struct Tok {
    float xq[EL], xk[EL], a, beta, vmine;
  };
  auto load_token = [&](i64 tok, Tok& x) {
    load_row_share(qg + tok * p.q_ts + hq * p.q_hs + lane * EL, x.xq);
    load_row_share(kg + tok * p.k_ts + hk * p.k_hs + lane * EL, x.xk);
    const i64 off = tok * p.ho + h;
    const float gx = load_any(p.g, off, p.g_type), bx = load_any(p.beta, off, p.beta_type);
    x.vmine = lane < kRows ? io_to_f32(vg[tok * p.v_ts + hv * p.v_hs + vbase + lane]) : 0.f;
    if (l2) l2norm_rows(x.xq, x.xk);
    float gl;
    gate_beta_of(p, gx, bx, h, gl, x.beta);
    x.a = expf(gl);
  };
  Tok first{};
  if (bos < eos) load_token(bos, first);

#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    float st[kRw][EL];
    if (f4in) {
      // Tile t landed once at most kTiles - 1 - t groups are pending.
      if (t == 0) cp_async_wait_n<kTiles - 1>();
      else if (t == 1) cp_async_wait_n<(kTiles >= 2 ? kTiles - 2 : 0)>();
      else if (t == 2) cp_async_wait_n<(kTiles >= 3 ? kTiles - 3 : 0)>();
      else cp_async_wait_n<0>();
#pragma unroll
      for (int i = 0; i < kRw; ++i) {
        const float4 x = *reinterpret_cast<const float4*>(stage + row_of(t, i) * D + lane * EL);
        st[i][0] = x.x, st[i][1] = x.y, st[i][2] = x.z, st[i][3] = x.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < kRw; ++i)
#pragma unroll
        for (int e = 0; e < EL; e += 2) {
          float a = 0.f, b = 0.f;
          if (load) load_any2(p.initial_state, sbase + static_cast<i64>(row_of(t, i)) * D + e, p.state_type, a, b);
          st[i][e] = a;
          st[i][e + 1] = b;
        }
    }
    for (i64 tok = bos; tok < eos; ++tok) {
      Tok x = first;  // by value: a reference to one of two would put both in local memory
      if (tok != bos) load_token(tok, x);
      float kv[kRw];
#pragma unroll
      for (int i = 0; i < kRw; ++i) {
        float y = 0.f;
#pragma unroll
        for (int e = 0; e < EL; ++e) y += st[i][e] * x.xk[e];
        kv[i] = y;
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int i = 0; i < kRw; ++i) kv[i] += __shfl_xor_sync(0xffffffffu, kv[i], o);
      float ov[kRw];
#pragma unroll
      for (int i = 0; i < kRw; ++i) {
        const float vi = __shfl_sync(0xffffffffu, x.vmine, row_of(t, i));
        const float u = x.beta * (vi - x.a * kv[i]);
        float y = 0.f;
#pragma unroll
        for (int e = 0; e < EL; ++e) {
          st[i][e] = x.a * st[i][e] + x.xk[e] * u;
          y += st[i][e] * x.xq[e];
        }
        ov[i] = y;
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int i = 0; i < kRw; ++i) ov[i] += __shfl_xor_sync(0xffffffffu, ov[i], o);
      if (lane < kRw) {
        float mine = 0.f;
#pragma unroll
        for (int i = 0; i < kRw; ++i)
          if (lane == i) mine = ov[i];
        store_any(p.o, (tok * p.ho + h) * D + vbase + row_of(t, lane), p.o_type, scale * mine);
      }
    }
    if ((p.flags & kFlagWriteFinal) && srow >= 0) {
      const bool f4out = EL == 4 && p.state_type == kTypeF32 && (p.state_row_stride & 3) == 0 &&
                         ((p.final_state + static_cast<u64>(sbase) * 4u) & 15u) == 0;
      if (f4out) {
        float* dst = reinterpret_cast<float*>(p.final_state) + sbase;
#pragma unroll
        for (int i = 0; i < kRw; ++i) {
          float* d = dst + static_cast<i64>(row_of(t, i)) * D;
          if (kCs) {
            store_f4_stream(d, st[i][0], st[i][1 % EL], st[i][2 % EL], st[i][3 % EL]);
          } else {
            *reinterpret_cast<float4*>(d) = make_float4(st[i][0], st[i][1 % EL], st[i][2 % EL], st[i][3 % EL]);
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < kRw; ++i)
#pragma unroll
          for (int e = 0; e < EL; e += 2)
            store_any2(p.final_state, sbase + static_cast<i64>(row_of(t, i)) * D + e, p.state_type, st[i][e], st[i][e + 1]);
      }
    }
  }
}

// decode_staged's shapes for the sweep (rows a CTA, rows a tile, warps, streaming stores).
#define GDN_DECODE_STAGED_VARIANT(R, TR, W, CS)                                                      \
  extern "C" __global__ void __launch_bounds__(32 * W)                                               \
      gdn_decode_s##R##_t##TR##_w##W##_cs##CS(const GdnParams p) {                                  \
    decode_staged<R, TR, W, CS != 0>(p);                                                             \
  }
GDN_DECODE_STAGED_VARIANTS
#undef GDN_DECODE_STAGED_VARIANT

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cuda_bench.h"


namespace {

using cuda_bench::dev_copy;
using cuda_bench::median;
using cuda_bench::to_bf16;

struct Shape {
  std::string name;
  void (*fn)(GdnParams);
  int rows_per_cta, threads;
};

std::vector<Shape> shapes() {
  // The engine's two entries first (la_engine.h: decode_small picks by (sequence, head) pairs).
  std::vector<Shape> v{{"gdn_decode (R8 W4)", gdn_decode, kDecodeRows, kDecodeThreads},
                       {"gdn_decode_small (R4 W1)", gdn_decode_small, kDecodeSmallRows, kDecodeSmallThreads}};
#ifdef GDN_DECODE_OLD
  v.push_back({"old gdn_decode", gdn_decode_old, kDecodeRows, kDecodeThreads});
  v.push_back({"old gdn_decode_small (R4 W1)", gdn_decode_small_old, kDecodeSmallRows, kDecodeSmallThreads});
#endif
#undef GDN_DECODE_VARIANT
#define GDN_DECODE_VARIANT(R, W, E) \
  v.push_back({"R" #R " W" #W " early" #E, gdn_decode_r##R##_w##W##_e##E, (R) * (W), 32 * (W)});
  GDN_DECODE_VARIANTS
#undef GDN_DECODE_VARIANT
#define GDN_DECODE_STAGED_VARIANT(R, TR, W, CS)                                                        \
  v.push_back({"staged R" #R " T" #TR " W" #W " cs" #CS, gdn_decode_s##R##_t##TR##_w##W##_cs##CS, (R), \
               32 * (W)});
  GDN_DECODE_STAGED_VARIANTS
#undef GDN_DECODE_STAGED_VARIANT
  return v;
}

__global__ void copy_f4(const float4* __restrict__ src, float4* __restrict__ dst, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// The pool rewritten in place (read and written at the same addresses, as the decode does);
// f is 1 at run time (a store of the loaded value itself could be elided).
__global__ void rewrite_f4(float4* p, long long n, float f) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float4 x = p[i];
    p[i] = make_float4(x.x * f, x.y * f, x.z * f, x.w * f);
  }
}




}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  // OPGRAPH_DECODE_SAFE_GATE=1: the cells under safe_gate with a_log, dt_bias and beta sigmoid (the peers' decode).
  const char* sg = std::getenv("OPGRAPH_DECODE_SAFE_GATE");
  const bool safe_gate = sg && std::strcmp(sg, "1") == 0;
  if (safe_gate) std::printf("# safe_gate with a_log and dt_bias, beta sigmoid (OPGRAPH_DECODE_SAFE_GATE=1)\n");
  const std::vector<Shape> sh = shapes();
  cuda_bench::EventTimer timer;
  const cudaStream_t stream = timer.stream;
  std::mt19937_64 rng(20261203);
  std::normal_distribution<float> nd;
  int fails = 0;
  std::printf("%-6s %-5s %-28s %10s %10s %8s %8s\n", "heads", "B", "kernel", "us", "state TB/s", "/copy", "/decode");
  std::vector<std::string> summary;
  for (int ho : {32, 64})
    for (int b : {1, 64, 256, 1024}) {
      const int hq = 16, d = 128;
      const long long tq = static_cast<long long>(b) * hq * d, tv = static_cast<long long>(b) * ho * d;
      const long long pool = static_cast<long long>(b) * ho * d * d;
      std::vector<unsigned short> hqv(tq), hkv(tq), hvv(tv);
      cuda_bench::draw(hqv, cuda_bench::Draw::kBf16, rng, nd);
      cuda_bench::draw(hkv, cuda_bench::Draw::kBf16, rng, nd);
      cuda_bench::draw(hvv, cuda_bench::Draw::kBf16, rng, nd);
      std::vector<float> hg(static_cast<size_t>(b) * ho), hb(static_cast<size_t>(b) * ho), hs(pool);
      cuda_bench::draw(hg, cuda_bench::Draw::kLogGate, rng, nd);
      cuda_bench::draw(hb, cuda_bench::Draw::kBeta, rng, nd);
      cuda_bench::draw(hs, cuda_bench::Draw::kState, rng, nd);
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

      GdnParams p = cuda_bench::dense_gdn_params(dq, dk, dv, dg, db, dcu, dpool, dpool, didx, dout, b, b, hq, ho, d,
                                                 b, kFlagL2Norm | kFlagHasInit | kFlagWriteFinal | kFlagPool);
      float* dalog = nullptr;
      float* ddt = nullptr;
      if (safe_gate) {
        // The peers' decode (bench/compare_gdn.py): g = -exp(a_log) softplus(g + dt_bias), beta = sigmoid(beta).
        std::vector<float> ha(ho), hd(ho);
        std::uniform_real_distribution<float> u01(0.f, 1.f);
        for (int i = 0; i < ho; ++i) ha[i] = std::log(1.f + 15.f * u01(rng)), hd[i] = nd(rng);
        dalog = dev_copy(ha);
        ddt = dev_copy(hd);
        p.a_log = reinterpret_cast<unsigned long long>(dalog);
        p.dt_bias = reinterpret_cast<unsigned long long>(ddt);
        p.flags |= kFlagSafeGate | kFlagHasALog | kFlagHasDtBias | kFlagBetaSigmoid;
      }

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
      capture([&] { rewrite_f4<<<132 * 16, 256, 0, stream>>>(reinterpret_cast<float4*>(dpool2), n4, 1.f); });
      std::vector<std::vector<double>> t(ge.size());
      for (auto& x : ge) CK(cudaGraphLaunch(x, stream));  // warm-up
      for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < ge.size(); ++i) {
          const float ms = timer.ms([&] { CK(cudaGraphLaunch(ge[i], stream)); });
          t[i].push_back(1000.0 * ms / reps);
        }
      const double bytes = 2.0 * pool * 4;
      const double copy_us = std::min(median(t[sh.size()]), median(t[sh.size() + 1]));
      const double dec_us = median(t[0]);
      size_t best = 0;
      for (size_t i = 0; i < ge.size(); ++i) {
        const double us = median(t[i]);
        const std::string name = i < sh.size()       ? sh[i].name
                                 : i == sh.size()     ? "copy kernel (float4)"
                                 : i == sh.size() + 1 ? "cudaMemcpyAsync"
                                                      : "in-place rewrite (float4)";
        std::printf("%2d/%-3d %-5d %-28s %10.2f %10.3f %8.3f %8.3f\n", hq, ho, b, name.c_str(), us, bytes / us * 1e-6,
                    us / copy_us, us / dec_us);
        if (i < sh.size() && us < median(t[best])) best = i;
      }
      // The engine's pick (la_engine.h decode_small: at most kDecodeSmallPairs (sequence, head) pairs).
      const size_t pick = static_cast<long long>(b) * ho <= kDecodeSmallPairs ? 1 : 0;
      char line[320];
      std::snprintf(line, sizeof line,
                    "%2d/%-3d B=%-5d engine picks %-28s %8.2f us = %.3f x copy, %.3f x best (%s %.2f us)", hq, ho, b,
                    sh[pick].name.c_str(), median(t[pick]), median(t[pick]) / copy_us, median(t[pick]) / median(t[best]),
                    sh[best].name.c_str(), median(t[best]));
      summary.push_back(line);
      for (auto& x : ge) CK(cudaGraphExecDestroy(x));
      for (void* x : {static_cast<void*>(dq), static_cast<void*>(dk), static_cast<void*>(dv), static_cast<void*>(dg),
                      static_cast<void*>(db), static_cast<void*>(dcu), static_cast<void*>(didx),
                      static_cast<void*>(dpool), static_cast<void*>(dsave), static_cast<void*>(dpool2),
                      static_cast<void*>(dout), static_cast<void*>(dalog), static_cast<void*>(ddt)})
        if (x) CK(cudaFree(x));
    }
  std::printf("\n== summary (medians of %d interleaved rounds; copy = the faster of the copy kernel and cudaMemcpyAsync; bitwise checks: %s)\n", rounds,
              fails ? "FAILED" : "all shapes equal gdn_decode");
  for (const auto& s : summary) std::printf("%s\n", s.c_str());
  return fails ? 1 : 0;
}
