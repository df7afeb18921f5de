// linear_attention/kernels/gdn_bwd_onepass.cuh — gdn_bwd_onepass, the one-pass backward's second pass (a trial,
// -DGDN_BWD_ONEPASS=1 at d = 128 on the wgmma tiles: kernels/gdn_bwd_grads.cu includes it there; its first pass is
// gdn_bwd_fwd_st_fused, ws3_pass PH 7 in kernels/gdn_fused_ws3.cuh). docs/linear_attention.md, "The one-pass design".
//
// One CTA of 16 warps per (output head, sequence) — grid (1, HO, N) — walks the sequence's chunks from the last
// (under a chain split, span_chunks > 0: one a (output head, sequence x span), grid (1, HO, N x n_spans), walking its
// span's chunks from dS^T's seed, the fix-up's reverse walk's kSpanRSeed block; d_initial_state from span 0),
// with the state gradient dS^T (rows v, columns k; the gradient of the state after the chunk) in fp32 registers:
// warpgroup q holds columns 32 q .. 32 q + 31 of both 64-row halves (2 x m64n32). Per chunk, from its q, k, v, dO rows,
// its gates, S_c^T (the state at its start) and T = (I + L)^-1 as pass 1 stored them (bf16), in the X form
// (scripts/model_gdn_bwd_fused.py's one_pass_x, checked in float64 against the recurrence's adjoint):
//   Y = K S_c, X = V - e^gamma Y, Vn = (T diag beta) X, P = tril_incl(Q K^T . Gamma)
//   dVn = scale P^T dO + e^(gamma_C - gamma) (K dS)
//   dVb = T^T dVn, dv = beta dVb, dY = -e^gamma beta dVb
//   dq  = e^gamma (scale dO S_c^T) + M1 K
//   dk  = e^(gamma_C - gamma) (Vn dS^T) + dY S_c^T + M1^T Q + M2 K + M2^T K
//   dT  = dVn (diag(beta) X)^T, dL = strict_tril(-T^T dT T^T), M1 = tril_incl(dP . Gamma) with dP = scale dO Vn^T,
//   M2 = dL beta_r Gamma, F = dL . (K K^T) . Gamma, E = dP . P + beta_r F
//   dbeta_r  = <X_r, dVb_r> + sum_s F_rs
//   dgamma_r = e^gamma_r q_r . dQe_r - e^(gamma_C - gamma_r) k_r . dKd_r + <Y_r, dY_r> + sum_s E_rs - sum_s E_sr,
//   dgamma_C += sum_r e^(gamma_C - gamma_r) k_r . dKd_r + e^gamma_C <S_c, dS>
//   dS^T <- e^gamma_C dS^T + (scale e^gamma dO)^T Q + dY^T K         (the chunk before's)
// Every product is gdn_bwd_grads' column-quarter form (prod: each warpgroup an m64 x N / 4 wgmma over all 64 rows),
// the phases one after another between CTA barriers: the algebra's first device form (on an H100 every gradient within
// bench/gdn_bwd_ab.cu's bounds of the engine's at its first run, bench/results/2026-12-07-gdn-onepass-h100.txt), not
// yet made fast. Each chunk's inputs come by TMA from one thread during the chunk before it, as their tiles free, on
// one mbarrier (a second kernel argument, OnePassMaps). Its two earlier load forms, at each chunk's start and a chunk
// ahead by cp.async (GDN_BWD_ONEPASS_AHEAD 0 and 1, removed since), are measured beside this one in
// bench/results/2026-12-07-gdn-onepass-red-tma-h100.txt. The engine runs this kernel as gdn_bwd's PIPELINE_ARCH 5.
// dq and dk go to the fp32 staging per output head (gdn_bwd_finish sums them over the q / k head groups and applies
// the l2norm Jacobian; the launch leaves kBwdFlagQkDirect off; GDN_BWD_ONEPASS_RED: added into [T][HQ] / [T][HK]
// sums, by TMA reductions from shared memory under GDN_BWD_ONEPASS_TMARED), dv straight out where HV = HO (else
// staged), dG and dBeta through store_gate_grads, d_initial_state at the end. bf16 q, k, v and dO only.
#pragma once

namespace opgraph_gdn {
namespace bwd {

struct alignas(1024) OnePassSmem {
  u16 q[TCD::kElems];    // l2-normalised q rows (bf16); (scale e^gamma dO)'s partner in the update
  u16 k[TCD::kElems];
  u16 x[TCD::kElems];    // the v rows, then X = V - e^gamma Y
  u16 dob[TCD::kElems];  // dO, then scale e^gamma dO (the update's A)
  u16 st[TDD::kElems];   // S_c^T (pass 1's)
  u16 ds[TDD::kElems];   // dS^T (bf16 of the registers', the chunk's)
  u16 vn[TCD::kElems];
  u16 dvn[TCD::kElems];
  u16 dy[TCD::kElems];   // dY = -e^gamma beta dVb
  u16 t[TCC::kElems];    // T (pass 1's)
  u16 tv[TCC::kElems];   // T diag(beta)
  u16 p[TCC::kElems];    // P (unscaled); tv and p (adjacent u16 arrays): the next chunk's raw q rows
  u16 c1[TCC::kElems];   // dT, then M2
  u16 c2[TCC::kElems];   // T^T dT, then M1
  float gam[C], bet[C];
  // Per row, one partial a column quarter (the four warps of the row's band): dgamma's, dbeta's, the k . dKd terms,
  // E's and F's row sums; per column, E's column sums of each 16-row band.
  float rg[4][C], rb[4][C], rkd[4][C], re[4][C], rf[4][C], ec[4][C];
  float red[16];  // <S_c^T, dS^T>, a partial a warp
  unsigned long long full;  // the mbarrier of the next chunk's TMA loads
  int tma_at[7];  // and its coordinates' bases (thread 0 reads them at each request: no registers held across chunks):
                  // the sequence's first token, hq, hk, hv, h, the sequence's first (chunk slot, head) row of S^T / T;
                  // the CTA's first chunk (cb: every thread reads it, after the prologue's barrier)
  alignas(128) float graw[2][C][4];  // the next chunk's raw g, beta of heads 4 (h / 4) .. + 3 (fp32 gates: TMA)
#if GDN_BWD_CLOCK
  long long clk[64];  // the phase clocks (GDN_BWD_CLOCK), summed over the chunks
#endif
};
#if GDN_BWD_ONEPASS_RED
// Adds v to p[0 .. 3] in L2 (sm_90's vector reduction; 16-byte aligned).
__device__ __forceinline__ void red_add_f4(float* p, const float (&v)[4]) {
  asm volatile("red.global.v4.f32.add [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3])
               : "memory");
}
#endif
static_assert(sizeof(OnePassSmem) + 1024 <= 232448, "gdn_bwd_onepass: over the 227 KiB a CTA may have");
static_assert(GDN_BWD_CLOCK || sizeof(OnePassSmem) + 1024 <= kGdnBwdOnePassSmemBytes,
              "gdn_bwd_onepass: past the launch's kGdnBwdOnePassSmemBytes (gdn_bwd_params.cuh)");
constexpr unsigned kOnePassSmemBytes = sizeof(OnePassSmem) + 1024;

}  // namespace bwd
}  // namespace opgraph_gdn

#if !GDN_BWD_ONEPASS_ROLES
extern "C" __device__ unsigned gdn_bwd_onepass_smem_bytes = opgraph_gdn::bwd::kOnePassSmemBytes;
#endif
#if GDN_BWD_CLOCK
// GDN_BWD_CLOCK: 16 phases a warpgroup (OCLK's points below), a chunk's mean cycles in one CTA; bench/gdn_bwd_ab.cu
// prints them.
extern "C" __device__ long long gdn_bwd_onepass_clock[64] = {};
#define OCLK(i)                                      \
  do {                                               \
    if (clk_on) {                                    \
      const long long t_ = clock64();                \
      sm.clk[16 * (tid >> 7) + (i)] += t_ - clk_t;   \
      clk_t = t_;                                    \
    }                                                \
  } while (0)
#else
#define OCLK(i) \
  do {          \
  } while (0)
#endif
// GDN_BWD_ONEPASS_RED's form, for the launcher (bench/gdn_bwd_ab.cu zeroes the dq / dk staging first where it is 1).
#if !GDN_BWD_ONEPASS_ROLES
extern "C" __device__ unsigned gdn_bwd_onepass_red = GDN_BWD_ONEPASS_RED;
#endif

// The TMA maps (encoded by the launcher: bf16, 128-byte swizzle, box 64 elements wide,
// zero fill; 4-D, innermost first): q, k, v, dO as (D, heads, T, 1) with box (64, 1, C, 1); S^T as the workspace's
// (D, n_slots HO D, 1, 1) with box (64, D, 1, 1); T as (64, C, n_slots HO, 1) with box (64, C, 1, 1), its third
// stride the layout's (the one-pass workspace's T region, C x C a (chunk slot, head), as gdn_bwd_fwd_st_fused stores
// it; under a chain split the block region's T tiles, as gdn_bwd_fwd_span_fused stores them); fp32 g and beta as
// (HO, T, 1, 1), no swizzle, box (4, C, 1, 1).
// GDN_BWD_ONEPASS_TMARED: dq's and dk's fp32 sums as (D, HQ or HK, T, 1), 128-byte swizzle, box (32, 1, C, 1);
// GDN_BWD_ONEPASS_TMADV: the bf16 dv output as (D, HO, T, 1), 128-byte swizzle, box (64, 1, C, 1).
struct OnePassMaps {
  opgraph_gemm::TmaMap q, k, v, d_o, st, t, g, beta;
#if GDN_BWD_ONEPASS_TMARED || GDN_BWD_ONEPASS_TMADV
  opgraph_gemm::TmaMap dq, dk, dv;
#endif
};
#if GDN_BWD_ONEPASS_TMARED
// Adds the shared-memory tile at src to the map's box at (c0, c1, c2, c3) in global memory (TMA, this thread's bulk
// group; the map's element type, fp32 here).
__device__ __forceinline__ void tma_reduce_add(const opgraph_gemm::TmaMap* map, int c0, int c1, int c2, int c3,
                                               u32 src) {
  asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n"
               ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
               : "memory");
}
#endif
#if GDN_BWD_ONEPASS_ROLES
#include "linear_attention/kernels/gdn_bwd_onepass_roles.cuh"
#else
extern "C" __device__ unsigned gdn_bwd_onepass_tma = 1;
extern "C" __global__ void __launch_bounds__(kGdnBwdGradsThreads, 1)
    gdn_bwd_onepass(const GdnBwdParams p, const __grid_constant__ OnePassMaps tm) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  OnePassSmem& sm = *reinterpret_cast<OnePassSmem*>(
      smem_raw + ((1024u - (static_cast<u32>(__cvta_generic_to_shared(smem_raw)) & 1023u)) & 1023u));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  // Under a chain split (span_chunks > 0; grid (1, HO, N x n_spans)) one CTA a (head, sequence, span).
  const bool split = p.span_chunks > 0;
  const i64 h = blockIdx.y, seq = split ? blockIdx.z / p.n_spans : blockIdx.z,
            span = split ? blockIdx.z % p.n_spans : 0;
#if GDN_BWD_CLOCK
  // GDN_BWD_CLOCK (a measuring aid): head 0 of the middle sequence, each warpgroup's first thread; phases [0 the
  // chunk's first barrier and its loads' wait, 1 the q / k normalisation, 2 (nothing since the loads came by TMA),
  // 3 the gates and T diag(beta), 4 Y / X / P, 5 Vn / dVn, 6 dVb and dv's stores, 7 dQe, 8 dKd, 9 dT, 10 dY S^T and
  // T^T dT, 11 dL, 12 dP, 13 the last four products, 14 dq / dk's stores and dO's scaling, 15 the update and warp 0's
  // epilogue], a chunk's mean.
  const bool clk_on = (tid & 127) == 0 && blockIdx.y == 0 && blockIdx.z == gridDim.z / 2;
  long long clk_t = clock64();
  if (clk_on)
    for (int i = 0; i < 16; ++i) sm.clk[16 * (tid >> 7) + i] = 0;
#endif
  if (seq >= p.n_seq) return;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 first = bos / C + seq;  // the sequence's first chunk slot
  // This CTA's chunks [cb, ce) of the sequence's: all, or its span's (an empty sequence has one span).
  const int nch = static_cast<int>((len + C - 1) / C);
  i64 cb64 = 0, ce64 = nch, nsp = 1;
  if (split && !span_range<1>(p.span_chunks, nch, span, cb64, ce64, nsp)) return;
  const int cb = static_cast<int>(cb64), ce = static_cast<int>(ce64);
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const float scale = static_cast<float>(p.scale);
  const int band = warp & 3, quarter = __shfl_sync(0xffffffffu, warp >> 2, 0);
  const int m0 = 16 * band, nd0 = (D / 4) * quarter, n0 = 16 * quarter;
  const Frag fr(m0, quarter, lane);
  const int ra = m0 + g8, rb_ = m0 + g8 + 8;
  constexpr int RPW = C / kGW;  // rows a warp in the row loads
  constexpr int kPanel = C * 64;  // elements of a [C][D] tile's 64-column panel
  // GDN_BWD_ONEPASS_BATCH: a phase's independent products (Y and Q K^T; dQe, dKd and dT; dY S^T and T^T dT; dL and
  // K K^T; the last four; the update's four) issued back to back, one commit group and one wait for them all.
  constexpr bool kJ = !GDN_BWD_ONEPASS_BATCH;

  // dS^T's fragments: ds[b][j][e], row 64 b + m0 + g8 (+ 8 for e >= 2), column nd0 + 8 j + 2 t4 (+ 1); seeded by
  // d_final_state (or zero), or under a split by the span's seed (kSpanRSeed: gdn_bwd_span_fixup_rev's walk, the
  // last span's d_final_state), fp32 [D][D] as d_final_state's rows.
  float ds[2][NTD][4];
  const i64 sbase = (seq * p.ho + h) * D * D;
  const float* const rseed = split ? span_block(p, seq, span, h, kSpanRSeed) : nullptr;
#pragma unroll
  for (int b = 0; b < 2; ++b)
#pragma unroll
    for (int j = 0; j < NTD; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        float x = 0.f, y = 0.f;
        const i64 e = static_cast<i64>(64 * b + m0 + g8 + 8 * hh) * D + nd0 + 8 * j + 2 * t4;
        if (split) load_f2(rseed + e, x, y);
        else if (p.flags & kBwdFlagHasDFinal) load_any2(p.d_final_state, sbase + e, p.dfin_type, x, y);
        ds[b][j][2 * hh] = x;
        ds[b][j][2 * hh + 1] = y;
      }

  // Loads a chunk ahead: every input of chunk c - 1 is requested during chunk c once its tile's last reader there is
  // done (q rows after the Vn / dVn phase into the dead T diag(beta) and P tiles, k rows into dVn and v into X after
  // the dVb / dT phase, S^T and T after the T^T dT / dL phase, dO after the dP phase into the chunk's Vn tile: dO and
  // Vn swap tiles each chunk), the gates' raw values into registers; the first chunk's in the prologue.
  u16* const qraw = sm.tv;  // T diag(beta) and P: one 16 KiB [C][D] in TCD's layout
  u16* const kraw = sm.dvn;
  float gx = 0.f, bx = 0.f;  // thread tid < C: row tid's raw g and beta of the next chunk
  auto gates_raw = [&](int cc, int nr) {
    if (tid < nr) {
      const i64 off = (bos + static_cast<i64>(cc) * C + tid) * p.ho + h;
      gx = load_any(p.g, off, p.g_type);
      bx = load_any(p.beta, off, p.beta_type);
    }
  };
  // One thread requests a chunk's tiles by TMA (q and k raw, v into X, dO, S^T, T: kChunkBytes on the mbarrier
  // `full`, one arrival a chunk), so no warp waits on its requests' issue (cp.async issue, ~7k cycles a chunk here).
  using opgraph_gemm::smem_u32;
  using opgraph_gemm::tma_load;
  volatile int* const at = sm.tma_at;
  if (tid == 0) {
    at[0] = static_cast<int>(bos), at[1] = static_cast<int>(hq), at[2] = static_cast<int>(hk);
    at[3] = static_cast<int>(hv), at[4] = static_cast<int>(h), at[5] = static_cast<int>(first * p.ho + h);
    at[6] = cb;
  }
  // fp32 g and beta by TMA too where the launcher says so (kBwdFlagGatesTma: 4 heads' values a token, 16-byte
  // boxes); otherwise by each row's thread.
  const bool gtma = (p.flags & kBwdFlagGatesTma) != 0;
  const u32 kChunkBytes = (4 * C * D + D * D + C * C) * 2 + (gtma ? 2 * C * 4 * 4 : 0);
  const u32 full = smem_u32(&sm.full);
  auto tma_gates = [&](int row0) {
    const int r = at[0] + row0, h4 = at[4] & ~3;
    tma_load(smem_u32(&sm.graw[0][0][0]), &tm.g, h4, r, 0, 0, full);
    tma_load(smem_u32(&sm.graw[1][0][0]), &tm.beta, h4, r, 0, 0, full);
  };
  // a [C][D] tile's two panels: rows row0 .. of the sequence, head at[which]
  auto tma_cd = [&](u16* dst, const opgraph_gemm::TmaMap* m, int which, int row0) {
    const int r = at[0] + row0, hh = at[which];
    tma_load(smem_u32(dst), m, 0, hh, r, 0, full);
    tma_load(smem_u32(dst + C * 64), m, 64, hh, r, 0, full);
  };
  auto tma_st_t = [&](int cc) {  // S^T's two panels of D rows, T's one of C rows
    const int sh = at[5] + cc * static_cast<int>(p.ho);
    tma_load(smem_u32(sm.st), &tm.st, 0, sh * D, 0, 0, full);
    tma_load(smem_u32(sm.st + D * 64), &tm.st, 64, sh * D, 0, 0, full);
    tma_load(smem_u32(sm.t), &tm.t, 0, 0, sh, 0, full);  // T: (64, 64, sh), its layout the map's (encode_onepass_maps)
  };
  if (tid == 0) {
    opgraph_gemm::bar_init(full, 1);
    opgraph_gemm::bar_init_fence();
  }
  __syncthreads();
  if (ce > cb) {
    // (the span's last chunk: a full one unless it is the sequence's last)
    const i64 rest = len - static_cast<i64>(ce - 1) * C;
    const int cl = ce - 1, nl = static_cast<int>(rest < C ? rest : C);
    if (tid == 0) {
      opgraph_gemm::bar_expect_tx(full, kChunkBytes);
      tma_cd(sm.x, &tm.v, 3, cl * C);
      tma_cd(sm.dob, &tm.d_o, 4, cl * C);
      tma_cd(qraw, &tm.q, 1, cl * C);
      tma_cd(kraw, &tm.k, 2, cl * C);
      tma_st_t(cl);
      if (gtma) tma_gates(cl * C);
    }
    if (!gtma) gates_raw(cl, nl);
  }
  bool odd = false;  // dO in sm.vn, Vn in sm.dob; the mbarrier's parity

#pragma unroll 1
  for (int c = ce - 1; c >= at[6]; --c) {
    const i64 c0 = static_cast<i64>(c) * C;
    const int n = static_cast<int>(len - c0 < C ? len - c0 : C);
    u16* const dob = odd ? sm.vn : sm.dob;
    u16* const vn = odd ? sm.dob : sm.vn;
#if GDN_BWD_ONEPASS_TMARED
    if ((tid & 127) == 0) opgraph_gemm::tma_store_wait_read();  // the chunk after's dq / dk tiles read from dS^T's
#endif
    __syncthreads();  // the chunk after's readers of q, k, the gates and dS^T done
    opgraph_gemm::bar_wait(full, odd ? 1u : 0u);  // the chunk's tiles landed
    OCLK(0);
    if (n < C)  // the sequence's last chunk: its rows n .. C - 1 of v and dO (TMA's are the next sequence's) zero
      for (int i = tid; i < (C - n) * (D / 8); i += kGT) {
        const int r = n + i / (D / 8), cc = (i % (D / 8)) * 8;
        *reinterpret_cast<uint4*>(&sm.x[TCD::at(r, cc)]) = make_uint4(0u, 0u, 0u, 0u);
        *reinterpret_cast<uint4*>(&dob[TCD::at(r, cc)]) = make_uint4(0u, 0u, 0u, 0u);
      }
    auto raw_at = [](int r, int cc) { return TCD::at(r, cc); };
    // ---- q, k rows normalised from the raw rows (rows n .. C - 1 zero); the gates from the raw values ----
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int r = warp + kGW * i;
      float xq[EL], xk[EL];
      unpack_row(load_row_raw(qraw + raw_at(r, lane * EL)), xq);
      unpack_row(load_row_raw(kraw + raw_at(r, lane * EL)), xk);
      if (r >= n)
#pragma unroll
        for (int e = 0; e < EL; ++e) xq[e] = xk[e] = 0.f;
      if (l2) l2norm_rows(xq, xk);
      st_row(&sm.q[TCD::at(r, lane * EL)], xq);
      st_row(&sm.k[TCD::at(r, lane * EL)], xk);
    }
    if (tid < C) {
      float gl = 0.f, b = 0.f;
      if (gtma) gx = sm.graw[0][tid][h & 3], bx = sm.graw[1][tid][h & 3];
      if (tid < n) gate_beta_from(p, h, gx, bx, gl, b);
      sm.gam[tid] = gl;
      sm.bet[tid] = b;
    }
#pragma unroll
    for (int b = 0; b < 2; ++b)
#pragma unroll
      for (int j = 0; j < NTD; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
          st_bf2(&sm.ds[TDD::at(64 * b + m0 + g8 + 8 * hh, nd0 + 8 * j + 2 * t4)], ds[b][j][2 * hh],
                 ds[b][j][2 * hh + 1]);
    OCLK(1);
    cp_async_wait_all();
    tiles_fence();
    __syncthreads();
    OCLK(2);
    // ---- the gates' cumsum (warp 0); <S_c^T, dS^T> (a partial a warp, S_c^T as pass 1 rounded it); T diag(beta) ----
    if (warp == 0) chunk_gate_cumsum(sm.gam, lane);
    {
      float acc = 0.f;
#pragma unroll
      for (int b = 0; b < 2; ++b)
#pragma unroll
        for (int j = 0; j < NTD; ++j)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const u32 w = lds32(&sm.st[TDD::at(64 * b + m0 + g8 + 8 * hh, nd0 + 8 * j + 2 * t4)]);
            acc += ds[b][j][2 * hh] * bf16_to_f32(static_cast<u16>(w)) +
                   ds[b][j][2 * hh + 1] * bf16_to_f32(static_cast<u16>(w >> 16));
          }
      acc = warp_sum(acc);
      if (lane == 0) sm.red[warp] = acc;
    }
    for (int i = tid; i < C * C / 2; i += kGT) {  // element pairs (r, 2 s2), (r, 2 s2 + 1)
      const int r = i / (C / 2), s = 2 * (i % (C / 2));
      const u32 w = lds32(&sm.t[TCC::at(r, s)]);
      st_bf2(&sm.tv[TCC::at(r, s)], bf16_to_f32(static_cast<u16>(w)) * sm.bet[s],
             bf16_to_f32(static_cast<u16>(w >> 16)) * sm.bet[s + 1]);
    }
    tiles_fence();
    __syncthreads();
    OCLK(3);
    const float gc = sm.gam[C - 1];
    const float ega = exp2f(sm.gam[ra]), egb = exp2f(sm.gam[rb_]);
    const float eda = exp2f(gc - sm.gam[ra]), edb = exp2f(gc - sm.gam[rb_]);
    const float ba = sm.bet[ra], bb = sm.bet[rb_];
    float pg[2] = {0.f, 0.f}, pb[2] = {0.f, 0.f}, pkd[2] = {0.f, 0.f};

    // ---- Y = K S_c, X = V - e^gamma Y (in place of V); Q K^T, P ----
    float y[NTD][4], qk[2][4] = {};
    zero(y);
    prod<NTD, D, false, false, TCD, TDD, kJ>(y, sm.k, m0, sm.st, nd0, lane);
    prod<2, D, false, false, TCD, TCD, kJ>(qk, sm.q, m0, sm.k, n0, lane);
    if constexpr (!kJ) prod_join(y, qk);
#pragma unroll
    for (int j = 0; j < NTD; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const float e = hh ? egb : ega;
        const u32 w = lds32(&sm.x[fr.cd(hh, j)]);
        st_bf2(&sm.x[fr.cd(hh, j)], bf16_to_f32(static_cast<u16>(w)) - e * y[j][2 * hh],
               bf16_to_f32(static_cast<u16>(w >> 16)) - e * y[j][2 * hh + 1]);
      }
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = m0 + g8 + 8 * hh, s0 = n0 + 8 * j + 2 * t4;
        float pv[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) pv[e] = s0 + e <= r ? qk[j][2 * hh + e] * exp2f(sm.gam[r] - sm.gam[s0 + e]) : 0.f;
        st_bf2(&sm.p[fr.cc(hh, j)], pv[0], pv[1]);
      }
    tiles_fence();
    __syncthreads();  // X, P written
    OCLK(4);

    // ---- Vn = (T diag beta) X; dVn = scale P^T dO + e^(gamma_C - gamma) (K dS) ----
    {
      float a[NTD][4], b2[NTD][4];
      zero(a);
      prod<NTD, C, false, true, TCC, TCD>(a, sm.tv, m0, sm.x, nd0, lane);
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        st_bf2(&vn[fr.cd(0, j)], a[j][0], a[j][1]);
        st_bf2(&vn[fr.cd(1, j)], a[j][2], a[j][3]);
      }
      zero(a);
      zero(b2);
      prod<NTD, C, true, true, TCC, TCD>(a, sm.p, m0, dob, nd0, lane);
      prod<NTD, D, false, false, TCD, TDD>(b2, sm.k, m0, sm.ds, nd0, lane);
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        st_bf2(&sm.dvn[fr.cd(0, j)], scale * a[j][0] + eda * b2[j][0], scale * a[j][1] + eda * b2[j][1]);
        st_bf2(&sm.dvn[fr.cd(1, j)], scale * a[j][2] + edb * b2[j][2], scale * a[j][3] + edb * b2[j][3]);
      }
    }
    tiles_fence();
    __syncthreads();  // Vn, dVn written
    OCLK(5);
    if (c > at[6] && tid == 0) {  // chunk c - 1's q rows (its one arrival): T diag(beta) and P read for the last time
      opgraph_gemm::bar_expect_tx(full, kChunkBytes);
      tma_cd(qraw, &tm.q, 1, (c - 1) * C);
      if (gtma) tma_gates((c - 1) * C);  // the gates read at this chunk's start
    }

    float dq[NTD][4], dk[NTD][4], tmp[NTD][4];
#if GDN_BWD_ONEPASS_TMADV
    const bool dv_tma = p.hv == p.ho && p.dv_type == kTypeBf16 && n == C;  // the CTA's: c1 / c2 as one [C][D] tile
#else
    constexpr bool dv_tma = false;
#endif
    // ---- dVb = T^T dVn: dv = beta dVb, dbeta += <X, dVb>, dY = -e^gamma beta dVb, dgamma += <Y, dY> ----
    zero(tmp);
    prod<NTD, C, true, true, TCC, TCD>(tmp, sm.t, m0, sm.dvn, nd0, lane);
    {
      float r0, r1;
      row_dot(tmp, sm.x, fr, r0, r1);
      pb[0] += r0;
      pb[1] += r1;
      float y0 = 0.f, y1 = 0.f;
      const bool direct = p.hv == p.ho;
      float* sv_ = ws32(p, p.ws_dv);
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        const float d0 = -ega * ba * tmp[j][0], d1 = -ega * ba * tmp[j][1];
        const float d2 = -egb * bb * tmp[j][2], d3 = -egb * bb * tmp[j][3];
        y0 += y[j][0] * d0 + y[j][1] * d1;
        y1 += y[j][2] * d2 + y[j][3] * d3;
        st_bf2(&sm.dy[fr.cd(0, j)], d0, d1);
        st_bf2(&sm.dy[fr.cd(1, j)], d2, d3);
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = hh ? rb_ : ra;
          const float br = hh ? bb : ba;
          if (dv_tma) {
            st_bf2(&sm.c1[fr.cd(hh, j)], br * tmp[j][2 * hh], br * tmp[j][2 * hh + 1]);
            continue;
          }
          if (r >= n) continue;
          const i64 at = ((bos + c0 + r) * p.ho + h) * D + nd0 + 8 * j + 2 * t4;
          if (direct) store_any2(p.dv, at, p.dv_type, br * tmp[j][2 * hh], br * tmp[j][2 * hh + 1]);
          else store_f2(sv_ + at, br * tmp[j][2 * hh], br * tmp[j][2 * hh + 1]);
        }
      }
#pragma unroll
      for (int o = 1; o <= 2; o <<= 1) {
        y0 += __shfl_xor_sync(0xffffffffu, y0, o);
        y1 += __shfl_xor_sync(0xffffffffu, y1, o);
      }
      pg[0] += y0;
      pg[1] += y1;
#if GDN_BWD_ONEPASS_TMADV
      if (dv_tma) {  // warpgroups 0, 1 wrote panel 0 (columns 0 .. 63), 2 and 3 panel 1; one store a panel
        opgraph_gemm::fence_async_shared();
        nb_sync(5 + (quarter >> 1), 256);
        if ((tid & 255) == 0) {
          opgraph_gemm::tma_store(&tm.dv, 64 * (quarter >> 1), static_cast<int>(h), static_cast<int>(bos + c0), 0,
                                  smem_u32(sm.c1 + (quarter >> 1) * C * 64));
          opgraph_gemm::tma_store_commit();
        }
      }
#endif
    }
    OCLK(6);
    // ---- dQe = scale dO S_c^T: dq = e^gamma dQe; dKd = Vn dS^T: dk = e^(gamma_C - gamma) dKd ----
    zero(dq);
    float dt[2][4] = {};  // dT
    prod<NTD, D, false, true, TCD, TDD, kJ>(dq, dob, m0, sm.st, nd0, lane);
#if GDN_BWD_ONEPASS_BATCH
    zero(dk);
    prod<NTD, D, false, true, TCD, TDD, false>(dk, vn, m0, sm.ds, nd0, lane);
    prod<2, D, false, false, TCD, TCD, false>(dt, sm.dvn, m0, sm.x, n0, lane);
    prod_join(dq, dk);
    pin_acc(dt);
#endif
    {
      float r0, r1;
      row_dot(dq, sm.q, fr, r0, r1);
      pg[0] += scale * ega * r0;
      pg[1] += scale * egb * r1;
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        dq[j][0] *= scale * ega, dq[j][1] *= scale * ega;
        dq[j][2] *= scale * egb, dq[j][3] *= scale * egb;
      }
    }
    OCLK(7);
#if !GDN_BWD_ONEPASS_BATCH
    zero(dk);
    prod<NTD, D, false, true, TCD, TDD>(dk, vn, m0, sm.ds, nd0, lane);
#endif
    {
      float r0, r1;
      row_dot(dk, sm.k, fr, r0, r1);
      pkd[0] += eda * r0;
      pkd[1] += edb * r1;
      pg[0] -= eda * r0;
      pg[1] -= edb * r1;
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        dk[j][0] *= eda, dk[j][1] *= eda;
        dk[j][2] *= edb, dk[j][3] *= edb;
      }
    }
    OCLK(8);
#if GDN_BWD_ONEPASS_TMADV
    if (dv_tma) {  // dv's panels read from c1 / c2 before dT goes into c1 (T^T dT into c2 after the next barrier)
      if ((tid & 255) == 0) opgraph_gemm::tma_store_wait_read();
      nb_sync(7, kGT);
    }
#endif
    // ---- dT = dVn (diag(beta) X)^T into c1 ----
    {
#if !GDN_BWD_ONEPASS_BATCH
      prod<2, D, false, false, TCD, TCD>(dt, sm.dvn, m0, sm.x, n0, lane);
#endif
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int s = n0 + 8 * j + 2 * t4;
          st_bf2(&sm.c1[fr.cc(hh, j)], sm.bet[s] * dt[j][2 * hh], sm.bet[s + 1] * dt[j][2 * hh + 1]);
        }
    }
    tiles_fence();
    __syncthreads();  // dY, dT written
    OCLK(9);
    if (c > at[6] && tid == 0) {  // chunk c - 1's v and k rows: X and dVn read for the last time
      tma_cd(sm.x, &tm.v, 3, (c - 1) * C);
      tma_cd(kraw, &tm.k, 2, (c - 1) * C);
    }

    // ---- dk += dY S_c^T; T^T dT into c2 ----
    prod<NTD, D, false, true, TCD, TDD, kJ>(dk, sm.dy, m0, sm.st, nd0, lane);
    {
      float a[2][4] = {};
      prod<2, C, true, true, TCC, TCC, kJ>(a, sm.t, m0, sm.c1, n0, lane);
      if constexpr (!kJ) prod_join(dk, a);
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) st_bf2(&sm.c2[fr.cc(hh, j)], a[j][2 * hh], a[j][2 * hh + 1]);
    }
    tiles_fence();
    __syncthreads();  // T^T dT in c2; dT read by every warp (c1 free)
    OCLK(10);

    // ---- dL = strict_tril(-(T^T dT) T^T): M2 = dL beta_r Gamma into c1; F = dL (K K^T) Gamma; E = beta_r F ----
    float ef[2][4];
    {
      float dl[2][4] = {}, kk[2][4] = {};
      prod<2, C, false, false, TCC, TCC, kJ>(dl, sm.c2, m0, sm.t, n0, lane);
      prod<2, D, false, false, TCD, TCD, kJ>(kk, sm.k, m0, sm.k, n0, lane);
      if constexpr (!kJ) prod_join(dl, kk);
      dl_epilogue(dl, kk, sm.gam, sm.bet, fr, n0, sm.c1, sm.rf[quarter], ef);
    }
    __syncthreads();  // c2 (T^T dT) read by every warp
    OCLK(11);
    if (c > at[6]) {  // chunk c - 1's S^T and T (both read for the last time), its gates
      if (tid == 0) tma_st_t(c - 1);
      if (!gtma) gates_raw(c - 1, C);
    }

    // ---- dP = scale dO Vn^T: M1 = tril_incl(dP . Gamma) into c2; E += dP . P (its row and column sums) ----
    {
      float dp[2][4] = {};
      prod<2, D, false, false, TCD, TCD>(dp, dob, m0, vn, n0, lane);
      dp_epilogue(dp, qk, sm.gam, scale, fr, n0, sm.c2, sm.re[quarter], sm.ec[band], ef);
    }
    tiles_fence();
    __syncthreads();  // M1 in c2, M2 in c1; dO read for the last time as itself
    OCLK(12);
    if (c > at[6] && tid == 0) tma_cd(vn, &tm.d_o, 4, (c - 1) * C);  // chunk c - 1's dO rows into this chunk's Vn tile

    // ---- dq += M1 K; dk += M1^T Q + M2 K + M2^T K; dq, dk to the staging; dO scaled for the update ----
    prod<NTD, C, false, true, TCC, TCD, kJ>(dq, sm.c2, m0, sm.k, nd0, lane);
    prod<NTD, C, true, true, TCC, TCD, kJ>(dk, sm.c2, m0, sm.q, nd0, lane);
    prod<NTD, C, false, true, TCC, TCD, kJ>(dk, sm.c1, m0, sm.k, nd0, lane);
    prod<NTD, C, true, true, TCC, TCD, kJ>(dk, sm.c1, m0, sm.k, nd0, lane);
    if constexpr (!kJ) prod_join(dq, dk);
    OCLK(13);
#if GDN_BWD_ONEPASS_TMARED
    // dq's, then dk's column quarter (rows n .. C - 1 zero) as fp32 over this warpgroup's quarter of the dead dS^T copy
    // (8 KiB: row r's 16-byte piece i at r * 128 + 16 (i ^ (r & 7)), the maps' 128-byte swizzle), added into the sums
    // by one TMA reduction from the warpgroup's first thread; dk's staging waits for dq's tile to be read.
    const bool wlead = (tid & 127) == 0;
    unsigned char* const slot = reinterpret_cast<unsigned char*>(sm.ds) + quarter * 8192;
    auto reduce_tile = [&](const float(&x)[NTD][4], const opgraph_gemm::TmaMap* map, i64 head) {
#pragma unroll
      for (int j = 0; j < NTD; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = hh ? rb_ : ra, piece = 2 * j + (t4 >> 1);
          const bool in = r < n;
          *reinterpret_cast<float2*>(slot + r * 128 + ((piece ^ (r & 7)) << 4) + 8 * (t4 & 1)) =
              make_float2(in ? x[j][2 * hh] : 0.f, in ? x[j][2 * hh + 1] : 0.f);
        }
      opgraph_gemm::fence_async_shared();
      nb_sync(1 + quarter, 128);
      if (wlead) {
        tma_reduce_add(map, nd0, static_cast<int>(head), static_cast<int>(bos + c0), 0, smem_u32(slot));
        opgraph_gemm::tma_store_commit();
      }
    };
    reduce_tile(dq, &tm.dq, hq);
#else
    {
      float* sq_ = ws32(p, p.ws_dq);
      float* sk_ = ws32(p, p.ws_dk);
#if GDN_BWD_ONEPASS_RED
      // Lanes t4 and t4 ^ 1 swap halves: the even one then holds four adjacent columns of row ra, the odd one of row
      // rb_ (16-byte reductions, half as many).
      const bool odd_t = (t4 & 1) != 0;
      const int r = odd_t ? rb_ : ra, col = nd0 + 2 * (t4 & 2);
      const i64 rq = ((bos + c0 + r) * p.hq + hq) * D + col, rk = ((bos + c0 + r) * p.hk + hk) * D + col;
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        float v[2][4];
#pragma unroll
        for (int w = 0; w < 2; ++w) {
          const float(&x)[4] = w ? dk[j] : dq[j];
          const float s0 = __shfl_xor_sync(0xffffffffu, odd_t ? x[0] : x[2], 1);
          const float s1 = __shfl_xor_sync(0xffffffffu, odd_t ? x[1] : x[3], 1);
          v[w][0] = odd_t ? s0 : x[0], v[w][1] = odd_t ? s1 : x[1];
          v[w][2] = odd_t ? x[2] : s0, v[w][3] = odd_t ? x[3] : s1;
        }
#if GDN_BWD_WHATIF_NORED  // a measuring aid (wrong dq / dk): the reductions' cost, their products kept
        if (r < n && v[0][0] == 1234.5f && v[1][0] == 1234.5f) {
#else
        if (r < n) {
#endif
          red_add_f4(sq_ + rq + 8 * j, v[0]);
          red_add_f4(sk_ + rk + 8 * j, v[1]);
        }
      }
#else
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = hh ? rb_ : ra;
        if (r >= n) continue;
        const i64 row = ((bos + c0 + r) * p.ho + h) * D;
#pragma unroll
        for (int j = 0; j < NTD; ++j) {
          store_f2(sq_ + row + nd0 + 8 * j + 2 * t4, dq[j][2 * hh], dq[j][2 * hh + 1]);
          store_f2(sk_ + row + nd0 + 8 * j + 2 * t4, dk[j][2 * hh], dk[j][2 * hh + 1]);
        }
      }
#endif
    }
#endif  // GDN_BWD_ONEPASS_TMARED
    if (t4 == 0) {
      sm.rg[quarter][ra] = pg[0], sm.rg[quarter][rb_] = pg[1];
      sm.rb[quarter][ra] = pb[0], sm.rb[quarter][rb_] = pb[1];
      sm.rkd[quarter][ra] = pkd[0], sm.rkd[quarter][rb_] = pkd[1];
    }
    for (int i = tid; i < C * D / 2; i += kGT) {  // dO rows times scale e^gamma (element pairs)
      const int r = i / (D / 2), cc = 2 * (i % (D / 2));
      const float f = scale * exp2f(sm.gam[r]);
      const u32 w = lds32(&dob[TCD::at(r, cc)]);
      st_bf2(&dob[TCD::at(r, cc)], f * bf16_to_f32(static_cast<u16>(w)), f * bf16_to_f32(static_cast<u16>(w >> 16)));
    }
#if GDN_BWD_ONEPASS_TMARED
    if (wlead) opgraph_gemm::tma_store_wait_read();
    nb_sync(1 + quarter, 128);
    reduce_tile(dk, &tm.dk, hk);
#endif
    tiles_fence();
    __syncthreads();  // the partials, scale e^gamma dO
    OCLK(14);

    // ---- the update: dS^T <- e^gamma_C dS^T + (scale e^gamma dO)^T Q + dY^T K (value rows 64 b .. in half b) ----
    {
      const float egc = exp2f(gc);
#pragma unroll
      for (int b = 0; b < 2; ++b) {
#pragma unroll
        for (int j = 0; j < NTD; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) ds[b][j][e] *= egc;
        prod<NTD, C, true, true, TCD, TCD, kJ>(ds[b], dob + b * kPanel, m0, sm.q, nd0, lane);
        prod<NTD, C, true, true, TCD, TCD, kJ>(ds[b], sm.dy + b * kPanel, m0, sm.k, nd0, lane);
      }
      if constexpr (!kJ) prod_join(ds[0], ds[1]);
    }
    // ---- warp 0, rows 2 lane and 2 lane + 1: dgamma, dbeta, dgamma_C, the chunk's reverse cumsum, the stores ----
    if (warp == 0)
      gate_grads_epilogue(p, h, bos + c0, n, gc, sm.rg, sm.rb, sm.rkd, sm.re, sm.rf, sm.ec, sm.red, kGW, lane);
    OCLK(15);
    odd = !odd;
  }
#if GDN_BWD_CLOCK
  if (clk_on)
    for (int i = 0; i < 16; ++i)
      gdn_bwd_onepass_clock[16 * (tid >> 7) + i] = sm.clk[16 * (tid >> 7) + i] / (ce > cb ? ce - cb : 1);
#endif
#if GDN_BWD_ONEPASS_TMARED || GDN_BWD_ONEPASS_TMADV
  if ((tid & 127) == 0) opgraph_gemm::tma_store_wait();  // the last chunk's TMA reductions / stores done
#endif
  // ---- d_initial_state: dS^T at the sequence's start (d_final_state's elements were read by these same threads, or
  // by the fix-up's walk before this launch), from the first span only ----
  if ((p.flags & kBwdFlagWriteDInit) && (p.span_chunks <= 0 || blockIdx.z % p.n_spans == 0)) {
#pragma unroll
    for (int b = 0; b < 2; ++b)
#pragma unroll
      for (int j = 0; j < NTD; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
          store_any2(p.d_initial_state, sbase + static_cast<i64>(64 * b + m0 + g8 + 8 * hh) * D + nd0 + 8 * j + 2 * t4,
                     p.dinit_type, ds[b][j][2 * hh], ds[b][j][2 * hh + 1]);
  }
}
#endif  // GDN_BWD_ONEPASS_ROLES
