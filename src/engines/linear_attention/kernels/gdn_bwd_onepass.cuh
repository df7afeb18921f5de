// linear_attention/kernels/gdn_bwd_onepass.cuh — gdn_bwd_onepass, the one-pass backward's second pass (a trial,
// -DGDN_BWD_ONEPASS=1 at d = 128 on the wgmma tiles: kernels/gdn_bwd_grads.cu includes it there; its first pass is
// gdn_bwd_fwd_st_fused, ws3_pass PH 7 in kernels/gdn_fused_ws3.cuh). docs/linear_attention.md, "The one-pass design".
//
// One CTA of 16 warps per (output head, sequence) — grid (1, HO, N) — walks the sequence's chunks from the last,
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
// the phases one after another between CTA barriers, the loads at each chunk's start (nothing in flight across
// chunks yet): the algebra's first device form (on an H100 every gradient within bench/gdn_bwd_ab.cu's bounds of the
// engine's at its first run, bench/results/2026-12-07-gdn-onepass-h100.txt), not yet made fast.
// dq and dk go to the fp32 staging per output head (gdn_bwd_finish sums them over the q / k head groups and applies
// the l2norm Jacobian; the launch leaves kBwdFlagQkDirect off), dv straight out where HV = HO (else staged), dG and
// dBeta through store_gate_grads, d_initial_state at the end. bf16 q, k, v and dO only (the trial's inputs).
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
  u16 p[TCC::kElems];    // P (unscaled)
  u16 c1[TCC::kElems];   // dT, then M2
  u16 c2[TCC::kElems];   // T^T dT, then M1
  float gam[C], bet[C];
  // Per row, one partial a column quarter (the four warps of the row's band): dgamma's, dbeta's, the k . dKd terms,
  // E's and F's row sums; per column, E's column sums of each 16-row band.
  float rg[4][C], rb[4][C], rkd[4][C], re[4][C], rf[4][C], ec[4][C];
  float red[16];  // <S_c^T, dS^T>, a partial a warp
};
static_assert(sizeof(OnePassSmem) + 1024 <= 232448, "gdn_bwd_onepass: over the 227 KiB a CTA may have");
constexpr unsigned kOnePassSmemBytes = sizeof(OnePassSmem) + 1024;

}  // namespace bwd
}  // namespace opgraph_gdn

extern "C" __device__ unsigned gdn_bwd_onepass_smem_bytes = opgraph_gdn::bwd::kOnePassSmemBytes;

extern "C" __global__ void __launch_bounds__(kGdnBwdGradsThreads, 1) gdn_bwd_onepass(const GdnBwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  OnePassSmem& sm = *reinterpret_cast<OnePassSmem*>(
      smem_raw + ((1024u - (static_cast<u32>(__cvta_generic_to_shared(smem_raw)) & 1023u)) & 1023u));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const i64 h = blockIdx.y, seq = blockIdx.z;
  if (seq >= p.n_seq) return;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 first = bos / C + seq;  // the sequence's first chunk slot
  const int nch = static_cast<int>((len + C - 1) / C);
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const float scale = static_cast<float>(p.scale);
  const int band = warp & 3, quarter = __shfl_sync(0xffffffffu, warp >> 2, 0);
  const int m0 = 16 * band, nd0 = (D / 4) * quarter, n0 = 16 * quarter;
  const Frag fr(m0, quarter, lane);
  const int ra = m0 + g8, rb_ = m0 + g8 + 8;
  constexpr int RPW = C / kGW;  // rows a warp in the row loads
  constexpr int kPanel = C * 64;  // elements of a [C][D] tile's 64-column panel

  // dS^T's fragments: ds[b][j][e], row 64 b + m0 + g8 (+ 8 for e >= 2), column nd0 + 8 j + 2 t4 (+ 1).
  float ds[2][NTD][4];
  const i64 sbase = (seq * p.ho + h) * D * D;
#pragma unroll
  for (int b = 0; b < 2; ++b)
#pragma unroll
    for (int j = 0; j < NTD; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        float x = 0.f, y = 0.f;
        if (p.flags & kBwdFlagHasDFinal)
          load_any2(p.d_final_state, sbase + static_cast<i64>(64 * b + m0 + g8 + 8 * hh) * D + nd0 + 8 * j + 2 * t4,
                    p.dfin_type, x, y);
        ds[b][j][2 * hh] = x;
        ds[b][j][2 * hh + 1] = y;
      }

#pragma unroll 1
  for (int c = nch - 1; c >= 0; --c) {
    const i64 c0 = static_cast<i64>(c) * C, sh = (first + c) * p.ho + h;
    const int n = static_cast<int>(len - c0 < C ? len - c0 : C);
    __syncthreads();  // the chunk after's readers are done with every tile and partial
    // ---- loads: S_c^T, T, v and dO rows by cp.async; q, k rows normalised; gates; dS^T to its tile ----
    copy_tile_rows<TDD, D, D>(sm.st, ws16(p, p.ws_st) + sh * D * D, tid);
    copy_tile_rows<TCC, C, C>(sm.t, ws16(p, p.ws_blocks) + sh * kBlockElems + kOffT, tid);
    {
      const int r0 = tid >> 4, cc = (tid & 15) * 8;
      const u16* vb = reinterpret_cast<const u16*>(p.v) + (bos + c0) * p.v_ts + hv * p.v_hs + cc;
      const u16* ob = reinterpret_cast<const u16*>(p.d_o) + ((bos + c0) * p.ho + h) * D + cc;
#pragma unroll
      for (int it = 0; it < 2; ++it) {
        const int r = r0 + 32 * it;
        const bool in = r < n;
        const i64 rr = in ? r : 0;
        cp_async16(&sm.x[TCD::at(r, cc)], vb + rr * p.v_ts, in ? 16 : 0);
        cp_async16(&sm.dob[TCD::at(r, cc)], ob + rr * (p.ho * D), in ? 16 : 0);
      }
    }
    cp_async_commit();
    {
      const u16* qg = reinterpret_cast<const u16*>(p.q);
      const u16* kg = reinterpret_cast<const u16*>(p.k);
#pragma unroll
      for (int i = 0; i < RPW; ++i) {
        const int r = warp + kGW * i;
        float xq[EL], xk[EL];
        if (r < n) {
          const i64 tok = bos + c0 + r;
          unpack_row(load_row_raw(qg + tok * p.q_ts + hq * p.q_hs + lane * EL), xq);
          unpack_row(load_row_raw(kg + tok * p.k_ts + hk * p.k_hs + lane * EL), xk);
        } else {
#pragma unroll
          for (int e = 0; e < EL; ++e) xq[e] = xk[e] = 0.f;
        }
        if (l2) l2norm_rows(xq, xk);
        st_row(&sm.q[TCD::at(r, lane * EL)], xq);
        st_row(&sm.k[TCD::at(r, lane * EL)], xk);
      }
    }
    if (tid < C) {
      float gl = 0.f, b = 0.f;
      if (tid < n) gate_beta(p, bos + c0 + tid, h, gl, b);
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
    cp_async_wait_all();
    tiles_fence();
    __syncthreads();
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
    const float gc = sm.gam[C - 1];
    const float ega = exp2f(sm.gam[ra]), egb = exp2f(sm.gam[rb_]);
    const float eda = exp2f(gc - sm.gam[ra]), edb = exp2f(gc - sm.gam[rb_]);
    const float ba = sm.bet[ra], bb = sm.bet[rb_];
    float pg[2] = {0.f, 0.f}, pb[2] = {0.f, 0.f}, pkd[2] = {0.f, 0.f};

    // ---- Y = K S_c, X = V - e^gamma Y (in place of V); Q K^T, P ----
    float y[NTD][4], qk[2][4] = {};
    zero(y);
    prod<NTD, D, false, false, TCD, TDD>(y, sm.k, m0, sm.st, nd0, lane);
    prod<2, D, false, false, TCD, TCD>(qk, sm.q, m0, sm.k, n0, lane);
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

    // ---- Vn = (T diag beta) X; dVn = scale P^T dO + e^(gamma_C - gamma) (K dS) ----
    {
      float a[NTD][4], b2[NTD][4];
      zero(a);
      prod<NTD, C, false, true, TCC, TCD>(a, sm.tv, m0, sm.x, nd0, lane);
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        st_bf2(&sm.vn[fr.cd(0, j)], a[j][0], a[j][1]);
        st_bf2(&sm.vn[fr.cd(1, j)], a[j][2], a[j][3]);
      }
      zero(a);
      zero(b2);
      prod<NTD, C, true, true, TCC, TCD>(a, sm.p, m0, sm.dob, nd0, lane);
      prod<NTD, D, false, false, TCD, TDD>(b2, sm.k, m0, sm.ds, nd0, lane);
#pragma unroll
      for (int j = 0; j < NTD; ++j) {
        st_bf2(&sm.dvn[fr.cd(0, j)], scale * a[j][0] + eda * b2[j][0], scale * a[j][1] + eda * b2[j][1]);
        st_bf2(&sm.dvn[fr.cd(1, j)], scale * a[j][2] + edb * b2[j][2], scale * a[j][3] + edb * b2[j][3]);
      }
    }
    tiles_fence();
    __syncthreads();  // Vn, dVn written

    float dq[NTD][4], dk[NTD][4], tmp[NTD][4];
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
          if (r >= n) continue;
          const float br = hh ? bb : ba;
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
    }
    // ---- dQe = scale dO S_c^T: dq = e^gamma dQe; dKd = Vn dS^T: dk = e^(gamma_C - gamma) dKd ----
    zero(dq);
    prod<NTD, D, false, true, TCD, TDD>(dq, sm.dob, m0, sm.st, nd0, lane);
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
    zero(dk);
    prod<NTD, D, false, true, TCD, TDD>(dk, sm.vn, m0, sm.ds, nd0, lane);
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
    // ---- dT = dVn (diag(beta) X)^T into c1 ----
    {
      float a[2][4] = {};
      prod<2, D, false, false, TCD, TCD>(a, sm.dvn, m0, sm.x, n0, lane);
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int s = n0 + 8 * j + 2 * t4;
          st_bf2(&sm.c1[fr.cc(hh, j)], sm.bet[s] * a[j][2 * hh], sm.bet[s + 1] * a[j][2 * hh + 1]);
        }
    }
    tiles_fence();
    __syncthreads();  // dY, dT written

    // ---- dk += dY S_c^T; T^T dT into c2 ----
    prod<NTD, D, false, true, TCD, TDD>(dk, sm.dy, m0, sm.st, nd0, lane);
    {
      float a[2][4] = {};
      prod<2, C, true, true, TCC, TCC>(a, sm.t, m0, sm.c1, n0, lane);
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) st_bf2(&sm.c2[fr.cc(hh, j)], a[j][2 * hh], a[j][2 * hh + 1]);
    }
    tiles_fence();
    __syncthreads();  // T^T dT in c2; dT read by every warp (c1 free)

    // ---- dL = strict_tril(-(T^T dT) T^T): M2 = dL beta_r Gamma into c1; F = dL (K K^T) Gamma; E = beta_r F ----
    float ef[2][4];
    {
      float dl[2][4] = {}, kk[2][4] = {};
      prod<2, C, false, false, TCC, TCC>(dl, sm.c2, m0, sm.t, n0, lane);
      prod<2, D, false, false, TCD, TCD>(kk, sm.k, m0, sm.k, n0, lane);
      dl_epilogue(dl, kk, sm.gam, sm.bet, fr, n0, sm.c1, sm.rf[quarter], ef);
    }
    __syncthreads();  // c2 (T^T dT) read by every warp

    // ---- dP = scale dO Vn^T: M1 = tril_incl(dP . Gamma) into c2; E += dP . P (its row and column sums) ----
    {
      float dp[2][4] = {};
      prod<2, D, false, false, TCD, TCD>(dp, sm.dob, m0, sm.vn, n0, lane);
      dp_epilogue(dp, qk, sm.gam, scale, fr, n0, sm.c2, sm.re[quarter], sm.ec[band], ef);
    }
    tiles_fence();
    __syncthreads();  // M1 in c2, M2 in c1; dO read for the last time as itself

    // ---- dq += M1 K; dk += M1^T Q + M2 K + M2^T K; dq, dk to the staging; dO scaled for the update ----
    prod<NTD, C, false, true, TCC, TCD>(dq, sm.c2, m0, sm.k, nd0, lane);
    prod<NTD, C, true, true, TCC, TCD>(dk, sm.c2, m0, sm.q, nd0, lane);
    prod<NTD, C, false, true, TCC, TCD>(dk, sm.c1, m0, sm.k, nd0, lane);
    prod<NTD, C, true, true, TCC, TCD>(dk, sm.c1, m0, sm.k, nd0, lane);
    {
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
    if (t4 == 0) {
      sm.rg[quarter][ra] = pg[0], sm.rg[quarter][rb_] = pg[1];
      sm.rb[quarter][ra] = pb[0], sm.rb[quarter][rb_] = pb[1];
      sm.rkd[quarter][ra] = pkd[0], sm.rkd[quarter][rb_] = pkd[1];
    }
    for (int i = tid; i < C * D / 2; i += kGT) {  // dO rows times scale e^gamma (element pairs)
      const int r = i / (D / 2), cc = 2 * (i % (D / 2));
      const float f = scale * exp2f(sm.gam[r]);
      const u32 w = lds32(&sm.dob[TCD::at(r, cc)]);
      st_bf2(&sm.dob[TCD::at(r, cc)], f * bf16_to_f32(static_cast<u16>(w)), f * bf16_to_f32(static_cast<u16>(w >> 16)));
    }
    tiles_fence();
    __syncthreads();  // the partials, scale e^gamma dO

    // ---- the update: dS^T <- e^gamma_C dS^T + (scale e^gamma dO)^T Q + dY^T K (value rows 64 b .. in half b) ----
    {
      const float egc = exp2f(gc);
#pragma unroll
      for (int b = 0; b < 2; ++b) {
#pragma unroll
        for (int j = 0; j < NTD; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) ds[b][j][e] *= egc;
        prod<NTD, C, true, true, TCD, TCD>(ds[b], sm.dob + b * kPanel, m0, sm.q, nd0, lane);
        prod<NTD, C, true, true, TCD, TCD>(ds[b], sm.dy + b * kPanel, m0, sm.k, nd0, lane);
      }
    }
    // ---- warp 0, rows 2 lane and 2 lane + 1: dgamma, dbeta, dgamma_C, the chunk's reverse cumsum, the stores ----
    if (warp == 0)
      gate_grads_epilogue(p, h, bos + c0, n, gc, sm.rg, sm.rb, sm.rkd, sm.re, sm.rf, sm.ec, sm.red, kGW, lane);
  }
  // ---- d_initial_state: dS^T at the sequence's start (d_final_state's elements were read by these same threads) ----
  if (p.flags & kBwdFlagWriteDInit) {
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
