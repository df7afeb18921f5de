// gemm/kernels/gemm_v1.cu — version 1 of the gemm family: a tiled tensor-core
// GEMM with the graph's pointwise epilogue fused, correct for any M, N, K.
//
//   C[b, m, n] = epilogue(sum_k A[b, m, k] * B[b, k, n])   fp32 accumulation
//
// One CTA of 4 warps (2 x 2) computes a TILE_M x TILE_N tile of C; each warp a
// (TILE_M/2) x (TILE_N/2) sub-tile with mma.sync m16n8k16 (bf16 or fp16 in,
// fp32 out). K advances in steps of 32 through a STAGES-deep shared-memory ring
// filled by cp.async (16-byte copies, zero-filled past the edges) when the
// layout class is 16-byte aligned (OPGRAPH_GEMM_VEC == 8), else by element loads.
// Shared tiles keep the global layout (K-major or not), so every layout class
// uses the same copy code; fragments are gathered element-wise from them.
//
// Specialisation (prelude #defines, see gemm_common.cuh and gemm_kernel.cpp):
//   OPGRAPH_GEMM_IN        0 bf16, 1 fp16 (A and B)
//   OPGRAPH_GEMM_OUT       0 bf16, 1 fp16, 2 fp32 (C)
//   OPGRAPH_GEMM_A_KMAJOR  1: A's K axis is contiguous (row-major A); 0: M is
//   OPGRAPH_GEMM_B_KMAJOR  1: B's K axis is contiguous (column-major B); 0: N is
//   OPGRAPH_GEMM_VEC       8: contiguous extents and strides are multiples of 8 and
//                          bases 16-byte aligned; 1: no alignment assumed
//   OPGRAPH_GEMM_TILE_M / _TILE_N (64 or 128), OPGRAPH_GEMM_STAGES (2..4),
//   OPGRAPH_GEMM_RASTER (0: consecutive CTAs walk M, 1: walk N)
//   OPGRAPH_GEMM_EPILOGUE_BODY  statements updating float x from p, b0, b1, m, n
// Launch: grid (tiles_m * tiles_n, batch0 * batch1), block 128, dynamic shared
// memory gemm_v1_smem_bytes (mirrored by smem_bytes in engines/gemm/gemm_kernel.cpp).
#include "gemm/kernels/gemm_common.cuh"

#if !defined(OPGRAPH_GEMM_IN) || !defined(OPGRAPH_GEMM_OUT) || !defined(OPGRAPH_GEMM_A_KMAJOR) || \
    !defined(OPGRAPH_GEMM_B_KMAJOR) || !defined(OPGRAPH_GEMM_VEC) || !defined(OPGRAPH_GEMM_TILE_M) ||  \
    !defined(OPGRAPH_GEMM_TILE_N) || !defined(OPGRAPH_GEMM_STAGES) || !defined(OPGRAPH_GEMM_RASTER) || \
    !defined(OPGRAPH_GEMM_EPILOGUE_BODY)
#error "gemm_v1.cu: the specialisation prelude (engines/gemm/gemm_kernel.cpp) sets every OPGRAPH_GEMM_* define"
#endif

namespace {

using namespace opgraph_gemm;

constexpr int kBM = OPGRAPH_GEMM_TILE_M;
constexpr int kBN = OPGRAPH_GEMM_TILE_N;
constexpr int kBK = 32;
constexpr int kStages = OPGRAPH_GEMM_STAGES;
constexpr int kPad = 8;  // elements; keeps rows 16-byte aligned and spreads banks
constexpr int kThreads = 128;
constexpr int kWM = kBM / 2, kWN = kBN / 2;
constexpr int kMI = kWM / 16, kNI = kWN / 8;
constexpr bool kAK = OPGRAPH_GEMM_A_KMAJOR != 0;
constexpr bool kBKm = OPGRAPH_GEMM_B_KMAJOR != 0;
constexpr int kVec = OPGRAPH_GEMM_VEC;
// Shared tiles: [rows][contig + pad].
constexpr int kALd = kAK ? kBK + kPad : kBM + kPad;
constexpr int kARows = kAK ? kBM : kBK;
constexpr int kBLd = kBKm ? kBK + kPad : kBN + kPad;
constexpr int kBRows = kBKm ? kBN : kBK;
constexpr int kAElems = kARows * kALd, kBElems = kBRows * kBLd;

static_assert(kBM == 64 || kBM == 128, "TILE_M is 64 or 128");
static_assert(kBN == 64 || kBN == 128, "TILE_N is 64 or 128");
static_assert(kStages >= 2 && kStages <= 4, "STAGES is 2..4");
static_assert(kVec == 8 || kVec == 1, "VEC is 8 or 1");

__device__ __forceinline__ u32 smem_addr(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}

// Copies a rows x contig box (tile origin `g`, global row stride `ld` in
// elements, `rv` rows and `cv` contiguous elements valid) into shared `s`
// (row stride sld). Out-of-range elements become zero.
template <int ROWS, int CONTIG, int SLD>
__device__ __forceinline__ void load_tile(unsigned short* s, const unsigned short* g, i64 ld, i64 rv, i64 cv) {
  if constexpr (kVec == 8) {
    constexpr int kChunks = ROWS * CONTIG / 8;
    for (int i = threadIdx.x; i < kChunks; i += kThreads) {
      const int r = i / (CONTIG / 8), c = (i % (CONTIG / 8)) * 8;
      const bool ok = r < rv && c < cv;  // cv is a multiple of 8 in this class
      const unsigned short* src = ok ? g + r * ld + c : g;
      const u32 bytes = ok ? 16u : 0u;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(s + r * SLD + c)), "l"(src),
                   "r"(bytes));
    }
  } else {
    for (int i = threadIdx.x; i < ROWS * CONTIG; i += kThreads) {
      const int r = i / CONTIG, c = i % CONTIG;
      s[r * SLD + c] = (r < rv && c < cv) ? g[r * ld + c] : static_cast<unsigned short>(0);
    }
  }
}

__device__ __forceinline__ void cp_async_commit() {
  if constexpr (kVec == 8) asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  if constexpr (kVec == 8) asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ u32 pack2(unsigned short lo, unsigned short hi) {
  return static_cast<u32>(lo) | (static_cast<u32>(hi) << 16);
}

__device__ __forceinline__ void mma16816(float* d, const u32* a, const u32* b) {
#if OPGRAPH_GEMM_IN == 0
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

__device__ __forceinline__ unsigned short a_at(const unsigned short* s, int m, int k) {
  return kAK ? s[m * kALd + k] : s[k * kALd + m];
}
__device__ __forceinline__ unsigned short b_at(const unsigned short* s, int k, int n) {
  return kBKm ? s[n * kBLd + k] : s[k * kBLd + n];
}

}  // namespace

constexpr int gemm_v1_smem_bytes = kStages * (kAElems + kBElems) * 2;

extern "C" __global__ void __launch_bounds__(kThreads) gemm_v1(const GemmParams p) {
  extern __shared__ __align__(16) unsigned short smem[];
  unsigned short* As = smem;
  unsigned short* Bs = smem + kStages * kAElems;

  const i64 tiles_m = (p.m + kBM - 1) / kBM, tiles_n = (p.n + kBN - 1) / kBN;
  const i64 t = blockIdx.x;
#if OPGRAPH_GEMM_RASTER == 0
  const i64 tm = t % tiles_m, tn = t / tiles_m;
#else
  const i64 tn = t % tiles_n, tm = t / tiles_n;
#endif
  if (tm >= tiles_m || tn >= tiles_n) return;
  const i64 b0 = blockIdx.y / p.batch1, b1 = blockIdx.y % p.batch1;
  const i64 m0 = tm * kBM, n0 = tn * kBN;

  const unsigned short* ga =
      reinterpret_cast<const unsigned short*>(p.a.ptr) + b0 * p.a.s0 + b1 * p.a.s1 + m0 * p.a.sr;
  const unsigned short* gb =
      reinterpret_cast<const unsigned short*>(p.b.ptr) + b0 * p.b.s0 + b1 * p.b.s1 + n0 * p.b.sc;

  const i64 ktiles = (p.k + kBK - 1) / kBK;
  auto load_stage = [&](int stage, i64 kt) {
    const i64 k0 = kt * kBK;
    unsigned short* sa = As + stage * kAElems;
    unsigned short* sb = Bs + stage * kBElems;
    if constexpr (kAK) load_tile<kBM, kBK, kALd>(sa, ga + k0 * p.a.sc, p.a.sr, p.m - m0, p.k - k0);
    else load_tile<kBK, kBM, kALd>(sa, ga + k0 * p.a.sc, p.a.sc, p.k - k0, p.m - m0);
    if constexpr (kBKm) load_tile<kBN, kBK, kBLd>(sb, gb + k0 * p.b.sr, p.b.sc, p.n - n0, p.k - k0);
    else load_tile<kBK, kBN, kBLd>(sb, gb + k0 * p.b.sr, p.b.sr, p.k - k0, p.n - n0);
  };

  float acc[kMI][kNI][4];
#pragma unroll
  for (int i = 0; i < kMI; ++i)
#pragma unroll
    for (int j = 0; j < kNI; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp / 2) * kWM, wn = (warp % 2) * kWN;
  const int gr = lane / 4, gc = (lane % 4) * 2;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    cp_async_commit();
  }
  for (i64 kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    const i64 nk = kt + kStages - 1;
    if (nk < ktiles) load_stage(static_cast<int>(nk % kStages), nk);
    cp_async_commit();
    const unsigned short* sa = As + (kt % kStages) * kAElems;
    const unsigned short* sb = Bs + (kt % kStages) * kBElems;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      u32 af[kMI][4], bfr[kNI][2];
#pragma unroll
      for (int i = 0; i < kMI; ++i) {
        const int r = wm + i * 16 + gr, c = kk + gc;
        af[i][0] = pack2(a_at(sa, r, c), a_at(sa, r, c + 1));
        af[i][1] = pack2(a_at(sa, r + 8, c), a_at(sa, r + 8, c + 1));
        af[i][2] = pack2(a_at(sa, r, c + 8), a_at(sa, r, c + 9));
        af[i][3] = pack2(a_at(sa, r + 8, c + 8), a_at(sa, r + 8, c + 9));
      }
#pragma unroll
      for (int j = 0; j < kNI; ++j) {
        const int n = wn + j * 8 + gr, c = kk + gc;
        bfr[j][0] = pack2(b_at(sb, c, n), b_at(sb, c + 1, n));
        bfr[j][1] = pack2(b_at(sb, c + 8, n), b_at(sb, c + 9, n));
      }
#pragma unroll
      for (int i = 0; i < kMI; ++i)
#pragma unroll
        for (int j = 0; j < kNI; ++j) mma16816(acc[i][j], af[i], bfr[j]);
    }
  }
  cp_async_wait<0>();

  // Epilogue: the graph's pointwise chain in registers, then one store per element.
  const i64 cbase = b0 * p.c.s0 + b1 * p.c.s1;
#pragma unroll
  for (int i = 0; i < kMI; ++i)
#pragma unroll
    for (int j = 0; j < kNI; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const i64 m = m0 + wm + i * 16 + gr + (r >= 2 ? 8 : 0);
        const i64 n = n0 + wn + j * 8 + gc + (r & 1);
        if (m < p.m && n < p.n) {
          float x = acc[i][j][r];
          OPGRAPH_GEMM_EPILOGUE_BODY
          store_elem<OPGRAPH_GEMM_OUT>(p.c.ptr, cbase + m * p.c.sr + n * p.c.sc, x);
        }
      }
}
