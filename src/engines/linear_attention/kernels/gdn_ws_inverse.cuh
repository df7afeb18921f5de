// linear_attention/kernels/gdn_ws_inverse.cuh — T = (I + L)^-1 on the warp-specialised fused prefill's auxiliary
// warpgroup (ws::inverse_aux and its pieces: the diagonal blocks, the tensor-core merges, GDN_WS3_MERGE2's
// register hand-over, GDN_WS3_DIAG8's 8 x 8 blocks). A part of gdn_fused_ws.cuh, which includes it inside its
// namespaces once aux_sync, NoTick and the gdn_common.cuh pieces it uses are defined; not a header of its own.
// Its lane addressing is emulated in float64 by scripts/emulate_ws3_inverse.py.
#pragma once
namespace opgraph_gdn {
namespace ws {
// T = (I + L)^-1 by the auxiliary warpgroup's 128 threads (a: 0..127): the diagonal blocks by
// columns, then triangular_inverse_tc's two merge levels in one TF32 pass (level 2's eight tiles
// two a warp; GDN_WS3_MERGE2: a level a phase). Begins after L is readable; ends with T readable by the warpgroup. tick(4) once the
// diagonal blocks are done (GDN_WS_CLOCK under GDN_WS_R3). side(): what threads 64..127 do while
// threads 0..63 form the diagonal blocks (R3's GDN_WS3_GATES 2: the next chunk's gates).
struct NoSide {
  __device__ __forceinline__ void operator()() const {}
};
// GDN_WS3_MERGE2 (1, the engine's since 2026-12-04): each merge level in one phase: the warp that forms a tile
// of X (level 1) or a column of X2's tiles (level 2) keeps it in registers and hands it to the second product
// as its B operand (c_tile_as_b's shuffles) instead of parking it in tf behind a barrier (0: four phases, three
// barriers). The same products in the same order on the same bits: T is bitwise the same (H200: 0.964x the
// fused prefill's time, bench/results/2026-12-04-gdn-ws3-gates-merge-h200.txt).
#ifndef GDN_WS3_MERGE2
#define GDN_WS3_MERGE2 1
#endif
// An m16n8 accumulator tile X as the B operand of m16n8k8 mma over its 16 rows (k-steps 0 and 1): lane (g, t)
// gets X[t][g], X[t + 4][g] (b[0]) and X[8 + t][g], X[12 + t][g] (b[1]); X[r][col] lives in lane 4 (r % 8) +
// col / 2, c[2 (r >= 8) + col % 2].
__device__ __forceinline__ void c_tile_as_b(const float (&c)[4], float (*b)[2], int lane) {
  const int g = lane >> 2, t = lane & 3;
  const int s0 = 4 * t + (g >> 1), s1 = 4 * (t + 4) + (g >> 1);
  float v0[4], v1[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    v0[q] = __shfl_sync(0xffffffffu, c[q], s0);
    v1[q] = __shfl_sync(0xffffffffu, c[q], s1);
  }
  const bool odd = (g & 1) != 0;
  b[0][0] = odd ? v0[1] : v0[0];
  b[0][1] = odd ? v1[1] : v1[0];
  b[1][0] = odd ? v0[3] : v0[2];
  b[1][1] = odd ? v1[3] : v1[2];
}
// c += A[16 x 8 nks] B, A fp32 in shared memory (row stride LDF), B's k-steps in registers (c_tile_as_b's form),
// one TF32 pass as warp_mma_3xtf32<1, kRaw>.
template <bool kRaw>
__device__ __forceinline__ void warp_mma_rb(float (&c)[4], const float* A, const float (*b)[2], int nks, int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
    if (ks >= nks) break;
    const int k = 8 * ks;
    const float av[4] = {A[g * LDF + k + t], A[(g + 8) * LDF + k + t], A[g * LDF + k + t + 4],
                         A[(g + 8) * LDF + k + t + 4]};
    u32 ah[4], bh[2];
#pragma unroll
    for (int i = 0; i < 4; ++i) ah[i] = kRaw ? __float_as_uint(av[i]) : tf32_of(av[i]);
#pragma unroll
    for (int i = 0; i < 2; ++i) bh[i] = kRaw ? __float_as_uint(b[ks][i]) : tf32_of(b[ks][i]);
    mma_tf32(c, ah, bh);
  }
}
// GDN_WS3_ADDR32 1 (the engine's since 2026-12-05: the prefill 0.972-0.987x on the H200, outputs bitwise equal,
// bench/results/2026-12-05-gdn-trials-h200.txt): the MERGE2 levels' shared-memory accesses by 32-bit shared
// addresses. NVRTC keeps pointers into shared memory 64 bits wide, and its machine code of the two merge phases was 137
// and 362 instructions against nvcc's 74 and 223 (the address arithmetic: IMAD, VIADD, IADD3; scripts/sass_mix.py on
// both cubins), on the auxiliary side, the fused prefill's critical path. The loads are non-volatile asm taking a
// token that a volatile asm issues right after the phase's barrier (so none is hoisted above it; the volatile mma that
// consumes each keeps it before the next barrier; a phase's reads are of data no thread writes in that phase, so
// loads the compiler merges or reorders read the same values); the stores are volatile 32-bit st.shared. Every
// product and value is the engine's form's (T bitwise equal expected). An earlier trial with volatile loads matched
// nvcc's machine code but not its speed (their order fixed): docs/linear_attention_log.md. 0: generic pointers.
#ifndef GDN_WS3_ADDR32
#define GDN_WS3_ADDR32 1
#endif
// A token ordered after the barrier before it (a volatile asm keeps its place among volatile asms).
__device__ __forceinline__ u32 phase_token() {
  u32 t;
  asm volatile("mov.u32 %0, 0;\n" : "=r"(t)::"memory");
  return t;
}
// An fp32 load from shared address a, after the barrier whose token `tok` is (no memory effect declared: the compiler
// may merge or reorder it among the phase's loads).
__device__ __forceinline__ float lds_f32(u32 a, u32 tok) {
  float v;
  asm("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(a), "r"(tok));
  return v;
}
__device__ __forceinline__ u32 lds_u32(u32 a, u32 tok) {
  u32 v;
  asm("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(a), "r"(tok));
  return v;
}
__device__ __forceinline__ void sts_f32(u32 a, float v) {
  asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(a), "f"(v) : "memory");
}
// warp_mma_3xtf32<1, raw> (one pass, the operands' bits as they are) over shared addresses A and B (bytes; rows LDF
// floats apart).
__device__ __forceinline__ void warp_mma_tf32_s(float (&c)[4], u32 A, u32 B, int k0, int k1, int lane, u32 tok) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int k = k0; k < k1; k += 8) {
    const u32 a0 = A + 4u * static_cast<u32>(g * LDF + k + t), b0 = B + 4u * static_cast<u32>((k + t) * LDF + g);
    const u32 a[4] = {__float_as_uint(lds_f32(a0, tok)), __float_as_uint(lds_f32(a0 + 4u * 8u * LDF, tok)),
                      __float_as_uint(lds_f32(a0 + 16u, tok)), __float_as_uint(lds_f32(a0 + 4u * 8u * LDF + 16u, tok))};
    const u32 b[2] = {__float_as_uint(lds_f32(b0, tok)), __float_as_uint(lds_f32(b0 + 4u * 4u * LDF, tok))};
    mma_tf32(c, a, b);
  }
}
// warp_mma_rb<raw> with A at shared address A.
__device__ __forceinline__ void warp_mma_rb_s(float (&c)[4], u32 A, const float (*b)[2], int nks, int lane, u32 tok) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
    if (ks >= nks) break;
    const u32 a0 = A + 4u * static_cast<u32>(g * LDF + 8 * ks + t);
    const u32 a[4] = {__float_as_uint(lds_f32(a0, tok)), __float_as_uint(lds_f32(a0 + 4u * 8u * LDF, tok)),
                      __float_as_uint(lds_f32(a0 + 16u, tok)), __float_as_uint(lds_f32(a0 + 4u * 8u * LDF + 16u, tok))};
    const u32 bb[2] = {__float_as_uint(b[ks][0]), __float_as_uint(b[ks][1])};
    mma_tf32(c, a, bb);
  }
}
// store_neg_tile at shared address D.
__device__ __forceinline__ void store_neg_tile_s(u32 D, const float (&c)[4], int lane) {
  const int g = lane >> 2, t = lane & 3;
  const u32 d0 = D + 4u * static_cast<u32>(g * LDF + 2 * t);
  sts_f32(d0, -c[0]);
  sts_f32(d0 + 4u, -c[1]);
  sts_f32(d0 + 4u * 8u * LDF, -c[2]);
  sts_f32(d0 + 4u * 8u * LDF + 4u, -c[3]);
}
// GDN_WS3_DIAG8 (a variant under trial; H200 0.978-1.005x on top of LD 68, 1.007-1.022x on top of the four-column
// reads (bench/results/2026-12-04-gdn-ws3-trials2-h200.txt), O within 1.2e-4: left off, the gates
// beside the chain run nearly as long, bench/results/2026-12-04-gdn-ws3-clocks-warps-h200.txt): the 16 x 16 diagonal blocks as 8 x 8 ones by
// column substitution (an 8-step chain a thread: 28 FMAs and loads where the 16 x 16 chain takes 120), then their
// 8 -> 16 merge on mma (merge8_warp, a warp a block), one barrier more. Its lane addressing is emulated in float64,
// with unwritten entries poisoned: python3 scripts/emulate_ws3_inverse.py (also the MERGE2 levels).
#ifndef GDN_WS3_DIAG8
#define GDN_WS3_DIAG8 0
#endif
// Thread tid (0..63): column tid % 8 of the 8 x 8 diagonal block tid / 8 of T (inverse_diagonal_blocks_col<8>),
// and the zeros of its 16 x 16 block's upper right quarter (tid / 8 even).
__device__ __forceinline__ void inverse_diagonal_blocks8_col(const float* lf, float* tf, int tid) {
  inverse_diagonal_blocks_col<8>(lf, tf, tid);
  if (((tid >> 3) & 1) == 0) {
    const int b8 = (tid >> 3) * 8, j = b8 + (tid & 7);
#pragma unroll
    for (int i = 0; i < 8; ++i) tf[(b8 + i) * LDF + j + 8] = 0.f;
  }
}
// The 8 -> 16 merge of the 16 x 16 diagonal block at 16 w (warp w of the aux side): X = L21 T11, T21 = -T22 X, on
// m16n8k8 mma with A's rows 8..15 zero (8 x 8 operands), X handed to the second product by c_tile_as_b.
template <bool kRaw>
__device__ __forceinline__ void merge8_warp(const float* lf, float* tf, int w, int lane) {
  const int g = lane >> 2, t = lane & 3, o = 16 * w;
  auto bits = [](float x) { return kRaw ? __float_as_uint(x) : tf32_of(x); };
  const float* l21 = lf + (o + 8) * LDF + o;
  const float* t11 = tf + o * LDF + o;
  float x[4] = {0.f, 0.f, 0.f, 0.f}, xb[2][2];
  {
    const u32 a[4] = {bits(l21[g * LDF + t]), 0u, bits(l21[g * LDF + t + 4]), 0u};
    const u32 b[2] = {bits(t11[t * LDF + g]), bits(t11[(t + 4) * LDF + g])};
    mma_tf32(x, a, b);
  }
  c_tile_as_b(x, xb, lane);  // k-step 0: X's rows 0..7 (its rows 8..15 are zero)
  const float* t22 = tf + (o + 8) * LDF + o + 8;
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  {
    const u32 a[4] = {bits(t22[g * LDF + t]), 0u, bits(t22[g * LDF + t + 4]), 0u};
    const u32 b[2] = {bits(xb[0][0]), bits(xb[0][1])};
    mma_tf32(c, a, b);
  }
  tf[(o + 8 + g) * LDF + o + 2 * t] = -c[0];
  tf[(o + 8 + g) * LDF + o + 2 * t + 1] = -c[1];
}
// The 16 x 16 diagonal blocks of T (threads 0..63; R3's form since 2026-12-04): inverse_diagonal_blocks_col's chain
// reading L four columns at a time: for columns s0 .. s0 + 3 every later row's four entries by one 16-byte load (36
// loads a thread instead of 120), then the four steps. The same FMAs in the same order: T bitwise the column form's
// (scripts/emulate_ws3_inverse.py checks it in float64). H200: 0.970-0.981x, outputs bitwise equal
// (bench/results/2026-12-04-gdn-ws3-trials2-h200.txt). Needs LDF % 4 == 0 (GDN_WS3_LD 65 keeps the column form; a
// template, so that build never instantiates it).
template <int N = 16>
__device__ __forceinline__ void inverse_diagonal_blocks_col_v4(const float* lf, float* tf, int tid) {
  static_assert(N == 16 && LDF % 4 == 0, "inverse_diagonal_blocks_col_v4: 16 x 16 blocks, L's rows 16-byte aligned");
  const int b0 = tid & ~(N - 1), jj = tid & (N - 1), j = b0 + jj;
  float acc[N];
#pragma unroll
  for (int i = 0; i < N; ++i) acc[i] = 0.f;
#pragma unroll
  for (int s0 = 0; s0 < N; s0 += 4) {
    float4 lv[N];  // rows s0 + 1 .. N - 1, columns s0 .. s0 + 3
#pragma unroll
    for (int i = s0 + 1; i < N; ++i) lv[i] = *reinterpret_cast<const float4*>(lf + (b0 + i) * LDF + b0 + s0);
#pragma unroll
    for (int s = s0; s < s0 + 4; ++s) {
      const float xs = s == jj ? 1.f : (s > jj ? -acc[s] : 0.f);
      acc[s] = xs;
#pragma unroll
      for (int i = s + 1; i < N; ++i) {
        const float l = s - s0 == 0 ? lv[i].x : s - s0 == 1 ? lv[i].y : s - s0 == 2 ? lv[i].z : lv[i].w;
        acc[i] += l * xs;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < N; ++i) tf[(b0 + i) * LDF + j] = acc[i];
}
// GDN_WS3_F16INV (a trial, 0: off; 0.934-0.949x the prefill's time on an H100, bench/results/
// 2026-12-06-gdn-f16inv-h100.txt; it waits for a plan rule for its domain, docs/linear_attention.md): the forward
// forms' inverse on fp16 tiles fed by ldmatrix, the schedule of FlashInfer's sm90 prefill (docs/linear_attention.md,
// "What is left"): the L / P epilogue stores L as fp16 pairs (rows LH halves apart, in lf's space), the 16 x 16
// diagonal blocks run the same column substitution in fp32 reading L eight columns a 16-byte load and store T's blocks
// as fp16 (in tf's space), and the two merge levels form T21 = -T22 L21 T11 transposed — Y = T11^T L21^T, then Z = -Y
// T22^T and T21 = Z^T — on m16n8k16 fp16 mma: A and B fragments by ldmatrix (T11^T by .trans), Y's accumulators handed
// to the second product as its A operand in registers (no shuffles), Z stored transposed by stmatrix .trans; the T_v
// copy reads T as fp16. Precision: scripts/emulate_inverse_precision.py (the same error as the TF32 form once T_v is
// bf16). The backward's recompute forms keep the fp32 form (they store T to global memory as it is). (Its default and
// LH, the tiles' row stride: gdn_fused_ws.cuh, before the L / P epilogue that stores L.)
__device__ __forceinline__ void mma_f16(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// An fp16 pair (lo in the low half) as two floats.
__device__ __forceinline__ float2 f16x2_to_f32(u32 w) {
  return make_float2(f16_to_f32(static_cast<u16>(w)), f16_to_f32(static_cast<u16>(w >> 16)));
}
// The 16 x 16 diagonal blocks of T from fp16 L (threads 0..63: column tid % 16 of block tid / 16):
// inverse_diagonal_blocks_col_v4's chain with L read eight columns a 16-byte load; T's block to fp16 (its entries
// above the diagonal as zeros).
__device__ __forceinline__ void inverse_diagonal_blocks_h(const u16* lh, u16* th, int tid) {
  constexpr int N = 16;
  const int b0 = tid & ~(N - 1), jj = tid & (N - 1), j = b0 + jj;
  float acc[N];
#pragma unroll
  for (int i = 0; i < N; ++i) acc[i] = 0.f;
#pragma unroll
  for (int s0 = 0; s0 < N; s0 += 8) {
    uint4 lv[N];  // rows s0 + 1 .. N - 1, columns s0 .. s0 + 7 (fp16 pairs)
#pragma unroll
    for (int i = s0 + 1; i < N; ++i) lv[i] = *reinterpret_cast<const uint4*>(lh + (b0 + i) * LH + b0 + s0);
#pragma unroll
    for (int s = s0; s < s0 + 8; ++s) {
      const float xs = s == jj ? 1.f : (s > jj ? -acc[s] : 0.f);
      acc[s] = xs;
#pragma unroll
      for (int i = s + 1; i < N; ++i) {
        const int q = (s - s0) >> 1;
        const u32 w = q == 0 ? lv[i].x : q == 1 ? lv[i].y : q == 2 ? lv[i].z : lv[i].w;
        const float2 l2 = f16x2_to_f32(w);
        acc[i] += ((s - s0) & 1 ? l2.y : l2.x) * xs;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < N; ++i) th[(b0 + i) * LH + j] = f32_to_f16(acc[i]);
}
__device__ __forceinline__ void stsm4_trans(const u16* row, u32 r0, u32 r1, u32 r2, u32 r3) {
  stmatrix_x4_trans(static_cast<u32>(__cvta_generic_to_shared(row)), r0, r1, r2, r3);
}
// The two merge levels on fp16 tiles (the aux warpgroup's 128 threads a; two barriers). Lane l names row l % 8 of
// ldmatrix / stmatrix matrix q = l / 8; matrix q of a 16 x 16 operand: rows 8 (q / 2), columns 8 (q % 2).
__device__ __forceinline__ void merges_h(const u16* lh, u16* th, int a) {
  const int lane = a & 31, warp = a >> 5, l8 = lane & 7, lq = lane >> 3;
  const int mr = 8 * (lq >> 1) + l8, mc = 8 * (lq & 1);  // this lane's row and column in a 16 x 16 operand
  if ((warp & 1) == 0) {  // level 1, warps 0 and 2: the 32 x 32 block at o
    const int o = 16 * warp;
    u32 at[4], bl[4], bt[4];
    ldsm4<true>(at, th + (o + mr) * LH + o + mc);        // A = T11^T
    ldsm4<false>(bl, lh + (o + 16 + mr) * LH + o + mc);  // B = L21^T: n-tile q / 2, k-half q % 2
    float y[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
    mma_f16(y[0], at, bl[0], bl[1]);
    mma_f16(y[1], at, bl[2], bl[3]);
    const u32 ay[4] = {pack_f16(-y[0][0], -y[0][1]), pack_f16(-y[0][2], -y[0][3]), pack_f16(-y[1][0], -y[1][1]),
                       pack_f16(-y[1][2], -y[1][3])};
    ldsm4<false>(bt, th + (o + 16 + mr) * LH + o + 16 + mc);  // B = T22^T
    float z[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
    mma_f16(z[0], ay, bt[0], bt[1]);
    mma_f16(z[1], ay, bt[2], bt[3]);
    stsm4_trans(th + (o + 16 + mr) * LH + o + mc, pack_f16(z[0][0], z[0][1]), pack_f16(z[0][2], z[0][3]),
                pack_f16(z[1][0], z[1][1]), pack_f16(z[1][2], z[1][3]));  // T21 = Z^T
  }
  aux_sync();
  {  // level 2: warp w forms Z's rows 16 mi .. (T21's columns) and columns 16 nh .. (T21's rows)
    const int mi = warp >> 1, nh = warp & 1;
    float y[4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j) y[j][0] = y[j][1] = y[j][2] = y[j][3] = 0.f;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      if (s < mi) continue;  // T11's block above its diagonal: zero
      u32 at[4], bl[4];
      ldsm4<true>(at, th + (16 * s + mr) * LH + 16 * mi + mc);  // A = T11^T, k-step s
#pragma unroll
      for (int nn = 0; nn < 2; ++nn) {
        ldsm4<false>(bl, lh + (32 + 16 * nn + mr) * LH + 16 * s + mc);  // B = L21^T, n-tiles 2 nn, 2 nn + 1
        mma_f16(y[2 * nn], at, bl[0], bl[1]);
        mma_f16(y[2 * nn + 1], at, bl[2], bl[3]);
      }
    }
    float z[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      if (nh == 0 && s == 1) continue;  // T22's block above its diagonal: zero
      const u32 ay[4] = {pack_f16(-y[2 * s][0], -y[2 * s][1]), pack_f16(-y[2 * s][2], -y[2 * s][3]),
                         pack_f16(-y[2 * s + 1][0], -y[2 * s + 1][1]), pack_f16(-y[2 * s + 1][2], -y[2 * s + 1][3])};
      u32 bt[4];
      ldsm4<false>(bt, th + (32 + 16 * nh + mr) * LH + 32 + 16 * s + mc);  // B = T22^T, k-step s
      mma_f16(z[0], ay, bt[0], bt[1]);
      mma_f16(z[1], ay, bt[2], bt[3]);
    }
    stsm4_trans(th + (32 + 16 * nh + mr) * LH + 16 * mi + mc, pack_f16(z[0][0], z[0][1]), pack_f16(z[0][2], z[0][3]),
                pack_f16(z[1][0], z[1][1]), pack_f16(z[1][2], z[1][3]));
  }
  aux_sync();
}
// t_copy<false>'s form for fp16 T (GDN_WS3_F16INV): T_v = T diag(beta) to the tile at tv, task q (row q / 4, columns
// 16 (q % 4) .. + 15, two 16-byte swizzled chunks), T's 16 columns by two 16-byte loads; blocks above the diagonal
// blocks go out as zeros (T's entries there are never written).
__device__ __forceinline__ void t_copy_h(int q, const u16* th, u32 bet_at, u32 tv) {
  const int r = q >> 2, g = q & 3, s = 16 * g;
  u32 wv[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) wv[i] = 0u;
  if (g <= (r >> 4)) {
    const uint4 h0 = *reinterpret_cast<const uint4*>(th + r * LH + s);
    const uint4 h1 = *reinterpret_cast<const uint4*>(th + r * LH + s + 8);
    const u32 hw[8] = {h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w};
#pragma unroll
    for (int q4 = 0; q4 < 4; ++q4) {
      const float4 v4 = lds128f(bet_at + 4u * static_cast<u32>(s + 4 * q4));
      const float2 t01 = f16x2_to_f32(hw[2 * q4]), t23 = f16x2_to_f32(hw[2 * q4 + 1]);
      wv[2 * q4] = pack_bf16(t01.x * v4.x, t01.y * v4.y);
      wv[2 * q4 + 1] = pack_bf16(t23.x * v4.z, t23.y * v4.w);
    }
  }
  const u32 o0 = static_cast<u32>(r) * 128u + swz_chunk(r, s), o1 = static_cast<u32>(r) * 128u + swz_chunk(r, s + 8);
  sts128(tv + o0, wv[0], wv[1], wv[2], wv[3]);
  sts128(tv + o1, wv[4], wv[5], wv[6], wv[7]);
}
template <bool kH = false, class Tick = NoTick, class Side = NoSide>
__device__ __forceinline__ void inverse_aux(const float* lf, float* tf, int a, Tick tick = {}, Side side = {}) {
  if constexpr (kH) {  // GDN_WS3_F16INV: fp16 tiles in lf's and tf's space
    if (a < 64) inverse_diagonal_blocks_h(reinterpret_cast<const u16*>(lf), reinterpret_cast<u16*>(tf), a);
    else side();
    aux_sync();
    tick(4);
    merges_h(reinterpret_cast<const u16*>(lf), reinterpret_cast<u16*>(tf), a);
    return;
  }
  if (a < 64) {
    if (GDN_WS3_DIAG8) inverse_diagonal_blocks8_col(lf, tf, a);
    else if constexpr (LDF % 4 == 0) inverse_diagonal_blocks_col_v4(lf, tf, a);
    else inverse_diagonal_blocks_col(lf, tf, a);
  } else {
    side();
  }
  aux_sync();
  if (GDN_WS3_DIAG8) {
    merge8_warp<GDN_WS3_TF32RAW != 0>(lf, tf, a >> 5, a & 31);
    aux_sync();
  }
  tick(4);
  const int lane = a & 31, warp = a >> 5;
  const int p = (warp >> 1) & 1, nt = warp & 1, o = 32 * p;
  constexpr bool kRaw = GDN_WS3_TF32RAW != 0;
  if (GDN_WS3_MERGE2 && GDN_WS3_ADDR32 && GDN_WS3_TF32RAW) {  // the same two phases by 32-bit shared addresses
    const u32 ls = static_cast<u32>(__cvta_generic_to_shared(lf)), ts = static_cast<u32>(__cvta_generic_to_shared(tf));
    auto at = [](u32 base, int r, int col) { return base + 4u * static_cast<u32>(r * LDF + col); };
    u32 tok = phase_token();
    {
      float x[4] = {0.f, 0.f, 0.f, 0.f}, xb[2][2];
      warp_mma_tf32_s(x, at(ls, o + 16, o), at(ts, o, o + 8 * nt), 0, 16, lane, tok);
      c_tile_as_b(x, xb, lane);
      float c[4] = {0.f, 0.f, 0.f, 0.f};
      warp_mma_rb_s(c, at(ts, o + 16, o + 16), xb, 2, lane, tok);
      store_neg_tile_s(at(ts, o + 16, o + 8 * nt), c, lane);
    }
    aux_sync();
    tok = phase_token();
    {
      const int nj = warp;
      float x2[2][4], xb[4][2];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
        for (int q = 0; q < 4; ++q) x2[mi][q] = 0.f;
        warp_mma_tf32_s(x2[mi], at(ls, 32 + 16 * mi, 0), at(ts, 0, 8 * nj), nj >= 2 ? 16 : 0, 32, lane, tok);
      }
      c_tile_as_b(x2[0], xb, lane);
      c_tile_as_b(x2[1], xb + 2, lane);
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        float c[4] = {0.f, 0.f, 0.f, 0.f};
        warp_mma_rb_s(c, at(ts, 32 + 16 * mi, 32), xb, mi == 0 ? 2 : 4, lane, tok);
        store_neg_tile_s(at(ts, 32 + 16 * mi, 8 * nj), c, lane);
      }
    }
    aux_sync();
    return;
  }
  if (GDN_WS3_MERGE2) {
    {  // level 1: X = l a (registers), T21 = -b X
      float x[4] = {0.f, 0.f, 0.f, 0.f}, xb[2][2];
      warp_mma_3xtf32<1, kRaw>(x, lf + (o + 16) * LDF + o, tf + o * LDF + o + 8 * nt, 0, 16, lane);
      c_tile_as_b(x, xb, lane);
      float c[4] = {0.f, 0.f, 0.f, 0.f};
      warp_mma_rb<kRaw>(c, tf + (o + 16) * LDF + o + 16, xb, 2, lane);
      store_neg_tile(tf + (o + 16) * LDF + o + 8 * nt, c, lane);
    }
    aux_sync();
    {  // level 2: X2 = L21 A (both row tiles of column tile nj = warp), then -B X2
      const int nj = warp;
      float x2[2][4], xb[4][2];  // X2's k-steps: rows 0-7, 8-15 (tile 0), 16-23, 24-31 (tile 1)
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
        for (int q = 0; q < 4; ++q) x2[mi][q] = 0.f;
        warp_mma_3xtf32<1, kRaw>(x2[mi], lf + (32 + 16 * mi) * LDF, tf + 8 * nj, nj >= 2 ? 16 : 0, 32, lane);
      }
      c_tile_as_b(x2[0], xb, lane);
      c_tile_as_b(x2[1], xb + 2, lane);
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        float c[4] = {0.f, 0.f, 0.f, 0.f};
        warp_mma_rb<kRaw>(c, tf + (32 + 16 * mi) * LDF + 32, xb, mi == 0 ? 2 : 4, lane);
        store_neg_tile(tf + (32 + 16 * mi) * LDF + 8 * nj, c, lane);
      }
    }
    aux_sync();
    return;
  }
  {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<1, GDN_WS3_TF32RAW != 0>(c, lf + (o + 16) * LDF + o, tf + o * LDF + o + 8 * nt, 0, 16, lane);
    store_tile(tf + o * LDF + o + 16 + 8 * nt, c, lane);
  }
  aux_sync();
  {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<1, GDN_WS3_TF32RAW != 0>(c, tf + (o + 16) * LDF + o + 16, tf + o * LDF + o + 16 + 8 * nt, 0, 16, lane);
    store_neg_tile(tf + (o + 16) * LDF + o + 8 * nt, c, lane);
  }
  aux_sync();
  const int nj = warp;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<1, GDN_WS3_TF32RAW != 0>(c, lf + (32 + 16 * mi) * LDF, tf + 8 * nj, nj >= 2 ? 16 : 0, 32, lane);
    store_tile(tf + 16 * mi * LDF + 32 + 8 * nj, c, lane);
  }
  aux_sync();
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<1, GDN_WS3_TF32RAW != 0>(c, tf + (32 + 16 * mi) * LDF + 32, tf + 32 + 8 * nj, 0, mi == 0 ? 16 : 32, lane);
    store_neg_tile(tf + (32 + 16 * mi) * LDF + 8 * nj, c, lane);
  }
  aux_sync();
}

}  // namespace ws
}  // namespace opgraph_gdn
