// linear_attention/kernels/gdn_bwd_grads.cu — the Gated DeltaNet backward's
// gradient kernels: gdn_bwd_grads (every token gradient of a chunk, the formulas
// in gdn_bwd_common.cuh), gdn_bwd_finish (the head-group sums and the l2norm
// Jacobian) and gdn_bwd_gate_params (safe_gate's d_a_log, d_dt_bias; those two in
// gdn_bwd_finish.cuh). gdn_bwd_states.cu for the kernels before them.
#include "linear_attention/kernels/gdn_bwd_grads_tiles.cuh"

using namespace opgraph_gdn;
using namespace opgraph_gdn::bwd;

// ---------------------------------------------------------------------------
// gdn_bwd_grads: one CTA of 16 warps per (chunk slot, q / k head) taking that head's
// group of output heads in turn where HQ = HK (kBwdFlagQkDirect), else per (chunk slot,
// output head); the formulas at the top. Warp w's tile of a [C][D] product is rows
// 16 (w % 4) .. + 16, columns (D / 4)(w / 4) .. + D / 4; of a [C][C] product rows
// 16 (w % 4), columns 16 (w / 4). Sixteen warps (four a scheduler) hide the latency of
// the products' short chains between barriers that eight could not. Over the group's
// heads dq accumulates in shared memory (sm.dqs) and dk in registers; the row and
// column sums of E and F come from the fragments (shuffles, then the four warps'
// partials in a fixed order), not from fp32 [C][C] tiles read back serially.
namespace opgraph_gdn {
namespace bwd {
constexpr int LDQ = D + 8;  // fp32 row stride of dqs: a warp's 64-bit fragment pairs on distinct banks
// gdn_bwd_grads' tiles a head (issue_tiles' mask): those free once the dP phase has read them (kTileEarly) and those
// its last products read (kTileLate).
enum : int { kTileVn = 1, kTileDvn = 2, kTileSt = 4, kTileT = 8, kTileV = 16, kTileDo = 32 };
constexpr int kTileEarly = kTileVn | kTileSt | kTileDo, kTileLate = kTileDvn | kTileT | kTileV;
static_assert(kGW == 16, "the warp tiles below assume 16 warps");
struct alignas(GDN_BWD_GRADS_WG ? 1024 : 4) GradSmem {
  u16 q[TCD::kElems];    // l2-normalised q rows (bf16), zero past the chunk
  u16 k[TCD::kElems];
  u16 v[TCD::kElems];
  u16 dob[TCD::kElems];  // dO (bf16; the products with it take the scale)
  u16 vn[TCD::kElems];
  u16 dvn[TCD::kElems];
  u16 dw[TCD::kElems];   // dW = -dVn S^T
  // dq of the CTA's rows, summed over its heads (fp32; each thread reads and writes only
  // its own fragments' elements, so no barrier guards it): out of the registers between
  // a head's first product and its last.
  float dqs[C * LDQ];
  u16 st[TDD::kElems];   // S^T, then dS^T
  u16 t[TCC::kElems];    // T = (I + L)^-1, the prep's bf16 copy (workspace block, kOffT)
  u16 c1[TCC::kElems];   // dT, then M2
  u16 c2[TCC::kElems];   // X = T^T dT, then M1
  float gam[C], bet[C];
  float rq[C], rk[C];  // the q and k rows' inverse norms (1 without use_qk_l2norm)
  // Per row, one partial sum per column quarter (the four warps sharing the row's
  // 16-row band): dgamma's, dbeta's and e^(gamma_C - gamma_r) k_r . dKd_r's terms from
  // the [C][D] fragments, the row sums of E and F; per column, the partial column
  // sums of E of each 16-row band.
  float rg[4][C], rb[4][C], rkd[4][C], re[4][C], rf[4][C], ec[4][C];
  float jq[4][C], jk[4][C];  // <x, dy> of the q and k rows, for the Jacobian (per column quarter)
  float red[16];     // <S^T, dS^T>'s partial sums (gdn_bwd_rev_scan's, 8 a V slice)
#if GDN_BWD_CLOCK
  long long clk[40];  // the phase clocks (GDN_BWD_CLOCK), summed over the heads
#endif
#if GDN_BWD_EPI_SPREAD
  float xchg[4];  // the epilogue's two warps' sums (GDN_BWD_EPI_SPREAD): warp 1's dgamma, each warp's k.dKd
#endif
};
static_assert(GDN_BWD_GRADS_WG || sizeof(GradSmem) == gdn_bwd_grads_smem_bytes(D),
              "gdn_bwd_grads_smem_bytes disagrees with GradSmem (GDN_BWD_CLOCK, GDN_BWD_EPI_SPREAD: wgmma only)");
// The variant aligns its base to 1024 bytes inside the engine's allocation.
static_assert(!GDN_BWD_GRADS_WG || sizeof(GradSmem) + 1024 <= gdn_bwd_grads_smem_bytes(D),
              "GDN_BWD_GRADS_WG's tiles do not fit the engine's allocation");

// Row r's sums over the four column quarters' partials: dgamma's (with E's row and column sums), dbeta's (with F's
// row sums) and the k.dKd terms'.
__device__ __forceinline__ void row_partials(const GradSmem& sm, int r, float& gs, float& bs, float& x) {
  gs = 0.f, bs = 0.f, x = 0.f;
#pragma unroll
  for (int q4 = 0; q4 < 4; ++q4) {
    gs += sm.rg[q4][r] + sm.re[q4][r] - sm.ec[q4][r];
    bs += sm.rb[q4][r] + sm.rf[q4][r];
    x += sm.rkd[q4][r];
  }
}

[[maybe_unused]] constexpr bool kPairs = GDN_BWD_GRADS_WG && GDN_BWD_WG_PAIRS;  // tiles.cuh, prod_join

}  // namespace bwd
}  // namespace opgraph_gdn

#include "linear_attention/kernels/gdn_bwd_grads_epi.cuh"

#if GDN_BWD_GRADS_WIDE
#include "linear_attention/kernels/gdn_bwd_grads_wide.cuh"
#else
extern "C" __global__ void __launch_bounds__(kGdnBwdGradsThreads, 1) gdn_bwd_grads(const GdnBwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
#if GDN_BWD_GRADS_WG
  GradSmem& sm = *reinterpret_cast<GradSmem*>(
      smem_raw + ((1024u - (static_cast<u32>(__cvta_generic_to_shared(smem_raw)) & 1023u)) & 1023u));
#else
  GradSmem& sm = *reinterpret_cast<GradSmem*>(smem_raw);
#endif
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const i64 slot = blockIdx.x;
#if GDN_BWD_CLOCK
  const bool clk_on = (tid & 127) == 0 && blockIdx.x == gridDim.x / 2 && blockIdx.y == 0;
  long long clk_t = clock64();
  if (clk_on)
    for (int i = 0; i < 10; ++i) sm.clk[10 * (tid >> 7) + i] = 0;
#endif
  if (p.n_seq <= 0) return;
  i64 bos = 0, c0 = 0;
  int n = 0;
  if (!slot_chunk(p, slot, lane, bos, c0, n)) return;
  // The CTA's output heads h0 .. h0 + G - 1: one q / k head's group (kBwdFlagQkDirect), else one head.
  const bool direct_qk = (p.flags & kBwdFlagQkDirect) != 0;
  const i64 G = direct_qk ? p.grads_group : 1, h0 = static_cast<i64>(blockIdx.y) * G;
  const i64 hq = h0 / (p.ho / p.hq), hk = h0 / (p.ho / p.hk);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const float scale = static_cast<float>(p.scale);
  // Warp tiles: [C][D] products 16 rows x D/4 columns; [C][C] products 16 x 16.
#if GDN_BWD_GRADS_WG && GDN_BWD_WG_ADDR
  // The warpgroup's index as a warp-uniform value (a broadcast): its products' descriptors stay uniform.
  const int band = warp & 3, quarter = __shfl_sync(0xffffffffu, warp >> 2, 0);
#else
  const int band = warp & 3, quarter = warp >> 2;
#endif
  const int m0 = 16 * band, nd0 = (D / 4) * quarter, n0 = 16 * quarter;
  const Frag fr(m0, quarter, lane);
  // This thread's two rows of every [C][*] fragment.
  const int ra = m0 + g8, rb_ = m0 + g8 + 8;
  constexpr int RPW = C / kGW;  // rows a warp in the row loads: 4

  // v and dO rows land raw by cp.async with the tiles where they are bf16 already (the
  // tensor-core operand type): v under bf16 q / k / v, dO when it is bf16; otherwise
  // through registers. dO is not scaled in the tile: the products with it are.
  constexpr bool kRawV = GDN_IO == 0;
  const bool raw_do = p.do_type == kTypeBf16;
  // GDN_BWD_DV_STAGE: dV (16-bit, straight to the output, 16-byte aligned) staged in sm.vn, free by the dVb phase,
  // then stored as 16-byte row pieces.
#if GDN_BWD_DV_STAGE
  const bool stage_dv = p.hv == p.ho && p.dv_type != kTypeF32 && (p.dv & 15u) == 0;
#endif
  // cp.async of the tiles of head h that mask m names (kTile*; this thread's share), one commit group.
  auto issue_tiles = [&](i64 h, int m) {
    const i64 sh = slot * p.ho + h, hv = h / (p.ho / p.hv);
    const bool tvn = m & kTileVn, tdvn = m & kTileDvn, tst = m & kTileSt, tt = m & kTileT, tv = m & kTileV,
               tdo = m & kTileDo;
#if GDN_BWD_GRADS_WG && GDN_BWD_WG_ADDR
    if (tvn) copy_tile_rows<TCD, C, D>(sm.vn, ws16(p, p.ws_vn) + sh * C * D, tid);
    if (tdvn) copy_tile_rows<TCD, C, D>(sm.dvn, ws16(p, p.ws_dvn) + sh * C * D, tid);
    if (tst) copy_tile_rows<TDD, D, D>(sm.st, ws16(p, p.ws_st) + sh * D * D, tid);
    if (tt) copy_tile_rows<TCC, C, C>(sm.t, ws16(p, p.ws_blocks) + sh * kBlockElems + kOffT, tid);  // T (prep's)
    {
      // Rows r0 and r0 + 32, column c (copy_tile_rows' pieces of a [C][D] tile); rows past the chunk zero-filled.
      const int r0 = tid >> 4, c = (tid & 15) * 8;
      const u16* vb = reinterpret_cast<const u16*>(p.v) + (bos + c0) * p.v_ts + hv * p.v_hs + c;
      const u16* ob = reinterpret_cast<const u16*>(p.d_o) + ((bos + c0) * p.ho + h) * D + c;
      const int at = TCD::at(r0, c);
#pragma unroll
      for (int it = 0; it < 2; ++it) {
        const int r = r0 + 32 * it;
        const bool in = r < n;
        const i64 rr = in ? r : 0;
        if (kRawV && tv) cp_async16(&sm.v[at + it * 32 * 64], vb + rr * p.v_ts, in ? 16 : 0);
        if (raw_do && tdo) cp_async16(&sm.dob[at + it * 32 * 64], ob + rr * (p.ho * D), in ? 16 : 0);
      }
    }
#else
    if (tvn) copy_tile_to<TCD>(sm.vn, ws16(p, p.ws_vn) + sh * C * D, D, C, D, tid);
    if (tdvn) copy_tile_to<TCD>(sm.dvn, ws16(p, p.ws_dvn) + sh * C * D, D, C, D, tid);
    if (tst) copy_tile_to<TDD>(sm.st, ws16(p, p.ws_st) + sh * D * D, D, D, D, tid);
    if (tt) copy_tile_to<TCC>(sm.t, ws16(p, p.ws_blocks) + sh * kBlockElems + kOffT, C, C, C, tid);  // T (prep's)
    constexpr int pieces = D / 8;
    for (int i = tid; i < C * pieces; i += kGT) {
      const int r = i / pieces, c = (i % pieces) * 8;
      const bool in = r < n;
      const i64 tok = bos + c0 + (in ? r : 0);
      if (kRawV && tv)
        cp_async16(&sm.v[TCD::at(r, c)], reinterpret_cast<const u16*>(p.v) + tok * p.v_ts + hv * p.v_hs + c, in ? 16 : 0);
      if (raw_do && tdo)
        cp_async16(&sm.dob[TCD::at(r, c)], reinterpret_cast<const u16*>(p.d_o) + (tok * p.ho + h) * D + c, in ? 16 : 0);
    }
#endif
    cp_async_commit();
  };
  // A head's tiles: one group.
  auto issue_head = [&](i64 h) { issue_tiles(h, kTileEarly | kTileLate); };
#if GDN_BWD_GATES_AHEAD
  // Head hh's raw gates and betas (warp 0: tokens 2 lane, 2 lane + 1) and <S^T, dS^T>'s partial sums (warp 1), read
  // a head ahead; rows past the chunk keep zero bits (made zero gates below, as the engine's build does).
  u32 ahead[4] = {0u, 0u, 0u, 0u};
  auto fetch_ahead = [&](i64 hh) {
    if (warp == 0) {
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = 2 * lane + i;
        const i64 off = (bos + c0 + (r < n ? r : 0)) * p.ho + hh;
        ahead[2 * i] = r < n ? raw_any(p.g, off, p.g_type) : 0u;
        ahead[2 * i + 1] = r < n ? raw_any(p.beta, off, p.beta_type) : 0u;
      }
    } else if (warp == 1 && lane < 8 * (D / BV)) {
      ahead[0] = __float_as_uint(ws32(p, p.ws_sds)[(slot * p.ho + hh) * 16 + lane]);
    }
  };
  fetch_ahead(h0);
#endif
  issue_head(h0);
  // q and k rows once (l2-normalised, bf16), their raw copies and inverse norms.
  {
    const u16* qg = reinterpret_cast<const u16*>(p.q);
    const u16* kg = reinterpret_cast<const u16*>(p.k);
    RowRaw rq[RPW], rk[RPW];
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int r = warp + kGW * i;
      if (r < n) {
        const i64 tok = bos + c0 + r;
        rq[i] = load_row_raw(qg + tok * p.q_ts + hq * p.q_hs + lane * EL);
        rk[i] = load_row_raw(kg + tok * p.k_ts + hk * p.k_hs + lane * EL);
      } else {
        rq[i] = 0, rk[i] = 0;
      }
    }
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int r = warp + kGW * i;
      float xq[EL], xk[EL];
      unpack_row(rq[i], xq);
      unpack_row(rk[i], xk);
      float iq = 1.f, ik = 1.f;
      if (l2) {
        // use_qk_l2norm: x / sqrt(sum x^2 + 1e-6) (gdn_common.cuh's l2norm_rows), keeping the factor.
        float sq = 0.f, sk = 0.f;
#pragma unroll
        for (int e = 0; e < EL; ++e) sq += xq[e] * xq[e], sk += xk[e] * xk[e];
        iq = rsqrtf(warp_sum(sq) + 1e-6f);
        ik = rsqrtf(warp_sum(sk) + 1e-6f);
#pragma unroll
        for (int e = 0; e < EL; ++e) xq[e] *= iq, xk[e] *= ik;
      }
      if (lane == 0) sm.rq[r] = iq, sm.rk[r] = ik;
      st_row(&sm.q[TCD::at(r, lane * EL)], xq);
      st_row(&sm.k[TCD::at(r, lane * EL)], xk);
    }
  }

  // dk of the rows' fragments, summed over the CTA's heads (dq: sm.dqs, then dq).
  float dq[NTD][4], dk[NTD][4], tmp[NTD][4];
  zero(dk);
#pragma unroll 1
  for (i64 g = 0; g < G; ++g) {
    const i64 h = h0 + g, hv = h / (p.ho / p.hv), sh = slot * p.ho + h;
    if (g) {
      // The previous head's tiles, partial sums and gates all read. GDN_BWD_EPI_DEFER: not waited for — every tile
      // read came before the head's last barrier, and warp 0's epilogue (after it) reads only the partial sums and
      // <S^T, dS^T> (rewritten after the next barrier, or by warp 0 itself), so the other warps start this head
      // while warp 0 finishes that one.
      if (!GDN_BWD_EPI_DEFER) __syncthreads();
      if (!GDN_BWD_EARLY_LOADS) issue_head(h);  // else requested during the head before
    }
    GCLK(0);
    if (!kRawV || !raw_do) {
      const u16* vg = reinterpret_cast<const u16*>(p.v);
#pragma unroll
      for (int i = 0; i < RPW; ++i) {
        const int r = warp + kGW * i;
        const i64 tok = bos + c0 + r;
        float x[EL];
        if (!kRawV) {
          if (r < n) load_row_share(vg + tok * p.v_ts + hv * p.v_hs + lane * EL, x);
          else
#pragma unroll
            for (int e = 0; e < EL; ++e) x[e] = 0.f;
          st_row(&sm.v[TCD::at(r, lane * EL)], x);
        }
        if (!raw_do) {
#pragma unroll
          for (int e = 0; e < EL; e += 2) {
            x[e] = x[e + 1] = 0.f;
            if (r < n) load_any2(p.d_o, (tok * p.ho + h) * D + lane * EL + e, p.do_type, x[e], x[e + 1]);
          }
          st_row(&sm.dob[TCD::at(r, lane * EL)], x);
        }
      }
    }
#if GDN_BWD_GATES_AHEAD
    if (warp == 0) {
      // The head's gates through their transforms and the chunk's cumsum, with no barrier between.
      float alog = 0.f, dt = 0.f;
      if (p.flags & kFlagSafeGate) safe_gate_params(p, h, alog, dt);
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float gl = 0.f, b = 0.f;
        if (2 * lane + i < n)
          gate_beta_with(p, raw_f32(ahead[2 * i], p.g_type), raw_f32(ahead[2 * i + 1], p.beta_type), alog, dt, gl, b);
        sm.gam[2 * lane + i] = gl;
        sm.bet[2 * lane + i] = b;
      }
      chunk_gate_cumsum(sm.gam, lane);  // each lane reads back its own two
    } else if (warp == 1 && lane < 8 * (D / BV) && !GDN_BWD_EPI_DEFER) {
      sm.red[lane] = __uint_as_float(ahead[0]);
    }
#else
    if (tid < C) {
      float gl = 0.f, b = 0.f;
      if (tid < n) gate_beta(p, bos + c0 + tid, h, gl, b);
      sm.gam[tid] = gl;
      sm.bet[tid] = b;
    }
    // <S, dS> over the whole [D][D] tile pair: the reverse scan's partial sums.
    if (!GDN_BWD_SDS_IN_GRADS && tid < 8 * (D / BV)) sm.red[tid] = ws32(p, p.ws_sds)[sh * 16 + tid];
    __syncthreads();
    if (warp == 0) chunk_gate_cumsum(sm.gam, lane);
#endif
    cp_async_wait_all();
    tiles_fence();
    __syncthreads();
#if GDN_BWD_GATES_AHEAD
    // (GDN_BWD_EPI_DEFER: the head's <S^T, dS^T> sums once warp 0 has read the previous head's.)
    if (GDN_BWD_EPI_DEFER && warp == 1 && lane < 8 * (D / BV)) sm.red[lane] = __uint_as_float(ahead[0]);
    if (g + 1 < G) fetch_ahead(h + 1);  // this head's were stored to shared memory before the barrier
#endif
    GCLK(1);
    const float gc = sm.gam[C - 1];
    // This thread's rows' scalars.
    const float ega = exp2f(sm.gam[ra]), egb = exp2f(sm.gam[rb_]);
    const float eda = exp2f(gc - sm.gam[ra]), edb = exp2f(gc - sm.gam[rb_]);
    const float ba = sm.bet[ra], bb = sm.bet[rb_];

    float pg[2] = {0.f, 0.f}, pb[2] = {0.f, 0.f}, pkd[2] = {0.f, 0.f};  // row partials (rows ra, rb_)
    // ---- products with S^T: dQe = (scale dO) S^T (dq += e^gamma dQe), dW = -dVn S^T ----
    zero(tmp);
    prod<NTD, D, false, true, TCD, TDD>(tmp, sm.dob, m0, sm.st, nd0, lane);
    {
      float r0, r1;
      row_dot(tmp, sm.q, fr, r0, r1);
      const float fa = scale * ega, fb = scale * egb;  // dO's scale
      pg[0] += fa * r0;
      pg[1] += fb * r1;
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        float* a = &sm.dqs[ra * LDQ + nd0 + 8 * j + 2 * t4];
        float* b = &sm.dqs[rb_ * LDQ + nd0 + 8 * j + 2 * t4];
        float a0 = 0.f, a1 = 0.f, b0 = 0.f, b1 = 0.f;
        if (g) load_f2(a, a0, a1), load_f2(b, b0, b1);
        store_f2(a, a0 + fa * tmp[j][0], a1 + fa * tmp[j][1]);
        store_f2(b, b0 + fb * tmp[j][2], b1 + fb * tmp[j][3]);
      }
    }
    zero(tmp);
    prod<NTD, D, false, true, TCD, TDD>(tmp, sm.dvn, m0, sm.st, nd0, lane);
#pragma unroll
    for (int j = 0; j < NTD; ++j) {
      st_bf2(&sm.dw[fr.cd(0, j)], -tmp[j][0], -tmp[j][1]);
      st_bf2(&sm.dw[fr.cd(1, j)], -tmp[j][2], -tmp[j][3]);
    }
    tiles_fence();
    __syncthreads();  // S^T read by every warp; dw written
    GCLK(2);
#if GDN_BWD_GRADS_WG && GDN_BWD_WG_ADDR
    copy_tile_rows<TDD, D, D>(sm.st, ws16(p, p.ws_dst) + sh * D * D, tid);
#else
    copy_tile_to<TDD>(sm.st, ws16(p, p.ws_dst) + sh * D * D, D, D, D, tid);
#endif
    cp_async_commit();

    // ---- dT = dW K^T diag(beta e^gamma) + dVn V^T diag(beta), into c1 ----
    {
      float a1[2][4] = {}, a2[2][4] = {};
      prod<2, D, false, false, TCD, TCD, !kPairs>(a1, sm.dw, m0, sm.k, n0, lane);
      prod<2, D, false, false, TCD, TCD, !kPairs>(a2, sm.dvn, m0, sm.v, n0, lane);
      if constexpr (kPairs) prod_join(a1, a2);
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int s = n0 + 8 * j + 2 * t4;
          float x[2];
#pragma unroll
          for (int e = 0; e < 2; ++e)
            x[e] = sm.bet[s + e] * (exp2f(sm.gam[s + e]) * a1[j][2 * hh + e] + a2[j][2 * hh + e]);
          st_bf2(&sm.c1[fr.cc(hh, j)], x[0], x[1]);
        }
    }
    cp_async_wait_all();
    tiles_fence();
    __syncthreads();  // dT in c1, dS^T in st
    GCLK(3);
#if GDN_BWD_SDS_IN_GRADS
    // <S^T, dS^T>: this thread's four 16-byte pieces of S^T read again (L2: copied at the head's start), dotted with
    // dS^T's in shared memory at the phase's end.
    uint4 s_pc[4];
    sds_pieces(ws16(p, p.ws_st) + sh * D * D, tid, s_pc);
#endif

    // ---- dKd = Vn dS^T: dk += e^(gamma_C - gamma) dKd ----
    zero(tmp);
    prod<NTD, D, false, true, TCD, TDD>(tmp, sm.vn, m0, sm.st, nd0, lane);
    {
      float r0, r1;
      row_dot(tmp, sm.k, fr, r0, r1);
      pkd[0] += eda * r0;
      pkd[1] += edb * r1;
      pg[0] -= eda * r0;
      pg[1] -= edb * r1;
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        dk[j][0] += eda * tmp[j][0];
        dk[j][1] += eda * tmp[j][1];
        dk[j][2] += edb * tmp[j][2];
        dk[j][3] += edb * tmp[j][3];
      }
    }

    // ---- X = T^T dT into c2 ----
    {
      float x[2][4] = {};
      prod<2, C, true, true, TCC, TCC>(x, sm.t, m0, sm.c1, n0, lane);
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
          st_bf2(&sm.c2[fr.cc(hh, j)], x[j][2 * hh], x[j][2 * hh + 1]);
    }
#if GDN_BWD_SDS_IN_GRADS
    {
      const float acc = sds_dot(s_pc, sm.st, tid);
      if (lane == 0) sm.red[warp] = acc;  // the 16 partial sums warp 0's epilogue adds
    }
#endif
    tiles_fence();
    __syncthreads();  // X in c2; dT read by every warp (c1 free)
    GCLK(4);

    // ---- dL = strict_tril(-X T^T): M2 = dL beta_r Gamma into c1, F = dL (K K^T) Gamma (its row
    // sums), E = beta_r F (kept in registers for the dP . P term) ----
    float ef[2][4];
    {
      float dl[2][4] = {}, kk[2][4] = {};
      prod<2, C, false, false, TCC, TCC, !kPairs>(dl, sm.c2, m0, sm.t, n0, lane);
      prod<2, D, false, false, TCD, TCD, !kPairs>(kk, sm.k, m0, sm.k, n0, lane);
      if constexpr (kPairs) prod_join(dl, kk);
      float f[2][4];
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = m0 + g8 + 8 * hh, s0 = n0 + 8 * j + 2 * t4;
          float m2[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int s = s0 + e;
            const float gam_rs = s < r ? exp2f(sm.gam[r] - sm.gam[s]) : 0.f;
            const float d = -dl[j][2 * hh + e];
            f[j][2 * hh + e] = d * kk[j][2 * hh + e] * gam_rs;
            ef[j][2 * hh + e] = sm.bet[r] * f[j][2 * hh + e];
            m2[e] = d * sm.bet[r] * gam_rs;
          }
          st_bf2(&sm.c1[fr.cc(hh, j)], m2[0], m2[1]);
        }
      float row[2], col[2][2];
      frag_sums(f, row, col);
      if (t4 == 0) sm.rf[quarter][ra] = row[0], sm.rf[quarter][rb_] = row[1];
    }
    __syncthreads();  // c2 (X) read by every warp
    GCLK(5);

    // ---- dP = (scale dO) Vn^T: M1 = tril_incl(dP . Gamma) into c2, E += dP . P (its row and column sums) ----
    {
      float dp[2][4] = {}, qk[2][4] = {};
      prod<2, D, false, false, TCD, TCD, !kPairs>(dp, sm.dob, m0, sm.vn, n0, lane);
      prod<2, D, false, false, TCD, TCD, !kPairs>(qk, sm.q, m0, sm.k, n0, lane);
      if constexpr (kPairs) prod_join(dp, qk);
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = m0 + g8 + 8 * hh, s0 = n0 + 8 * j + 2 * t4;
          float m1[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int s = s0 + e;
            const float gam_rs = s <= r ? exp2f(sm.gam[r] - sm.gam[s]) : 0.f;
            m1[e] = scale * dp[j][2 * hh + e] * gam_rs;  // dO's scale
            ef[j][2 * hh + e] += m1[e] * qk[j][2 * hh + e];
          }
          st_bf2(&sm.c2[fr.cc(hh, j)], m1[0], m1[1]);
        }
      float row[2], col[2][2];
      frag_sums(ef, row, col);
      if (t4 == 0) sm.re[quarter][ra] = row[0], sm.re[quarter][rb_] = row[1];
      if (g8 == 0)
#pragma unroll
        for (int j = 0; j < 2; ++j) store_f2(&sm.ec[band][n0 + 8 * j + 2 * t4], col[j][0], col[j][1]);
    }
    tiles_fence();
    __syncthreads();  // M1 in c2, M2 in c1
    GCLK(6);
    if (GDN_BWD_EARLY_LOADS == 1 && g + 1 < G) issue_tiles(h + 1, kTileEarly);  // Vn, S^T (dS^T), dO read by now

    // ---- dq += M1 K;  dk += M1^T Q + M2 K + M2^T K ----
#pragma unroll
    for (int j = 0; j < NTD; ++j) {
      load_f2(&sm.dqs[ra * LDQ + nd0 + 8 * j + 2 * t4], dq[j][0], dq[j][1]);
      load_f2(&sm.dqs[rb_ * LDQ + nd0 + 8 * j + 2 * t4], dq[j][2], dq[j][3]);
    }
    prod<NTD, C, false, true, TCC, TCD>(dq, sm.c2, m0, sm.k, nd0, lane);
    if (direct_qk && g + 1 < G)
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        store_f2(&sm.dqs[ra * LDQ + nd0 + 8 * j + 2 * t4], dq[j][0], dq[j][1]);
        store_f2(&sm.dqs[rb_ * LDQ + nd0 + 8 * j + 2 * t4], dq[j][2], dq[j][3]);
      }
    prod<NTD, C, true, true, TCC, TCD>(dk, sm.c2, m0, sm.q, nd0, lane);
    prod<NTD, C, false, true, TCC, TCD>(dk, sm.c1, m0, sm.k, nd0, lane);
    prod<NTD, C, true, true, TCC, TCD>(dk, sm.c1, m0, sm.k, nd0, lane);

    // ---- dKb = T^T dW: dk += beta e^gamma dKb ----
    zero(tmp);
    prod<NTD, C, true, true, TCC, TCD>(tmp, sm.t, m0, sm.dw, nd0, lane);
    {
      float r0, r1;
      row_dot(tmp, sm.k, fr, r0, r1);
      pb[0] += ega * r0;
      pb[1] += egb * r1;
      pg[0] += ba * ega * r0;
      pg[1] += bb * egb * r1;
      const float fa = ba * ega, fb = bb * egb;
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        dk[j][0] += fa * tmp[j][0];
        dk[j][1] += fa * tmp[j][1];
        dk[j][2] += fb * tmp[j][2];
        dk[j][3] += fb * tmp[j][3];
      }
    }
    if (!direct_qk) {
      // One head a CTA (HQ != HK): dq and dk to the fp32 staging, which gdn_bwd_finish sums
      // over the head groups (G = 1: the registers restart at zero, and the loop ends here).
      float* sq_ = ws32(p, p.ws_dq);
      float* sk_ = ws32(p, p.ws_dk);
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
    }
    GCLK(7);
    // ---- dVb = T^T dVn: dv = beta dVb ----
    zero(tmp);
    prod<NTD, C, true, true, TCC, TCD>(tmp, sm.t, m0, sm.dvn, nd0, lane);
    {
      float r0, r1;
      row_dot(tmp, sm.v, fr, r0, r1);
      pb[0] += r0;
      pb[1] += r1;
      // Every v head its own output head (HV = HO): dV in its type straight to the
      // output, [T][HV][D] as the staging's rows; otherwise fp32 to the staging, which
      // gdn_bwd_finish sums over each v head's group.
      const bool direct = p.hv == p.ho;
      float* sv_ = ws32(p, p.ws_dv);
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = hh ? rb_ : ra;
        const float br = hh ? bb : ba;
        if (r >= n) continue;
        const i64 row = ((bos + c0 + r) * p.ho + h) * D;
#pragma unroll
        for (int j = 0; j < NTD; ++j) {
          const i64 at = row + nd0 + 8 * j + 2 * t4;
#if GDN_BWD_DV_STAGE
          if (direct && stage_dv) {
            const float a = br * tmp[j][2 * hh], b = br * tmp[j][2 * hh + 1];
            const u16 lo = p.dv_type == kTypeBf16 ? f32_to_bf16(a) : f32_to_f16(a);
            const u16 hi = p.dv_type == kTypeBf16 ? f32_to_bf16(b) : f32_to_f16(b);
            *reinterpret_cast<u32*>(&sm.vn[fr.cd(hh, j)]) = static_cast<u32>(lo) | (static_cast<u32>(hi) << 16);
            continue;
          }
#endif
          if (direct)
            store_any2(p.dv, at, p.dv_type, br * tmp[j][2 * hh], br * tmp[j][2 * hh + 1]);
          else
            store_f2(sv_ + at, br * tmp[j][2 * hh], br * tmp[j][2 * hh + 1]);
        }
      }
    }
    if (t4 == 0) {
      sm.rg[quarter][ra] = pg[0];
      sm.rg[quarter][rb_] = pg[1];
      sm.rb[quarter][ra] = pb[0];
      sm.rb[quarter][rb_] = pb[1];
      sm.rkd[quarter][ra] = pkd[0];
      sm.rkd[quarter][rb_] = pkd[1];
    }
    __syncthreads();
    // dVn, T, v (2: every tile) read by now: requested under warp 0's epilogue
    if (GDN_BWD_EARLY_LOADS && g + 1 < G)
      issue_tiles(h + 1, GDN_BWD_EARLY_LOADS == 1 ? kTileLate : kTileEarly | kTileLate);
#if GDN_BWD_DV_STAGE
    if (stage_dv) {
      // dV's rows from their staging in sm.vn, a 16-byte piece a thread at a time (rows past the chunk not stored).
      for (int i = tid; i < C * (D / 8); i += kGT) {
        const int r = i / (D / 8), c = (i % (D / 8)) * 8;
        if (r < n)
          *reinterpret_cast<uint4*>(reinterpret_cast<u16*>(p.dv) + ((bos + c0 + r) * p.ho + h) * D + c) =
              *reinterpret_cast<const uint4*>(&sm.vn[TCD::at(r, c)]);
      }
    }
#endif

    GCLK(8);
#if GDN_BWD_EPI_SPREAD
    if (warp < 2) epilogue_rows(p, sm, tid, n, bos + c0, h, gc);
#else
    // ---- warp 0, rows 2 lane and 2 lane + 1: dgamma (with E's row and column sums), dbeta
    // (with F's row sums), dgamma_C, the chunk's reverse cumsum, the gate / beta transforms ----
    if (warp == 0) {
      float dgam[2], dbet[2], kd[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = 2 * lane + i;
        float gs, bs, x;
        row_partials(sm, r, gs, bs, x);
        const bool in = r < n;
        dgam[i] = in ? gs : 0.f;
        dbet[i] = in ? bs : 0.f;
        kd[i] = in ? x : 0.f;
      }
      const float sum_kd = warp_sum(kd[0] + kd[1]);
      const float red = warp_sum(lane < 8 * (D / BV) ? sm.red[lane] : 0.f);
      const float dgc = sum_kd + exp2f(gc) * red;
      // dg_r = dgamma_C + sum_{s >= r} dgamma_s: the lanes' pair sums scanned from the last lane down.
      float suffix = dgam[0] + dgam[1];
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const float y = __shfl_down_sync(0xffffffffu, suffix, o);
        if (lane + o < 32) suffix += y;
      }
      const float after = suffix - dgam[0] - dgam[1];  // the lanes above this one
      const float dgr[2] = {dgc + after + dgam[1] + dgam[0], dgc + after + dgam[1]};
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = 2 * lane + i;
        if (r >= n) continue;
        store_gate_grads(p, h, bos + c0 + r, dgr[i], dbet[i]);
      }
    }
#endif
    GCLK(9);
  }
#if GDN_BWD_CLOCK
  if (clk_on)
    for (int i = 0; i < 10; ++i) gdn_bwd_clock[10 * (tid >> 7) + i] = sm.clk[10 * (tid >> 7) + i] / G;
#endif
  if (!direct_qk) return;

  // ---- dQ, dK of the group's sums: under use_qk_l2norm through the Jacobian of x -> r x
  // (r = (|x|^2 + 1e-6)^-1/2): dx = r (dy - r x <r x, dy>), with the raw rows (global: read
  // again, this CTA's own rows) ----
  float sq_[2] = {1.f, 1.f}, sk_[2] = {1.f, 1.f}, dotq[2] = {0.f, 0.f}, dotk[2] = {0.f, 0.f};
  float xq[2][NTD][2], xk[2][NTD][2];  // the raw elements of this thread's fragments (rows ra, rb_)
  if (l2) {
    const u16* qg = reinterpret_cast<const u16*>(p.q);
    const u16* kg = reinterpret_cast<const u16*>(p.k);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = hh ? rb_ : ra;
      const i64 tok = bos + c0 + (r < n ? r : 0);
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        const int col = nd0 + 8 * j + 2 * t4;
        const u32 wq = r < n ? lds32(qg + tok * p.q_ts + hq * p.q_hs + col) : 0u;
        const u32 wk = r < n ? lds32(kg + tok * p.k_ts + hk * p.k_hs + col) : 0u;
        xq[hh][j][0] = io_to_f32(static_cast<u16>(wq)), xq[hh][j][1] = io_to_f32(static_cast<u16>(wq >> 16));
        xk[hh][j][0] = io_to_f32(static_cast<u16>(wk)), xk[hh][j][1] = io_to_f32(static_cast<u16>(wk >> 16));
      }
    }
    float q0 = 0.f, q1 = 0.f, k0 = 0.f, k1 = 0.f;
#pragma unroll
    for (int j = 0; j < NTD; ++j) {
      q0 += dq[j][0] * xq[0][j][0] + dq[j][1] * xq[0][j][1];
      q1 += dq[j][2] * xq[1][j][0] + dq[j][3] * xq[1][j][1];
      k0 += dk[j][0] * xk[0][j][0] + dk[j][1] * xk[0][j][1];
      k1 += dk[j][2] * xk[1][j][0] + dk[j][3] * xk[1][j][1];
    }
#pragma unroll
    for (int o = 1; o <= 2; o <<= 1) {
      q0 += __shfl_xor_sync(0xffffffffu, q0, o);
      q1 += __shfl_xor_sync(0xffffffffu, q1, o);
      k0 += __shfl_xor_sync(0xffffffffu, k0, o);
      k1 += __shfl_xor_sync(0xffffffffu, k1, o);
    }
    if (t4 == 0) {
      sm.jq[quarter][ra] = q0, sm.jq[quarter][rb_] = q1;
      sm.jk[quarter][ra] = k0, sm.jk[quarter][rb_] = k1;
    }
    __syncthreads();
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = hh ? rb_ : ra;
      sq_[hh] = sm.rq[r];
      sk_[hh] = sm.rk[r];
      float a = 0.f, b = 0.f;
#pragma unroll
      for (int q4 = 0; q4 < 4; ++q4) a += sm.jq[q4][r], b += sm.jk[q4][r];
      dotq[hh] = sq_[hh] * sq_[hh] * a;  // r <r x, dy> = r^2 <x, dy>
      dotk[hh] = sk_[hh] * sk_[hh] * b;
    }
  }
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int r = hh ? rb_ : ra;
    if (r >= n) continue;
    const i64 tok = bos + c0 + r;
#pragma unroll
    for (int j = 0; j < NTD; ++j) {
      const int col = nd0 + 8 * j + 2 * t4;
      const float x0 = l2 ? xq[hh][j][0] : 0.f, x1 = l2 ? xq[hh][j][1] : 0.f;
      const float y0 = l2 ? xk[hh][j][0] : 0.f, y1 = l2 ? xk[hh][j][1] : 0.f;
      const float a0 = dq[j][2 * hh], a1 = dq[j][2 * hh + 1], b0 = dk[j][2 * hh], b1 = dk[j][2 * hh + 1];
      store_any2(p.dq, (tok * p.hq + hq) * D + col, p.dq_type, sq_[hh] * (a0 - x0 * dotq[hh]),
                 sq_[hh] * (a1 - x1 * dotq[hh]));
      store_any2(p.dk, (tok * p.hk + hk) * D + col, p.dk_type, sk_[hh] * (b0 - y0 * dotk[hh]),
                 sk_[hh] * (b1 - y1 * dotk[hh]));
    }
  }
}

#endif  // GDN_BWD_GRADS_WIDE

// GDN_BWD_ONEPASS (gdn_bwd_params.cuh; a trial): gdn_bwd_onepass, the one-pass design's second pass.
#if GDN_BWD_ONEPASS && GDN_BWD_GRADS_WG && !GDN_BWD_GRADS_WIDE
#include "linear_attention/kernels/gdn_bwd_onepass.cuh"
#endif

#include "linear_attention/kernels/gdn_bwd_finish.cuh"
