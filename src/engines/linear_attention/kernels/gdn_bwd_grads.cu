// linear_attention/kernels/gdn_bwd_grads.cu — the Gated DeltaNet backward's
// gradient kernels: gdn_bwd_grads (every token gradient of a chunk, the formulas
// in gdn_bwd_common.cuh), gdn_bwd_finish (the head-group sums and the l2norm
// Jacobian) and gdn_bwd_gate_params (safe_gate's d_a_log, d_dt_bias).
// gdn_bwd_states.cu for the kernels before them.
#include "linear_attention/kernels/gdn_bwd_common.cuh"

using namespace opgraph_gdn;
using namespace opgraph_gdn::bwd;

// ---------------------------------------------------------------------------
// gdn_bwd_grads: one CTA per (chunk slot, output head); the formulas at the top.
namespace opgraph_gdn {
namespace bwd {
// Row stride of the fp32 [C][C] tiles here (E and F): even, so a lane's two
// adjacent fragment elements go as one 64-bit store, the 32 lanes' pairs on
// distinct banks (the odd LDF of the other kernels leaves two to four lanes on a bank).
constexpr int LDG = C + 8;
struct GradSmem {
  u16 q[C * LDD];    // l2-normalised q rows (bf16), zero past the chunk
  u16 k[C * LDD];
  u16 v[C * LDD];
  u16 dob[C * LDD];  // scale * dO
  u16 vn[C * LDD];
  u16 dvn[C * LDD];
  u16 dw[C * LDD];   // dW = -dVn S^T
  u16 st[D * LDD];   // S^T, then dS^T
  u16 t[C * LDC];    // T = (I + L)^-1, the prep's bf16 copy (workspace block, kOffT)
  u16 c1[C * LDC];   // dT, then M2
  u16 c2[C * LDC];   // X = T^T dT, then M1
  float lf[C * LDG]; // E
  float tf[C * LDG]; // F
  float gam[C], bet[C];
  float rg[2][C];    // dgamma row partials (per column half)
  float rb[2][C];    // dbeta row partials
  float rkd[2][C];   // e^(gamma_C - gamma_r) k_r . dKd_r partials
  float re[C], rf[C]; // row sums of E and F
  float red[16];     // <S^T, dS^T>'s partial sums (gdn_bwd_rev_scan's, 8 a V slice)
};
static_assert(sizeof(GradSmem) == gdn_bwd_grads_smem_bytes(D), "gdn_bwd_grads_smem_bytes disagrees with GradSmem");

constexpr int NTD = D / 16;  // n-tiles of a warp's [16 x D/2] piece of a [C][D] product

// Per row of a warp's [16 x D/2] fragment f, the dot product with the same
// piece of the bf16 tile x ([C][LDD]): r0 for row m0 + g8, r1 for m0 + g8 + 8
// (summed over the four lanes of a row).
__device__ __forceinline__ void row_dot(const float (&f)[NTD][4], const u16* x, int m0, int nd0, int lane, float& r0,
                                        float& r1) {
  const int g8 = lane >> 2, t4 = lane & 3;
  float a0 = 0.f, a1 = 0.f;
#pragma unroll
  for (int j = 0; j < NTD; ++j) {
    const int col = nd0 + 8 * j + 2 * t4;
    const u32 w0 = lds32(&x[(m0 + g8) * LDD + col]), w1 = lds32(&x[(m0 + g8 + 8) * LDD + col]);
    a0 += f[j][0] * bf16_to_f32(static_cast<u16>(w0)) + f[j][1] * bf16_to_f32(static_cast<u16>(w0 >> 16));
    a1 += f[j][2] * bf16_to_f32(static_cast<u16>(w1)) + f[j][3] * bf16_to_f32(static_cast<u16>(w1 >> 16));
  }
  a0 += __shfl_xor_sync(0xffffffffu, a0, 1);
  a0 += __shfl_xor_sync(0xffffffffu, a0, 2);
  a1 += __shfl_xor_sync(0xffffffffu, a1, 1);
  a1 += __shfl_xor_sync(0xffffffffu, a1, 2);
  r0 = a0;
  r1 = a1;
}
// A lane's EL consecutive elements of a row as bf16 at a: one 64-bit store at
// EL = 4 (the warp's 32 stores then fill distinct banks), 32-bit pairs otherwise.
__device__ __forceinline__ void st_row(u16* a, const float (&x)[EL]) {
  if constexpr (EL == 4) {
    uint2 w;
    w.x = pack_bf16(x[0], x[1]);
    w.y = pack_bf16(x[2], x[3]);
    *reinterpret_cast<uint2*>(a) = w;
  } else {
#pragma unroll
    for (int e = 0; e < EL; e += 2) st_bf2(a + e, x[e], x[e + 1]);
  }
}
template <int NT>
__device__ __forceinline__ void zero(float (&f)[NT][4]) {
#pragma unroll
  for (int j = 0; j < NT; ++j) f[j][0] = f[j][1] = f[j][2] = f[j][3] = 0.f;
}
}  // namespace bwd
}  // namespace opgraph_gdn

extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_bwd_grads(const GdnBwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  GradSmem& sm = *reinterpret_cast<GradSmem*>(smem_raw);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const i64 slot = blockIdx.x, h = blockIdx.y;
  if (p.n_seq <= 0) return;
  i64 bos = 0, c0 = 0;
  int n = 0;
  if (!slot_chunk(p, slot, lane, bos, c0, n)) return;
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const i64 sh = slot * p.ho + h;
  const float scale = static_cast<float>(p.scale);
  // Warp tiles: [C][D] products 16 rows x D/2 columns; [C][C] products 16 x 32.
  const int m0 = 16 * (warp & 3), nd0 = (D / 2) * (warp >> 2), n0 = 32 * (warp >> 2), half = warp >> 2;

  // ---- inputs: Vn, dVn, S^T (cp.async); q, k, v rows; gates; scale dO ----
  copy_tile(sm.vn, LDD, ws16(p, p.ws_vn) + sh * C * D, D, C, D, tid);
  copy_tile(sm.dvn, LDD, ws16(p, p.ws_dvn) + sh * C * D, D, C, D, tid);
  copy_tile(sm.st, LDD, ws16(p, p.ws_st) + sh * D * D, D, D, D, tid);
  copy_tile(sm.t, LDC, ws16(p, p.ws_blocks) + sh * kBlockElems + kOffT, C, C, C, tid);  // T, from the prep
  cp_async_commit();
  {
    const u16* qg = reinterpret_cast<const u16*>(p.q);
    const u16* kg = reinterpret_cast<const u16*>(p.k);
    const u16* vg = reinterpret_cast<const u16*>(p.v);
    constexpr int RPW = C / (kThreads / 32);
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int r = warp + (kThreads / 32) * i;
      float xq[EL], xk[EL], xv[EL];
      if (r < n) {
        const i64 tok = bos + c0 + r;
        unpack_row(load_row_raw(qg + tok * p.q_ts + hq * p.q_hs + lane * EL), xq);
        unpack_row(load_row_raw(kg + tok * p.k_ts + hk * p.k_hs + lane * EL), xk);
        unpack_row(load_row_raw(vg + tok * p.v_ts + hv * p.v_hs + lane * EL), xv);
        if (l2) l2norm_rows(xq, xk);
      } else {
#pragma unroll
        for (int e = 0; e < EL; ++e) xq[e] = 0.f, xk[e] = 0.f, xv[e] = 0.f;
      }
      st_row(&sm.q[r * LDD + lane * EL], xq);
      st_row(&sm.k[r * LDD + lane * EL], xk);
      st_row(&sm.v[r * LDD + lane * EL], xv);
    }
  }
  for (int i = tid; i < C * D / 2; i += kThreads) {
    const int r = i / (D / 2), c = 2 * (i % (D / 2));
    float a = 0.f, b = 0.f;
    if (r < n) load_any2(p.d_o, ((bos + c0 + r) * p.ho + h) * D + c, p.do_type, a, b);
    st_bf2(&sm.dob[r * LDD + c], scale * a, scale * b);
  }
  if (tid < C) {
    float gl = 0.f, b = 0.f;
    if (tid < n) gate_beta(p, bos + c0 + tid, h, gl, b);
    sm.gam[tid] = gl;
    sm.bet[tid] = b;
  }
  // <S, dS> over the whole [D][D] tile pair: the reverse scan's partial sums.
  if (tid < 8 * (D / BV)) sm.red[tid] = ws32(p, p.ws_sds)[sh * 16 + tid];
  __syncthreads();
  if (warp == 0) chunk_gate_cumsum(sm.gam, lane);
  cp_async_wait_all();
  __syncthreads();
  const float gc = sm.gam[C - 1];
  // This thread's two rows of every [C][*] fragment and their scalars.
  const int ra = m0 + g8, rb_ = m0 + g8 + 8;
  const float ega = exp2f(sm.gam[ra]), egb = exp2f(sm.gam[rb_]);
  const float eda = exp2f(gc - sm.gam[ra]), edb = exp2f(gc - sm.gam[rb_]);
  const float ba = sm.bet[ra], bb = sm.bet[rb_];

  float dk[NTD][4], tmp[NTD][4];
  float pg[2] = {0.f, 0.f}, pb[2] = {0.f, 0.f}, pkd[2] = {0.f, 0.f};  // row partials (rows ra, rb_)
  // ---- products with S^T: dQe = (scale dO) S^T, dW = -dVn S^T ----
  zero(tmp);
  warp_mma<NTD, D, false, true>(tmp, sm.dob + m0 * LDD, LDD, sm.st + nd0, LDD, lane);
  {
    float r0, r1;
    row_dot(tmp, sm.q, m0, nd0, lane, r0, r1);
    pg[0] += ega * r0;
    pg[1] += egb * r1;
    // e^gamma dQe to the dq staging now (this thread adds M1 K to the same elements below).
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = hh ? rb_ : ra;
      const float f = hh ? egb : ega;
      if (r >= n) continue;
      float* row = ws32(p, p.ws_dq) + ((bos + c0 + r) * p.ho + h) * D;
#pragma unroll
      for (int j = 0; j < NTD; ++j)
        store_f2(row + nd0 + 8 * j + 2 * t4, f * tmp[j][2 * hh], f * tmp[j][2 * hh + 1]);
    }
  }
  zero(tmp);
  warp_mma<NTD, D, false, true>(tmp, sm.dvn + m0 * LDD, LDD, sm.st + nd0, LDD, lane);
#pragma unroll
  for (int j = 0; j < NTD; ++j) {
    const int col = nd0 + 8 * j + 2 * t4;
    st_bf2(&sm.dw[ra * LDD + col], -tmp[j][0], -tmp[j][1]);
    st_bf2(&sm.dw[rb_ * LDD + col], -tmp[j][2], -tmp[j][3]);
  }
  __syncthreads();  // S^T read by every warp; dw written
  copy_tile(sm.st, LDD, ws16(p, p.ws_dst) + sh * D * D, D, D, D, tid);
  cp_async_commit();

  // ---- dT = dW K^T diag(beta e^gamma) + dVn V^T diag(beta), into c1 ----
  {
    float a1[4][4] = {}, a2[4][4] = {};
    warp_mma<4, D>(a1, sm.dw + m0 * LDD, LDD, sm.k + n0 * LDD, LDD, lane);
    warp_mma<4, D>(a2, sm.dvn + m0 * LDD, LDD, sm.v + n0 * LDD, LDD, lane);
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = m0 + g8 + 8 * hh, s = n0 + 8 * j + 2 * t4;
        float x[2];
#pragma unroll
        for (int e = 0; e < 2; ++e)
          x[e] = sm.bet[s + e] * (exp2f(sm.gam[s + e]) * a1[j][2 * hh + e] + a2[j][2 * hh + e]);
        st_bf2(&sm.c1[r * LDC + s], x[0], x[1]);
      }
  }
  cp_async_wait_all();
  __syncthreads();  // dT in c1, dS^T in st

  // ---- dKd = Vn dS^T ----
  zero(tmp);
  warp_mma<NTD, D, false, true>(tmp, sm.vn + m0 * LDD, LDD, sm.st + nd0, LDD, lane);
  {
    float r0, r1;
    row_dot(tmp, sm.k, m0, nd0, lane, r0, r1);
    pkd[0] += eda * r0;
    pkd[1] += edb * r1;
    pg[0] -= eda * r0;
    pg[1] -= edb * r1;
#pragma unroll
    for (int j = 0; j < NTD; ++j) {
      dk[j][0] = eda * tmp[j][0];
      dk[j][1] = eda * tmp[j][1];
      dk[j][2] = edb * tmp[j][2];
      dk[j][3] = edb * tmp[j][3];
    }
  }

  // ---- X = T^T dT into c2 ----
  {
    float x[4][4] = {};
    warp_mma<4, C, true, true>(x, sm.t + m0, LDC, sm.c1 + n0, LDC, lane);
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh)
        st_bf2(&sm.c2[(m0 + g8 + 8 * hh) * LDC + n0 + 8 * j + 2 * t4], x[j][2 * hh], x[j][2 * hh + 1]);
  }
  __syncthreads();  // X in c2; dT read by every warp (c1 free)

  // ---- dL = strict_tril(-X T^T): M2 = dL beta_r Gamma into c1, F = dL (K K^T) Gamma, E = beta_r F ----
  {
    float dl[4][4] = {}, kk[4][4] = {};
    warp_mma<4, C>(dl, sm.c2 + m0 * LDC, LDC, sm.t + n0 * LDC, LDC, lane);
    warp_mma<4, D>(kk, sm.k + m0 * LDD, LDD, sm.k + n0 * LDD, LDD, lane);
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = m0 + g8 + 8 * hh, s0 = n0 + 8 * j + 2 * t4;
        float m2[2], f[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int s = s0 + e;
          const float gam_rs = s < r ? exp2f(sm.gam[r] - sm.gam[s]) : 0.f;
          const float d = -dl[j][2 * hh + e];
          f[e] = d * kk[j][2 * hh + e] * gam_rs;
          m2[e] = d * sm.bet[r] * gam_rs;
        }
        store_f2(&sm.tf[r * LDG + s0], f[0], f[1]);
        store_f2(&sm.lf[r * LDG + s0], sm.bet[r] * f[0], sm.bet[r] * f[1]);
        st_bf2(&sm.c1[r * LDC + s0], m2[0], m2[1]);
      }
  }
  __syncthreads();  // c2 (X) read by every warp

  // ---- dP = (scale dO) Vn^T: M1 = tril_incl(dP . Gamma) into c2, E += dP . P ----
  {
    float dp[4][4] = {}, qk[4][4] = {};
    warp_mma<4, D>(dp, sm.dob + m0 * LDD, LDD, sm.vn + n0 * LDD, LDD, lane);
    warp_mma<4, D>(qk, sm.q + m0 * LDD, LDD, sm.k + n0 * LDD, LDD, lane);
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = m0 + g8 + 8 * hh, s0 = n0 + 8 * j + 2 * t4;
        float m1[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int s = s0 + e;
          const float gam_rs = s <= r ? exp2f(sm.gam[r] - sm.gam[s]) : 0.f;
          m1[e] = dp[j][2 * hh + e] * gam_rs;
        }
        float e0, e1;
        load_f2(&sm.lf[r * LDG + s0], e0, e1);
        store_f2(&sm.lf[r * LDG + s0], e0 + m1[0] * qk[j][2 * hh], e1 + m1[1] * qk[j][2 * hh + 1]);
        st_bf2(&sm.c2[r * LDC + s0], m1[0], m1[1]);
      }
  }
  __syncthreads();  // M1 in c2, M2 in c1, E in lf, F in tf

  // ---- dq += M1 K (onto the staged e^gamma dQe);  dk += M1^T Q + M2 K + M2^T K ----
  zero(tmp);
  warp_mma<NTD, C, false, true>(tmp, sm.c2 + m0 * LDC, LDC, sm.k + nd0, LDD, lane);
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int r = hh ? rb_ : ra;
    if (r >= n) continue;
    float* row = ws32(p, p.ws_dq) + ((bos + c0 + r) * p.ho + h) * D;
#pragma unroll
    for (int j = 0; j < NTD; ++j) {
      float a, b;
      load_f2(row + nd0 + 8 * j + 2 * t4, a, b);
      store_f2(row + nd0 + 8 * j + 2 * t4, a + tmp[j][2 * hh], b + tmp[j][2 * hh + 1]);
    }
  }
  warp_mma<NTD, C, true, true>(dk, sm.c2 + m0, LDC, sm.q + nd0, LDD, lane);
  warp_mma<NTD, C, false, true>(dk, sm.c1 + m0 * LDC, LDC, sm.k + nd0, LDD, lane);
  warp_mma<NTD, C, true, true>(dk, sm.c1 + m0, LDC, sm.k + nd0, LDD, lane);

  // ---- dKb = T^T dW: dk += beta e^gamma dKb ----
  zero(tmp);
  warp_mma<NTD, C, true, true>(tmp, sm.t + m0, LDC, sm.dw + nd0, LDD, lane);
  {
    float r0, r1;
    row_dot(tmp, sm.k, m0, nd0, lane, r0, r1);
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
  // dk to the staging (rows of the chunk).
  {
    float* sk_ = ws32(p, p.ws_dk);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = hh ? rb_ : ra;
      if (r >= n) continue;
      const i64 row = ((bos + c0 + r) * p.ho + h) * D;
#pragma unroll
      for (int j = 0; j < NTD; ++j)
        store_f2(sk_ + row + nd0 + 8 * j + 2 * t4, dk[j][2 * hh], dk[j][2 * hh + 1]);
    }
  }
  // ---- dVb = T^T dVn: dv = beta dVb ----
  zero(tmp);
  warp_mma<NTD, C, true, true>(tmp, sm.t + m0, LDC, sm.dvn + nd0, LDD, lane);
  {
    float r0, r1;
    row_dot(tmp, sm.v, m0, nd0, lane, r0, r1);
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
        if (direct)
          store_any2(p.dv, at, p.dv_type, br * tmp[j][2 * hh], br * tmp[j][2 * hh + 1]);
        else
          store_f2(sv_ + at, br * tmp[j][2 * hh], br * tmp[j][2 * hh + 1]);
      }
    }
  }
  if (t4 == 0) {
    sm.rg[half][ra] = pg[0];
    sm.rg[half][rb_] = pg[1];
    sm.rb[half][ra] = pb[0];
    sm.rb[half][rb_] = pb[1];
    sm.rkd[half][ra] = pkd[0];
    sm.rkd[half][rb_] = pkd[1];
  }
  // Row sums of E and F: warp w rows 8w .. 8w + 7, the lanes across a row.
#pragma unroll
  for (int i = 0; i < C / (kThreads / 32); ++i) {
    const int r = (C / (kThreads / 32)) * warp + i;
    const float e = warp_sum(sm.lf[r * LDG + lane] + sm.lf[r * LDG + lane + 32]);
    const float f = warp_sum(sm.tf[r * LDG + lane] + sm.tf[r * LDG + lane + 32]);
    if (lane == 0) sm.re[r] = e, sm.rf[r] = f;
  }
  __syncthreads();

  // ---- per row: dgamma (with the E sums), dbeta (with the F sums); warp 0 finishes ----
  if (warp < 2) {
    const int r = tid;  // 0 .. 63
    float e_col = 0.f;
    for (int s = 0; s < C; ++s) e_col += sm.lf[s * LDG + r];
    const float e_row = sm.re[r], f_row = sm.rf[r];
    const bool in = r < n;
    sm.gam[r] = in ? sm.rg[0][r] + sm.rg[1][r] + e_row - e_col : 0.f;  // gamma no longer needed: dgamma
    sm.bet[r] = in ? sm.rb[0][r] + sm.rb[1][r] + f_row : 0.f;           // beta no longer needed: dbeta
    sm.rkd[0][r] = in ? sm.rkd[0][r] + sm.rkd[1][r] : 0.f;
  }
  __syncthreads();
  if (tid == 0) {
    float sum_kd = 0.f, red = 0.f;
    for (int r = 0; r < C; ++r) sum_kd += sm.rkd[0][r];
    for (int w = 0; w < 8 * (D / BV); ++w) red += sm.red[w];
    const float dgc = sum_kd + exp2f(gc) * red;
    // Reverse cumsum: dg_r = sum_{s >= r} dgamma_s, with dgamma_C at the last row.
    float acc = dgc;
    for (int r = n - 1; r >= 0; --r) {
      acc += sm.gam[r];
      sm.gam[r] = acc;
    }
  }
  __syncthreads();
  if (tid < n) {
    const i64 tok = bos + c0 + tid, off = tok * p.ho + h;
    float dg = sm.gam[tid], db = sm.bet[tid];
    if (p.flags & kFlagSafeGate) {
      // g' = -e^a_log softplus(x + dt): dx = dg' (-e^a_log) sigmoid(x + dt); the
      // token's terms of d_a_log (dg' g') and d_dt_bias (dx) to the [HO][T] staging.
      float ea, dt;
      gate_params(p, h, ea, dt);
      const float z = load_any(p.g, off, p.g_type) + dt;
      const float gl = -ea * softplusf_(z), dx = -dg * ea * sigmoidf_(z);
      ws32(p, p.ws_ga)[h * p.t + tok] = dg * gl;
      ws32(p, p.ws_gd)[h * p.t + tok] = dx;
      dg = dx;
    } else if (p.flags & kFlagLinearGate) {
      const float a = load_any(p.g, off, p.g_type);
      dg = (a > 0.f && logf(a) > -200.f) ? dg / a : 0.f;
    }
    if (p.flags & kFlagBetaSigmoid) {
      const float sg = sigmoidf_(load_any(p.beta, off, p.beta_type));
      db *= ((p.flags & kFlagNegEig) ? 2.f : 1.f) * sg * (1.f - sg);
    }
    store_any(p.dg, off, p.dg_type, dg);
    store_any(p.dbeta, off, p.dbeta_type, db);
  }
}

// ---------------------------------------------------------------------------
// gdn_bwd_finish: one warp per token. dQ[t, i] = sum over the output heads h of
// q head i of the staged dq[t, h] (then, under use_qk_l2norm, x = q[t, i]:
// r = (|x|^2 + 1e-6)^-1/2, y = r x, dx = r (dy - y <y, dy>)); dK likewise; dV
// the sum over v head groups.
namespace opgraph_gdn {
namespace bwd {
__device__ __forceinline__ void finish_rows(const GdnBwdParams& p, i64 tok, int lane, const float* stage, i64 heads,
                                            u64 raw, i64 ts, i64 hs, bool l2, u64 out, long long out_type) {
  const i64 group = p.ho / heads;
  for (i64 i = 0; i < heads; ++i) {
    float dy[EL];
#pragma unroll
    for (int e = 0; e < EL; ++e) dy[e] = 0.f;
    for (i64 h = i * group; h < (i + 1) * group; ++h) {
      const float* s = stage + (tok * p.ho + h) * D + lane * EL;
#pragma unroll
      for (int e = 0; e < EL; ++e) dy[e] += s[e];
    }
    if (l2) {
      float x[EL];
      unpack_row(load_row_raw(reinterpret_cast<const u16*>(raw) + tok * ts + i * hs + lane * EL), x);
      float ss = 0.f;
#pragma unroll
      for (int e = 0; e < EL; ++e) ss += x[e] * x[e];
      const float r = rsqrtf(warp_sum(ss) + 1e-6f);
      float dot = 0.f;
#pragma unroll
      for (int e = 0; e < EL; ++e) dot += x[e] * r * dy[e];
      dot = warp_sum(dot);
#pragma unroll
      for (int e = 0; e < EL; ++e) dy[e] = r * (dy[e] - x[e] * r * dot);
    }
    const i64 o = (tok * heads + i) * D + lane * EL;
#pragma unroll
    for (int e = 0; e < EL; e += 2) store_any2(out, o + e, out_type, dy[e], dy[e + 1]);
  }
}
}  // namespace bwd
}  // namespace opgraph_gdn

extern "C" __global__ void __launch_bounds__(kThreads) gdn_bwd_finish(const GdnBwdParams p) {
  const int lane = threadIdx.x & 31;
  const i64 tok = static_cast<i64>(blockIdx.x) * (kThreads / 32) + (threadIdx.x >> 5);
  if (tok >= p.t) return;
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  finish_rows(p, tok, lane, ws32(p, p.ws_dq), p.hq, p.q, p.q_ts, p.q_hs, l2, p.dq, p.dq_type);
  finish_rows(p, tok, lane, ws32(p, p.ws_dk), p.hk, p.k, p.k_ts, p.k_hs, l2, p.dk, p.dk_type);
  if (p.hv != p.ho) finish_rows(p, tok, lane, ws32(p, p.ws_dv), p.hv, p.v, p.v_ts, p.v_hs, false, p.dv, p.dv_type);
}

// gdn_bwd_gate_params (safe_gate only): one CTA per output head h, d_a_log[h] =
// sum over tokens of the staged dg . g and d_dt_bias[h] = sum of the staged dx,
// each thread summing tokens tid, tid + 256, ... in order, then the warps' sums in
// order (deterministic).
extern "C" __global__ void __launch_bounds__(kThreads) gdn_bwd_gate_params(const GdnBwdParams p) {
  __shared__ float red[2][kThreads / 32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const i64 h = blockIdx.x;
  const float* ga = ws32(p, p.ws_ga) + h * p.t;
  const float* gd = ws32(p, p.ws_gd) + h * p.t;
  float sa = 0.f, sd = 0.f;
  for (i64 t = tid; t < p.t; t += kThreads) sa += ga[t], sd += gd[t];
  sa = warp_sum(sa);
  sd = warp_sum(sd);
  if (lane == 0) red[0][warp] = sa, red[1][warp] = sd;
  __syncthreads();
  if (tid == 0) {
    float a = 0.f, d = 0.f;
    for (int w = 0; w < kThreads / 32; ++w) a += red[0][w], d += red[1][w];
    if (p.flags & kBwdFlagWriteDALog) store_any(p.d_a_log, h, p.dalog_type, a);
    if (p.flags & kBwdFlagWriteDDt) store_any(p.d_dt_bias, h, p.ddt_type, d);
  }
}
