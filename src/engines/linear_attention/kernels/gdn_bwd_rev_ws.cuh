// linear_attention/kernels/gdn_bwd_rev_ws.cuh — gdn_bwd_rev_fused: the gdn backward's reverse scan on three
// warpgroups (the backward's PIPELINE_ARCH 3, with gdn_bwd_fwd_fused before it), in place of gdn_bwd_rev_scan's
// two CTAs of 64-row V slices. A part of gdn_fused_ws.cuh (its warp-specialised build, after ws3_pass), whose
// wgmma wrappers, descriptors, swizzle, named barriers and bwd_store_* helpers it uses; not a header of its own.
//
// One CTA of 384 threads per (output head, sequence) walks the sequence's chunks from the last:
//   warpgroups 0, 1  dS^T's value rows [64 w, 64 w + 64), fp32 in their wgmma accumulators (the forward's S^T
//                    layout); per chunk: dS^T (the gradient of the state after the chunk) to the workspace as
//                    bf16, <S^T, dS^T> over its rows (a partial sum a warp), then on wgmma
//                      dVn^T = dS^T Kd^T + (scale dO)^T P          (dS^T packed to bf16 as a register A operand)
//                      dS^T  = e^gamma_C dS^T + (scale dO)^T Qe + dVn^T Wn   (dVn^T packed to bf16 likewise)
//                    and dVn to the workspace (bf16, staged through the warpgroup's dO panel once read).
//   warpgroup 2      the loader, up to two chunks ahead: the chunk's Qe, Wn, Kd, P (the forward recompute's
//                    or the prep's tiles) and S^T at its start by cp.async into the stage's swizzled tiles,
//                    dO (its run-time type) read, scaled, rounded to bf16 and stored swizzled, e^gamma_C.
// Two stages (three under the GDN_BWD_SDS_IN_GRADS trial); FULL(s) (the loader arrives, the state side syncs) and
// EMPTY(s) (the state side arrives once done with the stage's chunk, the loader syncs before it refills the stage),
// each balanced: an arrive only where a sync will meet it. The same formulas, roundings and stores as
// gdn_bwd_rev_scan (PH 0): dS^T and dVn enter their products as bf16, dVn is stored as the bf16 it entered the update
// as, and d_initial_state (dS^T at the sequence's start) is written at the end, after each warpgroup read its
// d_final_state rows at the start (the two may be one buffer). <S^T, dS^T>'s partial sums go to slots 4 w + warp of
// the chunk's 16 (slots 8 .. 15 zero), which gdn_bwd_grads adds in a fixed order.
#pragma once

#ifndef GDN_BWD_REV_SDS32
// 1 (an A/B form: 1.002-1.010x on the H200, bench/results/2026-12-05-gdn-trials-h200.txt): the state warps'
// <S^T, dS^T> reads of the chunk's S^T tile (32 a thread and
// chunk) as 32-bit shared loads (lds_u32, kernels/gdn_ws_inverse.cuh: non-volatile, ordered after the FULL barrier
// by its token) instead of loads through a generic pointer, whose 64-bit address arithmetic under NVRTC made the
// state loop 736 instructions against nvcc's 628 (scripts/nvrtc_vs_nvcc.sh, with GDN_BWD_REV_LOADER=2). The same
// words are read, so the sums are bitwise the same. 0: the engine's build.
#define GDN_BWD_REV_SDS32 0
#endif
#ifndef GDN_BWD_REV_LOADER
// The loader's form. 1 (the engine's, measured on the H200): each chunk's pieces addressed from scratch, the chunk
// handed over once all its requests landed. 2 (an A/B form: 1.03-1.09x slower on the H200,
// bench/results/2026-12-05-gdn-trials-h200.txt): each thread's piece offsets formed
// once (a piece's row keeps r & 7: constant strides) and chunk i's tiles requested before chunk i - 1 is handed
// over (cp.async.wait_group 1) — the profile of 1 had the state warps 25 % at FULL and the loader's instructions
// mostly address arithmetic (bench/results/2026-12-05-gdn-bwd-fused-profile-h200.txt).
#define GDN_BWD_REV_LOADER 1
#endif

namespace opgraph_gdn {
namespace ws {
namespace rv {
// A stage (bytes from its base; stage s at s * kVBytes): Qe, Wn, Kd [64][128] bf16 as two 64-column panels, dO
// [64][128] bf16 (scaled; warpgroup w's columns in panel w), P [64][64] (128-byte rows swizzled as the forward's
// tiles), S^T [128][128] bf16 in rows of kVStRow bytes (16-byte aligned, reads by pairs bank-conflict free), e^gamma_C.
constexpr u32 kVQe = 0, kVWn = 16384, kVKd = 32768, kVDo = 49152, kVP = 65536, kVSt = 73728;
constexpr u32 kVStRow = 272;
// GDN_BWD_SDS_IN_GRADS (gdn_bwd_params.cuh; a trial): no S^T in a stage (e^gamma_C where it began), 73 KiB a stage, and
// three stages in place of two. FULL(s) and EMPTY(s) are then named barriers 4 + s and 8 + s.
constexpr int kStages = GDN_BWD_SDS_IN_GRADS ? 3 : 2;
constexpr u32 kVEgc = GDN_BWD_SDS_IN_GRADS ? kVSt : kVSt + 128 * kVStRow;
constexpr u32 kVBytes = GDN_BWD_SDS_IN_GRADS ? 74752 : 109568;  // 73 / 107 KiB: the tiles stay 1024-aligned
constexpr int kRvFull = 4, kRvEmpty = GDN_BWD_SDS_IN_GRADS ? 8 : 6;
static_assert(kVEgc + 4 <= kVBytes && kVBytes % 1024 == 0, "reverse stage overflow");
static_assert(kStages * kVBytes + 1024 == gdn_bwd_rev_fused_smem_bytes(D), "gdn_bwd_rev_fused_smem_bytes disagrees");
// Chunk i's stage (i >= 0).
__device__ __forceinline__ int rv_stage(int i) { return kStages == 2 ? (i & 1) : i % kStages; }
}  // namespace rv
// (FULL(s) and EMPTY(s) are named barriers kRvFull + s and kRvEmpty + s — ws_pass's kBarFull + s and kBarEmpty + s
// with two stages; 1, 2 are wg_sync's.)

// Accumulator fragments x (m64nN, N = 16 NK) as the bf16 register A operand of NK k16 steps: a[kk][q] = (x[8 kk + 2 q],
// x[8 kk + 2 q + 1]).
template <int NK>
__device__ __forceinline__ void pack_a(const float* x, u32 (&a)[NK][4]) {
#pragma unroll
  for (int kk = 0; kk < NK; ++kk)
#pragma unroll
    for (int q = 0; q < 4; ++q) a[kk][q] = pack_bf16(x[8 * kk + 2 * q], x[8 * kk + 2 * q + 1]);
}
// The dynamic shared memory's first 1024-aligned byte (the swizzled tiles' alignment): generic and shared-window
// addresses.
struct Base1024 {
  unsigned char* ptr;
  u32 at;
};
__device__ __forceinline__ Base1024 base_1024(unsigned char* smem_raw) {
  const u32 raw = static_cast<u32>(__cvta_generic_to_shared(smem_raw));
  const u32 pad = (1024u - (raw & 1023u)) & 1023u;
  return {smem_raw + pad, raw + pad};
}
// A byte offset of the backward's workspace as a typed pointer.
template <class T>
__device__ __forceinline__ T* rv_ws(const GdnBwdParams& p, long long off) {
  return reinterpret_cast<T*>(p.ws + static_cast<unsigned long long>(off));
}

// A piece of dO as loaded (8 elements: 16-bit types in w[0], fp32 across w[0] and w[1]) as floats.
__device__ __forceinline__ void do_piece_floats(const uint4 (&w)[2], bool f32, bool bf, float (&x)[8]) {
  const u32 u[8] = {w[0].x, w[0].y, w[0].z, w[0].w, w[1].x, w[1].y, w[1].z, w[1].w};
#pragma unroll
  for (int e = 0; e < 8; e += 2) {
    if (f32) {
      x[e] = __uint_as_float(u[e]);
      x[e + 1] = __uint_as_float(u[e + 1]);
    } else {
      const u32 v = u[e >> 1];
      const u16 lo = static_cast<u16>(v), hi = static_cast<u16>(v >> 16);
      x[e] = bf ? bf16_to_f32(lo) : f16_to_f32(lo);
      x[e + 1] = bf ? bf16_to_f32(hi) : f16_to_f32(hi);
    }
  }
}

// The span block `which` (kSpanH .. kSpanRSeed) of (sequence, span, output head): fp32 [D][D], dS^T rows.
__device__ __forceinline__ float* rv_span_block(const GdnBwdParams& p, i64 seq, i64 span, i64 h, int which) {
  return rv_ws<float>(p, p.ws_span) + gdn_bwd_span_block_at(seq, span, h, which, p.n_spans, p.ho, D);
}

// GDN_SPAN_TAIL (RM 1; gdn_fused_ws3.cuh's span_tail_start in the reverse direction, on with it): how many of
// the span's first chunks the reverse span summary keeps. A chunk's dS reaches dS^T at the span's start through the
// transposed transitions of the chunks before it, whose norm under l2norm with beta in [0, 2] is at most e^(their
// gates' sum); the forward recompute stored each chunk's e^gamma_C (egc), so the earliest n whose chunks [0, n) have
// ln(egc) + 0.02 a token with beta > 1 summing below -200 is kept, the later ones left out (their share below
// 1.4e-87 of their dS). nch where none does, without l2norm, or where a beta outside [0, 2] comes first. Every
// thread of the CTA calls it (three barriers; `red` nch + 1 floats the pipeline has not taken yet).
__device__ __forceinline__ int rev_span_head(const GdnBwdParams& p, i64 first, int nch, i64 bos, int cb, i64 len, i64 h,
                                             float* red) {
  if (!(p.flags & kFlagL2Norm)) return nch;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = static_cast<int>(blockDim.x >> 5);
  for (int c = warp; c < nch; c += nw) {
    float bad = 0.f, over = 0.f;
    for (int j = lane; j < C; j += 32) {
      const i64 t = static_cast<i64>(cb + c) * C + j;
      if (t >= len) break;
      float b = load_any(p.beta, (bos + t) * p.ho + h, p.beta_type);
      if (p.flags & kFlagBetaSigmoid) b = ((p.flags & kFlagNegEig) ? 2.f : 1.f) * sigmoidf_(b);
      over += beta_bound_term(b, bad);
    }
    bad = warp_sum(bad);
    over = warp_sum(over);
    if (lane == 0)
      red[c] = bad == 0.f ? logf(rv_ws<const float>(p, p.ws_egc)[(first + c) * p.ho + h]) + over
                          : __int_as_float(0x7fc00000);
  }
  return vanishing_cut<false>(red, nch);
}

// RM: 0 gdn_bwd_rev_fused (each sequence whole, grid (1, HO, N)); under a chain split (grid (1, HO, N x n_spans)) 1
// gdn_bwd_rev_summary_fused, each span but the first from a zero dS^T at its end with nothing stored per chunk (no
// S^T loaded), dS^T at its start to the span's H' block (kSpanRH), and 2 gdn_bwd_rev_span_fused, each span from its
// seed (kSpanRSeed, gdn_bwd_span_fixup_rev's), every store of RM 0, d_initial_state from the first span only.
template <int RM>
__device__ __forceinline__ void gdn_bwd_rev_ws(const GdnBwdParams& p, unsigned char* smem_raw) {
  using namespace rv;
  constexpr bool kStore = RM != 1;  // dS^T, <S^T, dS^T>, dVn per chunk
  constexpr bool kSds = kStore && !GDN_BWD_SDS_IN_GRADS;  // S^T loaded, <S^T, dS^T> summed
  const Base1024 b1024 = base_1024(smem_raw);
  unsigned char* const base = b1024.ptr;
  const u32 sb = b1024.at;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wg = warp >> 2, wi = warp & 3;
  const int fr = 16 * wi + (lane >> 2), fc = 2 * (lane & 3);
  const i64 h = blockIdx.y;
  const i64 seq = RM == 0 ? static_cast<i64>(blockIdx.z) : static_cast<i64>(blockIdx.z) / p.n_spans;
  const i64 span = RM == 0 ? 0 : static_cast<i64>(blockIdx.z) % p.n_spans;
  if (seq >= p.n_seq) return;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  // This CTA's chunks [cb, cb + nch) of the sequence's (its span's under RM 1, 2; an empty sequence has one span).
  int nch = static_cast<int>((len + C - 1) / C), cb = 0;
  if (RM != 0) {
    const int all = nch, nsp = all > 0 ? static_cast<int>((all + p.span_chunks - 1) / p.span_chunks) : 1;
    if (span >= nsp || (RM == 1 && span == 0)) return;
    cb = static_cast<int>(span * p.span_chunks);
    nch = all - cb < p.span_chunks ? all - cb : static_cast<int>(p.span_chunks);
  }
  const i64 first = bos / C + seq + cb;  // the slot of the CTA's first chunk
  if (RM == 1 && GDN_SPAN_TAIL) nch = rev_span_head(p, first, nch, bos, cb, len, h, reinterpret_cast<float*>(base));
  auto stage_at = [&](int i) -> u32 { return sb + static_cast<u32>(rv_stage(i)) * kVBytes; };
  auto stage_ptr = [&](int i) -> unsigned char* { return base + static_cast<u32>(rv_stage(i)) * kVBytes; };

  if (wg == 2) {
    // ---------------- the loader ----------------
    setmaxnreg_dec<120>();
    if (GDN_WS_START_SYNC) __syncthreads();
    const int a = tid - 256;
    const float scale = static_cast<float>(p.scale);
#if GDN_BWD_REV_LOADER == 2
    // This thread's pieces, the same in every chunk: rows r0 + 8 j (column col) of the [64][128] tiles and of S^T,
    // rows rp + 16 j (column cp) of P; a piece's row keeps r & 7, so its swizzled offset is the first's plus a
    // constant (1024 j in a tile, 2048 j in P, 8 j rows of S^T).
    const int r0 = a >> 4, col = 8 * (a & 15), rp = a >> 3, cp = 8 * (a & 7);
    const u32 o_t = static_cast<u32>(col >> 6) * kPanel64 + static_cast<u32>(r0) * 128u + swz_chunk(r0, col);
    const u32 o_p = static_cast<u32>(rp) * 128u + swz_chunk(rp, cp);
    const u32 o_s = kVSt + static_cast<u32>(r0) * kVStRow + 2u * static_cast<u32>(col);
    const int g_t = r0 * D + col, g_p = rp * C + cp;
    const i64 do_row8 = 8 * p.ho * D;  // dO's elements from a row to the row 8 below
    const bool f32 = p.do_type == kTypeF32, bf = p.do_type == kTypeBf16;
    for (int i = 0; i < nch; ++i) {
      const int c = nch - 1 - i;  // chunks from the last (of the CTA's: chunk cb + c of the sequence)
      const i64 c0 = static_cast<i64>(cb + c) * C;
      const int n = static_cast<int>(len - c0 < C ? len - c0 : C);
      const i64 sh = (first + c) * p.ho + h;
      const u32 sa = stage_at(i);
      if (i >= kStages) nb_sync(kRvEmpty + rv_stage(i), kWsThreads);  // the state side is done with chunk i - kStages
      const u16* blk = rv_ws<u16>(p, p.ws_blocks) + sh * gdn_bwd_block_elems(D);
      const u16* st = rv_ws<u16>(p, p.ws_st) + sh * D * D;
#pragma unroll
      for (int j = 0; j < 8; ++j) {  // Qe, Wn, Kd: 1024 pieces of 16 bytes each
        const u32 o = o_t + 1024u * j;
        const int g = g_t + 8 * D * j;
        cp_async16s(sa + kVQe + o, blk + kOffQe + g, 16);
        cp_async16s(sa + kVWn + o, blk + kOffWn + g, 16);
        cp_async16s(sa + kVKd + o, blk + kOffKd + g, 16);
      }
#pragma unroll
      for (int j = 0; j < 4; ++j)  // P: 512 pieces
        cp_async16s(sa + kVP + o_p + 2048u * j, blk + kOffP + g_p + 16 * C * j, 16);
      if (kSds) {
#pragma unroll
        for (int j = 0; j < 16; ++j)  // S^T at the chunk's start: 2048 pieces
          cp_async16s(sa + o_s + 8u * kVStRow * j, st + g_t + 8 * D * j, 16);
      }
      cp_async_commit();
      // scale dO as bf16, rows past the chunk zero: pieces of 8 elements, a warp's 32 pieces two whole rows (16-byte
      // loads, coalesced; fp32 two a piece), four pieces in flight a thread before their conversions and stores.
      const i64 do0 = ((bos + c0 + r0) * p.ho + h) * D + col;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        uint4 w[4][2];
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          const int j = 4 * half + m;
          w[m][0] = w[m][1] = make_uint4(0u, 0u, 0u, 0u);
          if (r0 + 8 * j < n) {
            const i64 at = do0 + do_row8 * j;
            if (f32) {
              const uint4* src = reinterpret_cast<const uint4*>(reinterpret_cast<const float*>(p.d_o) + at);
              w[m][0] = src[0];
              w[m][1] = src[1];
            } else {
              w[m][0] = *reinterpret_cast<const uint4*>(reinterpret_cast<const u16*>(p.d_o) + at);
            }
          }
        }
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          float x[8];
          do_piece_floats(w[m], f32, bf, x);
          sts128(sa + kVDo + o_t + 1024u * (4 * half + m), pack_bf16(scale * x[0], scale * x[1]),
                 pack_bf16(scale * x[2], scale * x[3]), pack_bf16(scale * x[4], scale * x[5]),
                 pack_bf16(scale * x[6], scale * x[7]));
        }
      }
      if (a == 0) *reinterpret_cast<float*>(stage_ptr(i) + kVEgc) = rv_ws<const float>(p, p.ws_egc)[sh];
      // Chunk i - 1's tiles landed while chunk i's were requested (one group left in flight): hand it over.
      if (i > 0) {
        cp_async_wait_group<1>();
        fence_async_shared();  // the tiles (cp.async and generic stores) before the state side's wgmma read them
        nb_arrive(kRvFull + rv_stage(i - 1), kWsThreads);
      }
    }
    if (nch > 0) {  // the last chunk's
      cp_async_wait_all();
      fence_async_shared();
      nb_arrive(kRvFull + rv_stage(nch - 1), kWsThreads);
    }
#else
    for (int i = 0; i < nch; ++i) {
      const int c = nch - 1 - i;  // chunks from the last (of the CTA's: chunk cb + c of the sequence)
      const i64 c0 = static_cast<i64>(cb + c) * C;
      const int n = static_cast<int>(len - c0 < C ? len - c0 : C);
      const i64 sh = (first + c) * p.ho + h;
      const u32 sa = stage_at(i);
      if (i >= kStages) nb_sync(kRvEmpty + rv_stage(i), kWsThreads);  // the state side is done with chunk i - kStages
      const u16* blk = rv_ws<u16>(p, p.ws_blocks) + sh * gdn_bwd_block_elems(D);
#pragma unroll
      for (int m = 0; m < 8; ++m) {  // Qe, Wn, Kd: 1024 pieces of 16 bytes each
        const int q = a + 128 * m, r = q >> 4, col = 8 * (q & 15);
        const u32 off = static_cast<u32>(col >> 6) * kPanel64 + static_cast<u32>(r) * 128u + swz_chunk(r, col);
        cp_async16s(sa + kVQe + off, blk + kOffQe + r * D + col, 16);
        cp_async16s(sa + kVWn + off, blk + kOffWn + r * D + col, 16);
        cp_async16s(sa + kVKd + off, blk + kOffKd + r * D + col, 16);
      }
#pragma unroll
      for (int m = 0; m < 4; ++m) {  // P: 512 pieces
        const int q = a + 128 * m, r = q >> 3, col = 8 * (q & 7);
        cp_async16s(sa + kVP + static_cast<u32>(r) * 128u + swz_chunk(r, col), blk + kOffP + r * C + col, 16);
      }
      const u16* st = rv_ws<u16>(p, p.ws_st) + sh * D * D;
      if (kSds) {
#pragma unroll 4
        for (int m = 0; m < 16; ++m) {  // S^T at the chunk's start: 2048 pieces
          const int q = a + 128 * m, r = q >> 4, col = 8 * (q & 15);
          cp_async16s(sa + kVSt + static_cast<u32>(r) * kVStRow + 2u * static_cast<u32>(col), st + r * D + col, 16);
        }
      }
      cp_async_commit();
      // scale dO as bf16, rows past the chunk zero: pieces of 8 elements, a warp's 32 pieces two whole rows (16-byte
      // loads, coalesced; fp32 two a piece), four pieces in flight a thread before their conversions and stores.
      {
        const bool f32 = p.do_type == kTypeF32, bf = p.do_type == kTypeBf16;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          uint4 w[4][2];
#pragma unroll
          for (int m = 0; m < 4; ++m) {
            const int q = a + 128 * (4 * half + m), r = q >> 4, col = 8 * (q & 15);
            w[m][0] = w[m][1] = make_uint4(0u, 0u, 0u, 0u);
            if (r < n) {
              const i64 at = ((bos + c0 + r) * p.ho + h) * D + col;
              if (f32) {
                const uint4* src = reinterpret_cast<const uint4*>(reinterpret_cast<const float*>(p.d_o) + at);
                w[m][0] = src[0];
                w[m][1] = src[1];
              } else {
                w[m][0] = *reinterpret_cast<const uint4*>(reinterpret_cast<const u16*>(p.d_o) + at);
              }
            }
          }
#pragma unroll
          for (int m = 0; m < 4; ++m) {
            const int q = a + 128 * (4 * half + m), r = q >> 4, col = 8 * (q & 15);
            float x[8];
            do_piece_floats(w[m], f32, bf, x);
            const u32 off = static_cast<u32>(col >> 6) * kPanel64 + static_cast<u32>(r) * 128u + swz_chunk(r, col);
            sts128(sa + kVDo + off, pack_bf16(scale * x[0], scale * x[1]), pack_bf16(scale * x[2], scale * x[3]),
                   pack_bf16(scale * x[4], scale * x[5]), pack_bf16(scale * x[6], scale * x[7]));
          }
        }
      }
      if (a == 0) *reinterpret_cast<float*>(stage_ptr(i) + kVEgc) = rv_ws<const float>(p, p.ws_egc)[sh];
      cp_async_wait_all();
      fence_async_shared();  // the tiles (cp.async and generic stores) before the state side's wgmma read them
      nb_arrive(kRvFull + rv_stage(i), kWsThreads);
    }
#endif
    return;
  }

  // ---------------- the state side (warpgroups 0 and 1) ----------------
  setmaxnreg_inc<192>();
  if (GDN_WS_START_SYNC) __syncthreads();
  const int v0 = 64 * wg;
  const i64 sbase = (seq * p.ho + h) * D * D + static_cast<i64>(v0) * D;  // this warpgroup's state rows
  float ds[64];
  // The seed: d_final_state (RM 0), zero (RM 1) or the span's (RM 2, the fix-up's: the last span's d_final_state).
  const float* const rseed =
      RM == 2 ? rv_span_block(p, seq, span, h, kSpanRSeed) + static_cast<i64>(v0) * D : nullptr;
#pragma unroll
  for (int j = 0; j < 64; j += 2) {
    const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
    float x = 0.f, y = 0.f;
    if (RM == 0 && (p.flags & kBwdFlagHasDFinal))
      load_any2(p.d_final_state, sbase + static_cast<i64>(r) * D + c, p.dfin_type, x, y);
    if (RM == 2) load_f2(rseed + static_cast<i64>(r) * D + c, x, y);
    ds[j] = x;
    ds[j + 1] = y;
  }
  float* const sds = rv_ws<float>(p, p.ws_sds);
  for (int i = 0; i < nch; ++i) {
    const int c = nch - 1 - i;
    const i64 sh = (first + c) * p.ho + h;
    const u32 sa = stage_at(i);
    const unsigned char* const sp = stage_ptr(i);
    nb_sync(kRvFull + rv_stage(i), kWsThreads);
    const u32 tok = GDN_BWD_REV_SDS32 ? phase_token() : 0u;
    if (kStore)
      bwd_store_state(ds, rv_ws<u16>(p, p.ws_dst) + sh * D * D + static_cast<i64>(v0) * D, fr, fc);  // dS^T after it
    if (kSds) {
      // <S^T, dS^T> over this warp's fragments
      float acc = 0.f;
#pragma unroll
      for (int j = 0; j < 64; j += 2) {
        const int r = v0 + fr + 8 * ((j & 3) >> 1), cc = 8 * (j >> 2) + fc;
        const u32 at = kVSt + static_cast<u32>(r) * kVStRow + 2u * static_cast<u32>(cc);
        const u32 w = GDN_BWD_REV_SDS32 ? lds_u32(sa + at, tok) : *reinterpret_cast<const u32*>(sp + at);
        acc += ds[j] * bf16_lo(w) + ds[j + 1] * bf16_hi(w);
      }
      acc = warp_sum(acc);
      if (lane == 0) sds[sh * 16 + 4 * wg + wi] = acc;
      if (tid < 8) sds[sh * 16 + 8 + tid] = 0.f;
    }
    const float ec = *reinterpret_cast<const float*>(sp + kVEgc);
    const u32 sDo = sa + kVDo + static_cast<u32>(wg) * kPanel64;
    float dvt[32];
    {  // dVn^T = dS^T Kd^T + (scale dO)^T P
      u32 af[8][4];
      pack_a(ds, af);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) RS<64, 0>::mma(dvt, af[kk], kdesc(sa + kVKd, kk, kPanel64), kk > 0);
#pragma unroll
      for (int kk = 0; kk < C / 16; ++kk) MmaAtBt<64>::mma(dvt, mdesc(sDo, kk), mdesc(sa + kVP, kk), 1);
      wgmma_commit();
      wgmma_wait<0>();
      pin<32>(dvt);
    }
    {  // dS^T = e^gamma_C dS^T + (scale dO)^T Qe + dVn^T Wn
      u32 va[4][4];
      pack_a(dvt, va);
#pragma unroll
      for (int j = 0; j < 64; ++j) ds[j] *= ec;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < C / 16; ++kk) {
        MmaAtBt<128>::mma(ds, mdesc(sDo, kk), mdesc(sa + kVQe, kk), 1);
        RS<128, 1>::mma(ds, va[kk], mdesc(sa + kVWn, kk), 1);
      }
      wgmma_commit();
      wgmma_wait<0>();
      pin<64>(ds);
    }
    // dVn (the bf16 it entered the update as) through this warpgroup's dO panel, read by now.
    if (kStore) bwd_store_vn(dvt, sDo, rv_ws<u16>(p, p.ws_dvn) + sh * C * D, wg, wi, lane, tid, v0);
    if (i + kStages < nch) nb_arrive(kRvEmpty + rv_stage(i), kWsThreads);  // the loader refills it: chunk i + 2 (3)
  }
  if (RM == 1) {  // dS^T at the span's start from a zero dS^T at its end: H'
    float* const dst = rv_span_block(p, seq, span, h, kSpanRH) + static_cast<i64>(v0) * D;
#pragma unroll
    for (int j = 0; j < 64; j += 2) {
      const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
      store_f2(dst + static_cast<i64>(r) * D + c, ds[j], ds[j + 1]);
    }
  } else if ((p.flags & kBwdFlagWriteDInit) && span == 0) {
    // dS^T at the sequence's start (d_final_state's rows were read above, or by the fix-up before this launch)
#pragma unroll
    for (int j = 0; j < 64; j += 2) {
      const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
      store_any2(p.d_initial_state, sbase + static_cast<i64>(r) * D + c, p.dinit_type, ds[j], ds[j + 1]);
    }
  }
}

}  // namespace ws
}  // namespace opgraph_gdn
