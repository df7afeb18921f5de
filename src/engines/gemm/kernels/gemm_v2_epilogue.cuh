// gemm/kernels/gemm_v2_epilogue.cuh — what gemm_v2 (gemm_v2.cu) does with a
// tile's accumulators once its mainloop retired: the split-K / stream-K
// reduction of a split tile's partials (reduce_splits), then the graph's
// pointwise epilogue and the stores, either through TMA stores of a 16-bit
// copy in shared memory (store_tile_tma, EPI_TMA) or staged through per-warp
// shared rows (store_tile_staged). The constants and records are
// gemm_v2_config.cuh's; the kernel's consume() calls these per piece.
#pragma once

#include "gemm/kernels/gemm_sm90.cuh"
#include "gemm/kernels/gemm_v2_config.cuh"

namespace {

using namespace opgraph_gemm;

// Eight adjacent outputs from `x` at element offset `off` (16-byte aligned):
// one 16-byte store (two for fp32); 16-bit outputs round to nearest even.
__device__ __forceinline__ void store8(const GemmParams& p, i64 off, const float* x) {
#if OPGRAPH_GEMM_OUT == 2
  float4* d = reinterpret_cast<float4*>(reinterpret_cast<float*>(p.c.ptr) + off);
  d[0] = make_float4(x[0], x[1], x[2], x[3]);
  d[1] = make_float4(x[4], x[5], x[6], x[7]);
#else
  u32 v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
#if OPGRAPH_GEMM_OUT == 0
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(v[j]) : "f"(x[2 * j + 1]), "f"(x[2 * j]));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(v[j]) : "f"(x[2 * j + 1]), "f"(x[2 * j]));
#endif
  }
  *reinterpret_cast<uint4*>(reinterpret_cast<unsigned short*>(p.c.ptr) + off) = make_uint4(v[0], v[1], v[2], v[3]);
#endif
}

template <bool B>
struct Flag {
  static constexpr bool value = B;
};

// Column chunk c (kStgCols wide) of a consumer warp's accumulators into its
// own staging rows (row mi * 16 + r holds the warp's row r of 64-row block
// mi). A chain of compile-time cases: register indices must be constants,
// and the caller's chunk loop stays rolled.
template <int C>
__device__ __forceinline__ void stage_chunk(int c, const float* acc, float* buf, int lane) {
  if (c == C) {
#pragma unroll
    for (int mi = 0; mi < kMW; ++mi)
#pragma unroll
      for (int jj = 0; jj < kStgCols / 8; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int jb = C * (kStgCols / 8) + jj;
          const int r = mi * 16 + lane / 4 + 8 * h;
          *reinterpret_cast<float2*>(buf + r * kStgLd + jj * 8 + 2 * (lane % 4)) =
              make_float2(acc[mi * kFrag + jb * 4 + 2 * h], acc[mi * kFrag + jb * 4 + 2 * h + 1]);
        }
    return;
  }
  if constexpr (C + 1 < kBN / kStgCols) stage_chunk<C + 1>(c, acc, buf, lane);
}

// --- stage: split-K / stream-K reduction -------------------------------------

// A piece of a split tile (w.nsplit > 1): writes its partials in fragment
// order to its workspace slot (thread t's float4 j of 64-row block rb at
// [j][t]) and counts itself on the tile's counter, one per (tile, consumer
// warpgroup) (cooperative) or per tile (ping-pong: counter 0 of the pair).
// The piece that counts last resets the counter to 0 (for the next launch),
// sums every split's partials in split order into acc (deterministic) and
// returns true: it stores the tile. The others return false.
__device__ __forceinline__ bool reduce_splits(const GemmV2Params& g, const Unit& w, float (&acc)[kAcc],
                                              const ConsumerThread& ct, int* last_flag) {
  float* ws = reinterpret_cast<float*>(g.workspace);
  const i64 per = static_cast<i64>(kFrag) * 128;
  auto slot = [&](i64 sp, int rb) { return ((w.ws0 + sp * w.wstep) * kSlotBlocks + rb) * per; };
#pragma unroll
  for (int mi = 0; mi < kMW; ++mi) {
    float4* mine = reinterpret_cast<float4*>(ws + slot(w.split, row_block(mi, ct.cw)));
    const float* a = acc + mi * kFrag;
#pragma unroll
    for (int j = 0; j < kFrag / 4; ++j)
      mine[j * 128 + ct.t] = make_float4(a[4 * j], a[4 * j + 1], a[4 * j + 2], a[4 * j + 3]);
  }
  __threadfence();
  named_sync<128>(1 + ct.cw);
  if (ct.t == 0) {
    unsigned int* cnt = reinterpret_cast<unsigned int*>(g.counters) + w.slot * 2 + (kPing ? 0 : ct.cw);
    const unsigned int old = atomicAdd(cnt, 1u);
    const bool last = old == static_cast<unsigned int>(w.nsplit - 1);
    if (last) *cnt = 0u;
    last_flag[ct.cw] = last ? 1 : 0;
  }
  named_sync<128>(1 + ct.cw);
  if (!last_flag[ct.cw]) return false;
  __threadfence();
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
  for (i64 sp = 0; sp < w.nsplit; ++sp) {
#pragma unroll
    for (int mi = 0; mi < kMW; ++mi) {
      const float4* part = reinterpret_cast<const float4*>(ws + slot(sp, row_block(mi, ct.cw)));
      float* a = acc + mi * kFrag;
#pragma unroll
      for (int j = 0; j < kFrag / 4; ++j) {
        const float4 v = __ldcg(part + j * 128 + ct.t);
        a[4 * j] += v.x;
        a[4 * j + 1] += v.y;
        a[4 * j + 2] += v.z;
        a[4 * j + 3] += v.w;
      }
    }
  }
  return true;
}

// --- stage: the epilogue, through TMA stores (EPI_TMA) -----------------------

// The tile's outputs (this warpgroup's 64 rows), the graph's pointwise chain
// applied in registers, leave through TMA stores of a 16-bit copy in shared
// memory at cst. Per pass of kCHeld boxes, per group of kPack boxes: the
// chain runs on the group's fragments (interior tiles unguarded, edge tiles
// per element: an operand is never read past M or N), packed into 16-bit
// pairs, and every thread writes its pairs into this warpgroup's 64 rows of
// each box (128B swizzle: 16-byte chunk c of row r sits at c ^ (r & 7)); then
// thread 0 stores the pass's boxes. A pass writes the copy once the stores
// issued from it before (thread 0 of this warpgroup issued them) have read
// it; its first group's chain (and operand loads) runs before that wait. TMA
// clips rows and columns past the output. The stores complete in the
// background: the next pass or tile waits for their reads, finish() for them.
__device__ __forceinline__ void store_tile_tma(const GemmV2Params& g, const Unit& w, const float (&acc)[kAcc], u32 cst,
                                               const ConsumerThread& ct) {
  const GemmParams& p = g.problem;
  const int cw = ct.cw, warp = ct.warp, lane = ct.lane, t = ct.t;
  const bool interior = w.m0 + kBM <= p.m && w.n0 + kBN <= p.n;
  u32 pk[kPack][8][2];
  auto pack = [&](int box0, auto guarded) {
    const i64 b0 = w.b0, b1 = w.b1;
#pragma unroll
    for (int gi = 0; gi < kPack; ++gi) {
      if (box0 + gi >= kCBoxes) break;
#pragma unroll
      for (int chunk = 0; chunk < 8; ++chunk)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int jb = box_col(box0 + gi) / 8 + chunk;
          const int row = cw * 64 + warp * 16 + lane / 4 + 8 * h;
          float y[2];
#pragma unroll
          for (int q = 0; q < 2; ++q) {
            const i64 m = w.m0 + row, n = w.n0 + jb * 8 + (lane % 4) * 2 + q;
            float x = acc[jb * 4 + 2 * h + q];
            if (!decltype(guarded)::value || (m < p.m && n < p.n)) {
              OPGRAPH_GEMM_EPILOGUE_BODY
            }
            y[q] = x;
          }
#if OPGRAPH_GEMM_OUT == 0
          asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(pk[gi][chunk][h]) : "f"(y[1]), "f"(y[0]));
#else
          asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(pk[gi][chunk][h]) : "f"(y[1]), "f"(y[0]));
#endif
        }
    }
    (void)b0;
    (void)b1;
  };
  // The group of kPack boxes from box0 into the copy's slots sl0, sl0 + 1, ..
  auto write = [&](int box0, int sl0) {
#pragma unroll
    for (int gi = 0; gi < kPack; ++gi) {
      if (box0 + gi >= kCBoxes) break;
#pragma unroll
      for (int chunk = 0; chunk < 8; ++chunk)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const u32 row = static_cast<u32>(cw * 64 + warp * 16 + lane / 4 + 8 * h);
          const u32 addr = cst + static_cast<u32>(sl0 + gi) * (kBM * 128) + row * 128 +
                           ((static_cast<u32>(chunk) ^ (row & 7u)) << 4) + static_cast<u32>(lane % 4) * 4;
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(pk[gi][chunk][h]) : "memory");
        }
    }
  };
#pragma unroll
  for (int pass = 0; pass < kCPasses; ++pass) {
#pragma unroll
    for (int sl = 0; sl < kCHeld; sl += kPack) {
      const int box = pass * kCHeld + sl;
      if (box >= kCBoxes) break;
      if (interior) pack(box, Flag<false>{});
      else pack(box, Flag<true>{});
      if (sl == 0) {
        if (t == 0) tma_store_wait_read();
        named_sync<128>(1 + cw);
      }
      write(box, sl);
    }
    fence_async_shared();
    named_sync<128>(1 + cw);
    if (t == 0) {
      const int b1 = static_cast<int>(w.b1), b0 = static_cast<int>(w.b0);
#pragma unroll
      for (int sl = 0; sl < kCHeld; ++sl) {
        const int box = pass * kCHeld + sl;
        if (box >= kCBoxes) break;
        tma_store(&g.c_map, static_cast<int>(w.n0) + box_col(box), static_cast<int>(w.m0) + cw * 64, b1, b0,
                  cst + static_cast<u32>(sl) * (kBM * 128) + static_cast<u32>(cw) * 64 * 128);
      }
      tma_store_commit();
    }
  }
}

// --- stage: the epilogue, staged through shared memory -----------------------

// The tile's outputs, 16 columns at a time: each warp passes its fragments
// to its own staging rows at buf (stage_chunk), then each lane applies the
// graph's pointwise chain to 8 adjacent outputs of one row of each 64-row
// block and stores them (16 bytes when vec_ok and inside N), in a rolled
// chunk loop. The loop's code is small, so it stays in the instruction
// cache beside the other warpgroup's mainloop (the unrolled chain did not:
// measured 'no instruction' stalls and 20-27% lost with gelu), and the
// exchange is warp-local: __syncwarp only (against the warpgroup barriers it
// had before: +1-4%, 4096^3 + bias + gelu 558 vs 542 TFLOP/s,
// bench/results/2026-11-30-gemm-s5-h200.txt, run S5-8).
__device__ __forceinline__ void store_tile_staged(const GemmV2Params& g, const Unit& w, const float (&acc)[kAcc],
                                                  float* stg, const ConsumerThread& ct, bool vec_ok) {
  const GemmParams& p = g.problem;
  const int cw = ct.cw, warp = ct.warp, lane = ct.lane;
  const i64 cbase = w.b0 * p.c.s0 + w.b1 * p.c.s1;
  // First tile row of this warp's 16-row slab in 64-row block 0.
  const i64 rbase = w.m0 + (kPing ? 0 : cw * 64 * kMW) + warp * 16;
  const bool interior = w.m0 + kBM <= p.m && w.n0 + kBN <= p.n;
  float* const buf = stg + (cw * 4 + warp) * (kRowsWarp * kStgLd);
  const int seg = lane / 16, rr = lane % 16;
#pragma unroll 1
  for (int c = 0; c < kBN / kStgCols; ++c) {
    __syncwarp();  // every lane is done reading the previous chunk
    stage_chunk<0>(c, acc, buf, lane);
    __syncwarp();
    // Lane: 8 adjacent columns (segment lane / 16) of row lane % 16 of
    // each 64-row block, all chained before any store, so a broadcast
    // operand's load is shared by the rows and the loads issue together.
    const i64 n0 = w.n0 + c * kStgCols + seg * 8;
    float y[kMW][8];
#pragma unroll
    for (int i = 0; i < kMW; ++i) {
      const int r = i * 16 + rr;
      const float4 lo = *reinterpret_cast<const float4*>(buf + r * kStgLd + seg * 8);
      const float4 hi = *reinterpret_cast<const float4*>(buf + r * kStgLd + seg * 8 + 4);
      y[i][0] = lo.x, y[i][1] = lo.y, y[i][2] = lo.z, y[i][3] = lo.w;
      y[i][4] = hi.x, y[i][5] = hi.y, y[i][6] = hi.z, y[i][7] = hi.w;
    }
    // Interior tiles run the chain unguarded (one load of a broadcast
    // operand serves every row); edge tiles guard each element.
    auto chain = [&](auto guarded) {
      const i64 b0 = w.b0, b1 = w.b1;
#pragma unroll
      for (int i = 0; i < kMW; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const i64 m = rbase + 64 * i + rr, n = n0 + j;
          float x = y[i][j];
          if (!decltype(guarded)::value || (m < p.m && n < p.n)) {
            OPGRAPH_GEMM_EPILOGUE_BODY
          }
          y[i][j] = x;
        }
      (void)b0;
      (void)b1;
    };
    if (interior) chain(Flag<false>{});
    else chain(Flag<true>{});
#pragma unroll
    for (int i = 0; i < kMW; ++i) {
      const i64 m = rbase + 64 * i + rr;
      if (m >= p.m) continue;
      const i64 off = cbase + m * p.c.sr + n0 * p.c.sc;
      if (vec_ok && n0 + 8 <= p.n) {
        store8(p, off, y[i]);
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (n0 + j < p.n) store_elem<OPGRAPH_GEMM_OUT>(p.c.ptr, off + j * p.c.sc, y[i][j]);
      }
    }
  }
}

}  // namespace
