// linear_attention/kernels/gdn_bwd_onepass_roles.cuh — GDN_BWD_ONEPASS_ROLES=1 (a trial, d = 128, with
// GDN_BWD_ONEPASS_RED=1): gdn_bwd_onepass by roles. The same kernel name, arguments (GdnBwdParams, OnePassMaps),
// grid (1, HO, N), 512 threads, shared-memory budget and outputs as kernels/gdn_bwd_onepass.cuh's column-quarter
// form (whole sequences only: not that form's chain split, span_chunks > 0, which it ignores), and the same X-form
// algebra (that file's header), with every product full width on one warpgroup:
//   warpgroups 0 and 1, the chain: dS^T's value rows 64 b .. 64 b + 63 (b = the warpgroup) in fp32 registers
//     (m64n128, 64 a thread); the update dS^T <- e^gamma_C dS^T + (scale e^gamma dO)^T Q + dY^T K on its half, dO's
//     scaling (its 64-column panel), <S_c^T, dS^T>; thread 0 requests each chunk's tiles by TMA, warp 0 runs the
//     chunk's per-token epilogue (dG, dBeta) after it;
//   warpgroup 2, aux (dS-free): Y = K S_c (X = V - e^gamma Y, Y kept in bf16 over v), P = Q K^T . Gamma,
//     Vn = (T diag beta) X, dQe = dO S_c^T (dq), dP = dO Vn^T (M1 over T diag beta, E's dP . P sums), dq += M1 K;
//   warpgroup 3, grad: dVn = scale P^T dO + e^(gamma_C - gamma) K dS, dVb = T^T dVn (dv, dY over dVn), dT, T^T dT,
//     dL and K K^T (M2, F), dKd = Vn dS^T (dk), dk += dY S_c^T + M2 K + M2^T K + M1^T Q.
// Every role starts a chunk together (the loads' wait, q / k normalised in place, the gates, T diag beta, dS^T's bf16
// copy; two CTA barriers, one under GDN_BWD_ONEPASS_ROLES=2) and ends it at one CTA barrier, after which the next
// chunk's tiles are requested; within the chunk the roles hand tiles over at named barriers (XP, VN, M1 aux -> grad;
// DOFREE aux + grad -> chain; DY grad -> chain; under GDN_BWD_ONEPASS_ROLES=3, where aux runs the dL chain, DT grad
// -> aux and M2 aux -> grad). A bf16 dV (HV = HO) is staged over X by grad and stored by the chain in 16-byte pieces.
// Accumulators: a role's products at most 64 + 32 registers a thread at once; setmaxnreg gives aux and grad 152, the
// chain 104 (GDN_BWD_ROLES_CHAIN_REGS). Written 2026-12-07 (eighteenth session) from
// scripts/model_gdn_bwd_pass2_roles.py's plan; its first form measured 1.41x the column-quarter form's pass 2 on an
// H100 (bench/results/2026-12-07-gdn-onepass-roles-h100.txt; docs/linear_attention.md, "Pass 2 by roles, written").
#pragma once

#if GDN_BWD_CLOCK  // OCLK with the clock read as volatile asm (clock_v below)
#undef OCLK
#define OCLK(i)                                                 \
  do {                                                          \
    if (clk_on) {                                               \
      const long long t_ = opgraph_gdn::bwd::roles::clock_v();  \
      sm.clk[16 * (tid >> 7) + (i)] += t_ - clk_t;              \
      clk_t = t_;                                               \
    }                                                           \
  } while (0)
#endif
#if !GDN_BWD_ONEPASS_RED
#error "GDN_BWD_ONEPASS_ROLES: written for GDN_BWD_ONEPASS_RED=1"
#endif

#include "linear_attention/kernels/gdn_bwd_roles_frag.cuh"

namespace opgraph_gdn {
namespace bwd {
namespace roles {

struct alignas(1024) RolesSmem {
  u16 q[TCD::kElems];    // q rows as TMA lands them, l2-normalised in place at the chunk's start
  u16 k[TCD::kElems];
  u16 v[TCD::kElems];    // the v rows, then Y = K S_c (bf16)
  u16 x[TCD::kElems];    // X = V - e^gamma Y
  u16 dob[TCD::kElems];  // dO, then scale e^gamma dO (the update's A)
  u16 vn[TCD::kElems];
  u16 dvn[TCD::kElems];  // dVn, then dY = -e^gamma beta dVb
  u16 st[TDD::kElems];   // S_c^T (pass 1's)
  u16 ds[TDD::kElems];   // dS^T (bf16 of the chain's registers)
  u16 t[TCC::kElems];    // T (pass 1's)
  u16 tv[TCC::kElems];   // T diag(beta), then M1
  u16 p[TCC::kElems];    // P
  u16 c1[TCC::kElems];   // dT, then M2
  u16 c2[TCC::kElems];   // T^T dT
  float gam[C], bet[C];
  float pga[C], rea[C];  // aux: scale e^gamma q . dQe; E's dP . P row sums
  float pgg[C], pb[C], pkd[C], reg[C];  // grad: <Y, dY> - k . Kd dKd; dbeta; k . Kd dKd; E's beta F row sums
  float pbf[C];  // F's row sums (dbeta's), from the dL chain (grad's, aux's under GDN_BWD_ONEPASS_ROLES=3)
  float eca[4][C], ecg[4][C];  // E's column sums a 16-row band (aux's dP . P, grad's beta F)
  float red[8];  // <S_c^T, dS^T>, a partial a chain warp
  unsigned long long full;
  int tma_at[6];
  alignas(128) float graw[2][C][4];
#if GDN_BWD_CLOCK
  long long clk[64];  // GDN_BWD_CLOCK: 16 phases a warpgroup (OCLK, kernels/gdn_bwd_onepass.cuh), summed over chunks
#endif
};
static_assert(sizeof(RolesSmem) + 1024 <= kGdnBwdOnePassSmemBytes, "gdn_bwd_onepass (roles): over its budget");
constexpr unsigned kRolesSmemBytes = sizeof(RolesSmem) + 1024;

// Named barriers (0 is __syncthreads): hand-overs between roles (producers arrive, consumers sync) and each
// warpgroup's own.
enum : int {
  kBarXP = 1, kBarVN = 2, kBarM1 = 3, kBarDoFree = 4, kBarDY = 5, kBarAux = 6, kBarGrad = 7, kBarCh = 8,  // 8, 9
  kBarDT = 10, kBarM2 = 11  // GDN_BWD_ONEPASS_ROLES=3: dT grad -> aux, M2 aux -> grad
};
// GDN_BWD_ONEPASS_ROLES=3: the dL chain (T^T dT, dL and K K^T: M2, F, E's beta F sums) on aux, after its dq, instead
// of on grad (grad hands dT over at DT and waits for M2 at M2 before its last products).
constexpr bool kDlAux = GDN_BWD_ONEPASS_ROLES == 3;
#ifndef GDN_BWD_ROLES_CHAIN_REGS
// setmaxnreg a thread: the chain's two warpgroups down to this, aux and grad up to 256 - it (the 65536 registers of 512
// threads: 2 x 128 + 2 x 128). 128: none.
#define GDN_BWD_ROLES_CHAIN_REGS 104
#endif
// Warp 0's per-token epilogue (rows 2 lane, 2 lane + 1): dgamma = the aux and grad row terms + E's row sums less its
// column sums; dbeta; dgamma_C = sum_r k_r . Kd dKd_r + e^gamma_C <S_c, dS>; the chunk's reverse cumsum; the stores.
__device__ __forceinline__ void gate_epilogue_w(const GdnBwdParams& p, i64 h, i64 tok0, int n, float gc,
                                                const RolesSmem& sm, int lane) {
  float dgam[2], dbet[2], kd[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = 2 * lane + i;
    float ec = 0.f;
#pragma unroll
    for (int b = 0; b < 4; ++b) ec += sm.eca[b][r] + sm.ecg[b][r];
    const bool in = r < n;
    dgam[i] = in ? sm.pga[r] + sm.pgg[r] + sm.rea[r] + sm.reg[r] - ec : 0.f;
    dbet[i] = in ? sm.pb[r] + sm.pbf[r] : 0.f;
    kd[i] = in ? sm.pkd[r] : 0.f;
  }
  const float sum_kd = warp_sum(kd[0] + kd[1]);
  const float sds = warp_sum(lane < 8 ? sm.red[lane] : 0.f);
  const float dgc = sum_kd + exp2f(gc) * sds;
  gate_scan_store(p, h, tok0, n, dgc, dgam, dbet, lane);
}

}  // namespace roles
}  // namespace bwd
}  // namespace opgraph_gdn

extern "C" __device__ unsigned gdn_bwd_onepass_smem_bytes = opgraph_gdn::bwd::roles::kRolesSmemBytes;
extern "C" __device__ unsigned gdn_bwd_onepass_red = 1;
extern "C" __device__ unsigned gdn_bwd_onepass_tma = 1;
extern "C" __device__ unsigned gdn_bwd_onepass_roles = 1;
extern "C" __global__ void __launch_bounds__(kGdnBwdGradsThreads, 1)
    gdn_bwd_onepass(const GdnBwdParams p, const __grid_constant__ OnePassMaps tm) {
  using namespace opgraph_gdn::bwd::roles;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  RolesSmem& sm = *reinterpret_cast<RolesSmem*>(
      smem_raw + ((1024u - (static_cast<u32>(__cvta_generic_to_shared(smem_raw)) & 1023u)) & 1023u));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const int wg = __shfl_sync(0xffffffffu, warp >> 2, 0), band = warp & 3;
  const i64 h = blockIdx.y, seq = blockIdx.z;
#if GDN_BWD_CLOCK
  // GDN_BWD_CLOCK (a measuring aid): head 0 of the middle sequence, each warpgroup's first thread; phases per role
  // [0 the loads' wait (from the chunk end before), 1 start_a, 2 start_b / c; aux: 3 Y + Q K^T, 4 P, X, Y stores,
  // 5 Vn, 6 dQe, 7 dP + M1, 8 dq += M1 K, 9 dq's reductions; grad: 3 K dS, 4 XP's wait, 5 P^T dO + dVn, 6 dVb + dT,
  // 7 dv, dY, 8 T^T dT, 9 dL + K K^T + M2, 10 VN's wait + dKd, 11 dk's four products (M1's wait), 12 dk's reductions;
  // chain: 3 DOFREE's wait, 4 dO's scaling, 5 dOs^T Q + DY's wait, 6 dY^T K; every role: 14 the chunk-end barrier,
  // 15 the requests and warp 0's epilogue], a chunk's mean.
  const bool clk_on = (tid & 127) == 0 && blockIdx.y == 0 && blockIdx.z == gridDim.z / 2;
  long long clk_t = clock_v();
  if (clk_on)
    for (int i = 0; i < 16; ++i) sm.clk[16 * (tid >> 7) + i] = 0;
#endif
  if (seq >= p.n_seq) return;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 first = bos / C + seq;
  const int nch = static_cast<int>((len + C - 1) / C);
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const float scale = static_cast<float>(p.scale);
  const FragW fr(band, lane);
  const int ra = 16 * band + g8, rb_ = ra + 8;
  constexpr int RPW = C / kGW;
  constexpr int kPanel = C * 64;
  const int hb = wg & 1;  // the chain's half: value rows 64 hb ..

  const i64 sbase = (seq * p.ho + h) * D * D;

  using opgraph_gemm::smem_u32;
  using opgraph_gemm::tma_load;
  volatile int* const at = sm.tma_at;
  if (tid == 0) {
    at[0] = static_cast<int>(bos), at[1] = static_cast<int>(hq), at[2] = static_cast<int>(hk);
    at[3] = static_cast<int>(hv), at[4] = static_cast<int>(h), at[5] = static_cast<int>(first * p.ho + h);
  }
  const bool gtma = (p.flags & kBwdFlagGatesTma) != 0;
  // a bf16 dV (HV = HO) staged over X by grad (its last reader Vn done: VN) and stored by the chain in 16-byte pieces
  const bool dv_stage = p.hv == p.ho && p.dv_type == kTypeBf16;
  const u32 kChunkBytes = (4 * C * D + D * D + C * C) * 2 + (gtma ? 2 * C * 4 * 4 : 0);
  const u32 full = smem_u32(&sm.full);
  // GDN_BWD_ONEPASS_ROLES=2: warp 0 forms the gates of every row (two a lane) and their cumsum in start_a, aux forms T
  // diag(beta) itself, and the chunk's start has one CTA barrier (two under 1).
  constexpr bool kOneBar = GDN_BWD_ONEPASS_ROLES == 2;
  float gx = 0.f, bx = 0.f, gx1 = 0.f, bx1 = 0.f;  // the raw gates: row tid (1), rows 2 lane, 2 lane + 1 (2)
  auto gates_raw = [&](int cc, int nr) {
    if constexpr (kOneBar) {
      if (warp == 0) {
        const i64 off = (bos + static_cast<i64>(cc) * C + 2 * lane) * p.ho + h;
        if (2 * lane < nr) gx = load_any(p.g, off, p.g_type), bx = load_any(p.beta, off, p.beta_type);
        if (2 * lane + 1 < nr)
          gx1 = load_any(p.g, off + p.ho, p.g_type), bx1 = load_any(p.beta, off + p.ho, p.beta_type);
      }
    } else if (tid < nr) {
      const i64 off = (bos + static_cast<i64>(cc) * C + tid) * p.ho + h;
      gx = load_any(p.g, off, p.g_type);
      bx = load_any(p.beta, off, p.beta_type);
    }
  };
  // Chunk cc's tiles by TMA (thread 0): q, k raw into their tiles, v, dO, S^T, T, the fp32 gates where gtma.
  auto request = [&](int cc) {
    const int r = at[0] + cc * C;
    opgraph_gemm::bar_expect_tx(full, kChunkBytes);
    auto two = [&](u16* dst, const opgraph_gemm::TmaMap* m, int which) {
      tma_load(smem_u32(dst), m, 0, at[which], r, 0, full);
      tma_load(smem_u32(dst + C * 64), m, 64, at[which], r, 0, full);
    };
    two(sm.q, &tm.q, 1);
    two(sm.k, &tm.k, 2);
    two(sm.v, &tm.v, 3);
    two(sm.dob, &tm.d_o, 4);
    const int sh = at[5] + cc * static_cast<int>(p.ho);
    tma_load(smem_u32(sm.st), &tm.st, 0, sh * D, 0, 0, full);
    tma_load(smem_u32(sm.st + D * 64), &tm.st, 64, sh * D, 0, 0, full);
    tma_load(smem_u32(sm.t), &tm.t, 0, 0, sh, 0, full);  // T: (64, 64, sh) (gdn_bwd_onepass.cuh's map)
    if (gtma) {
      const int h4 = at[4] & ~3;
      tma_load(smem_u32(&sm.graw[0][0][0]), &tm.g, h4, r, 0, 0, full);
      tma_load(smem_u32(&sm.graw[1][0][0]), &tm.beta, h4, r, 0, 0, full);
    }
  };
  if (tid == 0) {
    opgraph_gemm::bar_init(full, 1);
    opgraph_gemm::bar_init_fence();
  }
  __syncthreads();
  if (nch > 0) {
    if (tid == 0) request(nch - 1);
    if (!gtma) gates_raw(nch - 1, static_cast<int>(len - static_cast<i64>(nch - 1) * C));
  }
  // Every role's chunk start (the same code in each role's loop; named barrier 0 over all 512 threads): the loads'
  // wait, rows n .. C - 1 of v and dO zero, q and k normalised in place, the gates (start_a); then the gates' cumsum
  // and T diag(beta) (start_b). The chain stores dS^T's bf16 copy between them and sums <S_c^T, dS^T> in start_b's.
  auto start_a = [&](int n, bool odd) {
    opgraph_gemm::bar_wait(full, odd ? 1u : 0u);
    OCLK(0);
    if (n < C)
      for (int i = tid; i < (C - n) * (D / 8); i += kGT) {
        const int r = n + i / (D / 8), cc = (i % (D / 8)) * 8;
        *reinterpret_cast<uint4*>(&sm.v[TCD::at(r, cc)]) = make_uint4(0u, 0u, 0u, 0u);
        *reinterpret_cast<uint4*>(&sm.dob[TCD::at(r, cc)]) = make_uint4(0u, 0u, 0u, 0u);
      }
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int r = warp + kGW * i;
      float xq[EL], xk[EL];
      unpack_row(load_row_raw(sm.q + TCD::at(r, lane * EL)), xq);
      unpack_row(load_row_raw(sm.k + TCD::at(r, lane * EL)), xk);
      if (r >= n)
#pragma unroll
        for (int e = 0; e < EL; ++e) xq[e] = xk[e] = 0.f;
      if (l2) l2norm_rows(xq, xk);
      st_row(&sm.q[TCD::at(r, lane * EL)], xq);
      st_row(&sm.k[TCD::at(r, lane * EL)], xk);
    }
    if constexpr (kOneBar) {
      if (warp == 0) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int r = 2 * lane + i;
          float gl = 0.f, b = 0.f;
          float xg = i ? gx1 : gx, xb = i ? bx1 : bx;
          if (gtma) xg = sm.graw[0][r][h & 3], xb = sm.graw[1][r][h & 3];
          if (r < n) gate_beta_from(p, h, xg, xb, gl, b);
          sm.gam[r] = gl;
          sm.bet[r] = b;
        }
        chunk_gate_cumsum(sm.gam, lane);
      }
    } else if (tid < C) {
      float gl = 0.f, b = 0.f;
      if (gtma) gx = sm.graw[0][tid][h & 3], bx = sm.graw[1][tid][h & 3];
      if (tid < n) gate_beta_from(p, h, gx, bx, gl, b);
      sm.gam[tid] = gl;
      sm.bet[tid] = b;
    }
  };
  auto start_b = [&]() {
    OCLK(1);
    if constexpr (kOneBar) return;
    tiles_fence();
    nb_sync(0, kGT);
    if (warp == 0) chunk_gate_cumsum(sm.gam, lane);
    for (int i = tid; i < C * C / 2; i += kGT) {
      const int r = i / (C / 2), s = 2 * (i % (C / 2));
      const u32 w = lds32(&sm.t[TCC::at(r, s)]);
      st_bf2(&sm.tv[TCC::at(r, s)], blo(w) * sm.bet[s], bhi(w) * sm.bet[s + 1]);
    }
  };
  auto start_c = [&]() {
    tiles_fence();
    nb_sync(0, kGT);
    OCLK(2);
  };
  // The chunk's row factors of this thread's rows ra, rb.
  struct RowF {
    float gc, ega, egb, eda, edb, ba, bb;
  };
  auto row_f = [&]() {
    RowF f;
    f.gc = sm.gam[C - 1];
    f.ega = exp2f(sm.gam[ra]), f.egb = exp2f(sm.gam[rb_]);
    f.eda = exp2f(f.gc - sm.gam[ra]), f.edb = exp2f(f.gc - sm.gam[rb_]);
    f.ba = sm.bet[ra], f.bb = sm.bet[rb_];
    return f;
  };
  // Every role's chunk end: the tiles free, the next chunk's requested (thread 0); warp 0's per-token epilogue.
  auto end_chunk = [&](int c, int n, float gc) {
    nb_sync(0, kGT);
    OCLK(14);
    if (c > 0) {
      if (tid == 0) request(c - 1);
      if (!gtma) gates_raw(c - 1, C);
    }
    if (warp == 0) gate_epilogue_w(p, h, bos + static_cast<i64>(c) * C, n, gc, sm, lane);
    OCLK(15);
  };
  auto rows_in = [&](int c) {
    const i64 left = len - static_cast<i64>(c) * C;
    return static_cast<int>(left < C ? left : C);
  };

  // The dL chain (grad's, or aux's under GDN_BWD_ONEPASS_ROLES=3; dT in c1, b0 / b1 this thread's rows' betas):
  // T^T dT into c2; dL = -(T^T dT) T^T (strict): M2 = dL beta_r Gamma into c1, F = dL (K K^T) Gamma (its row sums to
  // pbf), E = beta_r F (its sums to reg, ecg). Ends with M2 fenced and the role's warpgroup barrier passed.
  auto dl_chain = [&](float b0, float b1) {
    const int wbar = wg == 2 ? kBarAux : kBarGrad;
    {  // T^T dT into c2
      float a[8][4];
      zero(a);
      prod<8, C, true, true, TCC, TCC>(a, sm.t, 0, sm.c1, 0, lane);
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) st_bf2(&sm.c2[fr.cc(hh, j)], a[j][2 * hh], a[j][2 * hh + 1]);
    }
    tiles_fence();
    nb_sync(wbar, 128);
    {  // dL = -(T^T dT) T^T (strict): M2 = dL beta_r Gamma into c1; F = dL (K K^T) Gamma; E = beta_r F
      float dl[8][4], kk[8][4];
      zero(dl);
      zero(kk);
      prod<8, C, false, false, TCC, TCC, false>(dl, sm.c2, 0, sm.t, 0, lane);
      prod<8, D, false, false, TCD, TCD, false>(kk, sm.k, 0, sm.k, 0, lane);
      prod_join(dl, kk);
      float fr0 = 0.f, fr1 = 0.f;
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = ra + 8 * hh, s0 = 8 * j + 2 * t4;
          const float br = hh ? b1 : b0;
          float m2[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int s = s0 + e;
            const float gr = s < r ? exp2f(sm.gam[r] - sm.gam[s]) : 0.f;
            const float d = -dl[j][2 * hh + e];
            const float f = d * kk[j][2 * hh + e] * gr;
            (hh ? fr1 : fr0) += f;
            dl[j][2 * hh + e] = br * f;  // E's beta F
            m2[e] = d * br * gr;
          }
          st_bf2(&sm.c1[fr.cc(hh, j)], m2[0], m2[1]);
        }
#pragma unroll
      for (int o = 1; o <= 2; o <<= 1) {
        fr0 += __shfl_xor_sync(0xffffffffu, fr0, o);
        fr1 += __shfl_xor_sync(0xffffffffu, fr1, o);
      }
      if (t4 == 0) sm.pbf[ra] = fr0, sm.pbf[rb_] = fr1;
      float row[2];
      sums_w(dl, row, sm.ecg[band], lane);
      if (t4 == 0) sm.reg[ra] = row[0], sm.reg[rb_] = row[1];
    }
    tiles_fence();
    nb_sync(wbar, 128);
  };

  bool odd = false;
  constexpr int kChainRegs = GDN_BWD_ROLES_CHAIN_REGS, kWorkRegs = 256 - kChainRegs;
  if (wg == 2) {
    // ================= aux =================
    if constexpr (kChainRegs != 128) setmaxnreg_inc<kWorkRegs>();
#pragma unroll 1
    for (int c = nch - 1; c >= 0; --c) {
      const int n = rows_in(c);
      const i64 c0 = static_cast<i64>(c) * C;
      start_a(n, odd);
      start_b();
      start_c();
      const RowF rf_ = row_f();
      const float gc = rf_.gc, ega = rf_.ega, egb = rf_.egb, ba = rf_.ba, bb = rf_.bb;
      if constexpr (kOneBar)  // T diag(beta) (read by Vn only, after the AUX barrier below)
        for (int i = tid & 127; i < C * C / 2; i += 128) {
          const int r = i / (C / 2), s = 2 * (i % (C / 2));
          const u32 w = lds32(&sm.t[TCC::at(r, s)]);
          st_bf2(&sm.tv[TCC::at(r, s)], blo(w) * sm.bet[s], bhi(w) * sm.bet[s + 1]);
        }
      {
        float y[16][4], qk[8][4];
        zero(y);
        zero(qk);
        prod<16, D, false, false, TCD, TDD, false>(y, sm.k, 0, sm.st, 0, lane);
        prod<8, D, false, false, TCD, TCD, false>(qk, sm.q, 0, sm.k, 0, lane);
        prod_join(y, qk);
        OCLK(3);
        // P = tril_incl(Q K^T . Gamma) first (its accumulators die)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int r = ra + 8 * hh, s0 = 8 * j + 2 * t4;
            float pv[2];
#pragma unroll
            for (int e = 0; e < 2; ++e)
              pv[e] = s0 + e <= r ? qk[j][2 * hh + e] * exp2f(sm.gam[r] - sm.gam[s0 + e]) : 0.f;
            st_bf2(&sm.p[fr.cc(hh, j)], pv[0], pv[1]);
          }
        // X = V - e^gamma Y into x; Y (bf16) over v
#pragma unroll
        for (int j = 0; j < 16; ++j)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const float e = hh ? egb : ega;
            const int o = fr.cd(hh, j);
            const u32 w = lds32(&sm.v[o]);
            st_bf2(&sm.x[o], blo(w) - e * y[j][2 * hh], bhi(w) - e * y[j][2 * hh + 1]);
            st_bf2(&sm.v[o], y[j][2 * hh], y[j][2 * hh + 1]);
          }
      }
      tiles_fence();
      nb_arrive(kBarXP, 256);
      nb_sync(kBarAux, 128);
      OCLK(4);
      {  // Vn = (T diag beta) X
        float a[16][4];
        zero(a);
        prod<16, C, false, true, TCC, TCD>(a, sm.tv, 0, sm.x, 0, lane);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
          st_bf2(&sm.vn[fr.cd(0, j)], a[j][0], a[j][1]);
          st_bf2(&sm.vn[fr.cd(1, j)], a[j][2], a[j][3]);
        }
      }
      tiles_fence();
      nb_arrive(kBarVN, 256);
      nb_sync(kBarAux, 128);
      OCLK(5);
      // dQe = dO S_c^T: dq = scale e^gamma dQe, q . dQe
      float dq[16][4];
      zero(dq);
      prod<16, D, false, true, TCD, TDD>(dq, sm.dob, 0, sm.st, 0, lane);
      {
        float r0, r1;
        row_dot_w(dq, sm.q, fr, r0, r1);
        if (t4 == 0) sm.pga[ra] = scale * ega * r0, sm.pga[rb_] = scale * egb * r1;
#pragma unroll
        for (int j = 0; j < 16; ++j) {
          dq[j][0] *= scale * ega, dq[j][1] *= scale * ega;
          dq[j][2] *= scale * egb, dq[j][3] *= scale * egb;
        }
      }
      OCLK(6);
      {  // dP = dO Vn^T: M1 = scale dP . Gamma (s <= r) over T diag beta; E += scale dP . P
        float dp[8][4];
        zero(dp);
        prod<8, D, false, false, TCD, TCD>(dp, sm.dob, 0, sm.vn, 0, lane);
        nb_arrive(kBarDoFree, 512);  // aux's reads of dO done
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int r = ra + 8 * hh, s0 = 8 * j + 2 * t4;
            const u32 pw = lds32(&sm.p[fr.cc(hh, j)]);
            float m1[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const float gr = s0 + e <= r ? exp2f(sm.gam[r] - sm.gam[s0 + e]) : 0.f;
              m1[e] = scale * dp[j][2 * hh + e] * gr;
            }
            dp[j][2 * hh] *= scale * blo(pw);
            dp[j][2 * hh + 1] *= scale * bhi(pw);
            st_bf2(&sm.tv[fr.cc(hh, j)], m1[0], m1[1]);
          }
        float row[2];
        sums_w(dp, row, sm.eca[band], lane);
        if (t4 == 0) sm.rea[ra] = row[0], sm.rea[rb_] = row[1];
      }
      tiles_fence();
      nb_arrive(kBarM1, 256);
      nb_sync(kBarAux, 128);
      OCLK(7);
      prod<16, C, false, true, TCC, TCD>(dq, sm.tv, 0, sm.k, 0, lane);  // dq += M1 K
      OCLK(8);
      red_rows(ws32(p, p.ws_dq), dq, bos + c0, p.hq, hq, ra, n, lane);
      OCLK(9);
      if constexpr (kDlAux) {
        nb_sync(kBarDT, 256);
        OCLK(10);
        dl_chain(ba, bb);
        nb_arrive(kBarM2, 256);
        OCLK(11);
      }
      end_chunk(c, n, gc);
      odd = !odd;
    }
  } else if (wg == 3) {
    // ================= grad =================
    if constexpr (kChainRegs != 128) setmaxnreg_inc<kWorkRegs>();
#pragma unroll 1
    for (int c = nch - 1; c >= 0; --c) {
      const int n = rows_in(c);
      const i64 c0 = static_cast<i64>(c) * C;
      start_a(n, odd);
      start_b();
      start_c();
      const RowF rf_ = row_f();
      const float gc = rf_.gc, ega = rf_.ega, egb = rf_.egb, eda = rf_.eda, edb = rf_.edb, ba = rf_.ba, bb = rf_.bb;
      float pbr[2] = {0.f, 0.f}, pgr[2] = {0.f, 0.f};
      {  // dVn = scale (P^T dO + e^(gamma_C - gamma) / scale K dS)
        float a[16][4];
        zero(a);
        prod<16, D, false, false, TCD, TDD>(a, sm.k, 0, sm.ds, 0, lane);
        OCLK(3);
        const float fa = eda / scale, fb = edb / scale;
#pragma unroll
        for (int j = 0; j < 16; ++j) a[j][0] *= fa, a[j][1] *= fa, a[j][2] *= fb, a[j][3] *= fb;
        nb_sync(kBarXP, 256);
        OCLK(4);
        prod<16, C, true, true, TCC, TCD>(a, sm.p, 0, sm.dob, 0, lane);
        nb_arrive(kBarDoFree, 512);  // grad's reads of dO done
#pragma unroll
        for (int j = 0; j < 16; ++j) {
          st_bf2(&sm.dvn[fr.cd(0, j)], scale * a[j][0], scale * a[j][1]);
          st_bf2(&sm.dvn[fr.cd(1, j)], scale * a[j][2], scale * a[j][3]);
        }
      }
      tiles_fence();
      nb_sync(kBarGrad, 128);
      OCLK(5);
      {  // dVb = T^T dVn (dv, dbeta's <X, dVb>, dY over dVn, <Y, dY>); dT = dVn X^T (beta a column) into c1
        float a[16][4], dt[8][4];
        zero(a);
        zero(dt);
        prod<16, C, true, true, TCC, TCD, false>(a, sm.t, 0, sm.dvn, 0, lane);
        prod<8, D, false, false, TCD, TCD, false>(dt, sm.dvn, 0, sm.x, 0, lane);
        prod_join(a, dt);
        OCLK(6);
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int s = 8 * j + 2 * t4;
            st_bf2(&sm.c1[fr.cc(hh, j)], sm.bet[s] * dt[j][2 * hh], sm.bet[s + 1] * dt[j][2 * hh + 1]);
          }
        float r0, r1;
        row_dot_w(a, sm.x, fr, r0, r1);
        pbr[0] += r0, pbr[1] += r1;
        nb_sync(kBarGrad, 128);  // every grad warp's reads of dVn done: dY goes over it
        const bool direct = p.hv == p.ho;
        float* sv_ = ws32(p, p.ws_dv);
        if (dv_stage) nb_sync(kBarVN, 256);
        float y0 = 0.f, y1 = 0.f;
#pragma unroll
        for (int j = 0; j < 16; ++j) {
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int r = hh ? rb_ : ra;
            const float br = hh ? bb : ba, e = hh ? egb : ega;
            const int o = fr.cd(hh, j);
            const float d0 = -e * br * a[j][2 * hh], d1 = -e * br * a[j][2 * hh + 1];
            const u32 yw = lds32(&sm.v[o]);
            (hh ? y1 : y0) += blo(yw) * d0 + bhi(yw) * d1;
            st_bf2(&sm.dvn[o], d0, d1);
            if (dv_stage) st_bf2(&sm.x[o], br * a[j][2 * hh], br * a[j][2 * hh + 1]);
            else if (r < n) {
              const i64 ad = ((bos + c0 + r) * p.ho + h) * D + 8 * j + 2 * t4;
              if (direct) store_any2(p.dv, ad, p.dv_type, br * a[j][2 * hh], br * a[j][2 * hh + 1]);
              else store_f2(sv_ + ad, br * a[j][2 * hh], br * a[j][2 * hh + 1]);
            }
          }
        }
#pragma unroll
        for (int o = 1; o <= 2; o <<= 1) {
          y0 += __shfl_xor_sync(0xffffffffu, y0, o);
          y1 += __shfl_xor_sync(0xffffffffu, y1, o);
        }
        pgr[0] += y0, pgr[1] += y1;
      }
      tiles_fence();
      nb_arrive(kBarDY, 384);
      if constexpr (kDlAux) nb_arrive(kBarDT, 256);
      nb_sync(kBarGrad, 128);
      OCLK(7);
      if constexpr (!kDlAux) dl_chain(ba, bb);
      OCLK(9);
      // dKd = Vn dS^T: dk = e^(gamma_C - gamma) dKd, k . dKd; then dk += dY S_c^T + M2 K + M2^T K + M1^T Q
      float dk[16][4];
      zero(dk);
      if (!dv_stage) nb_sync(kBarVN, 256);  // else synced for dV's staging
      prod<16, D, false, true, TCD, TDD>(dk, sm.vn, 0, sm.ds, 0, lane);
      OCLK(10);
      {
        float r0, r1;
        row_dot_w(dk, sm.k, fr, r0, r1);
        if (t4 == 0) sm.pkd[ra] = eda * r0, sm.pkd[rb_] = edb * r1;
        pgr[0] -= eda * r0, pgr[1] -= edb * r1;
#pragma unroll
        for (int j = 0; j < 16; ++j) dk[j][0] *= eda, dk[j][1] *= eda, dk[j][2] *= edb, dk[j][3] *= edb;
      }
      if (t4 == 0) {
        sm.pb[ra] = pbr[0], sm.pb[rb_] = pbr[1];
        sm.pgg[ra] = pgr[0], sm.pgg[rb_] = pgr[1];
      }
      prod<16, D, false, true, TCD, TDD, false>(dk, sm.dvn, 0, sm.st, 0, lane);
      if constexpr (kDlAux) nb_sync(kBarM2, 256);
      prod<16, C, false, true, TCC, TCD, false>(dk, sm.c1, 0, sm.k, 0, lane);
      prod<16, C, true, true, TCC, TCD, false>(dk, sm.c1, 0, sm.k, 0, lane);
      nb_sync(kBarM1, 256);
      prod<16, C, true, true, TCC, TCD, false>(dk, sm.tv, 0, sm.q, 0, lane);
      prod_join(dk, dk);
      OCLK(11);
      red_rows(ws32(p, p.ws_dk), dk, bos + c0, p.hk, hk, ra, n, lane);
      OCLK(12);
      end_chunk(c, n, gc);
      odd = !odd;
    }
  } else {
    // ================= chain (warpgroups 0, 1) =================
    if constexpr (kChainRegs != 128) setmaxnreg_dec<kChainRegs>();
    // The chain's dS^T half: ds[j][e], value row 64 hb + ra (+ 8 for e >= 2), key column 8 j + 2 t4 (+ 1).
    float ds[16][4];
    {
#pragma unroll
      for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          float x0 = 0.f, x1 = 0.f;
          if (p.flags & kBwdFlagHasDFinal)
            load_any2(p.d_final_state, sbase + static_cast<i64>(64 * hb + ra + 8 * hh) * D + 8 * j + 2 * t4,
                      p.dfin_type, x0, x1);
          ds[j][2 * hh] = x0;
          ds[j][2 * hh + 1] = x1;
        }
    }

#pragma unroll 1
    for (int c = nch - 1; c >= 0; --c) {
      const int n = rows_in(c);
      const i64 c0 = static_cast<i64>(c) * C;
      start_a(n, odd);
      // dS^T's bf16 copy, then <S_c^T, dS^T>
#pragma unroll
      for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) st_bf2(&sm.ds[fr.dd(hb, hh, j)], ds[j][2 * hh], ds[j][2 * hh + 1]);
      start_b();
      {
        float acc = 0.f;
#pragma unroll
        for (int j = 0; j < 16; ++j)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const u32 w = lds32(&sm.st[fr.dd(hb, hh, j)]);
            acc += ds[j][2 * hh] * blo(w) + ds[j][2 * hh + 1] * bhi(w);
          }
        acc = warp_sum(acc);
        if (lane == 0) sm.red[warp] = acc;
      }
      start_c();
      const float gc = sm.gam[C - 1];
      const float egc = exp2f(gc);
#pragma unroll
      for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) ds[j][e] *= egc;
      nb_sync(kBarDoFree, 512);
      OCLK(3);
      // dO's panel hb (value columns 64 hb ..) times scale e^gamma, in place
      u16* const dop = sm.dob + hb * kPanel;
      for (int i = tid & 127; i < C * 32; i += 128) {
        const int r = i / 32, cc = 2 * (i % 32);
        const float f = scale * exp2f(sm.gam[r]);
        const int o = TCD::at(r, cc);
        const u32 w = lds32(&dop[o]);
        st_bf2(&dop[o], f * blo(w), f * bhi(w));
      }
      tiles_fence();
      nb_sync(kBarCh + hb, 128);
      OCLK(4);
      prod<16, C, true, true, TCD, TCD, false>(ds, dop, 0, sm.q, 0, lane);
      nb_sync(kBarDY, 384);
      OCLK(5);
      prod<16, C, true, true, TCD, TCD, false>(ds, sm.dvn + hb * kPanel, 0, sm.k, 0, lane);
      if (dv_stage) {  // dV's rows (staged over X by grad), panel hb, 16-byte pieces
        const int tl = tid & 127;
#pragma unroll
        for (int it = 0; it < 4; ++it) {
          const int i = tl + 128 * it, r = i >> 3, cc = 64 * hb + 8 * (i & 7);
          if (r < n)
            *reinterpret_cast<uint4*>(reinterpret_cast<u16*>(p.dv) + ((bos + c0 + r) * p.ho + h) * D + cc) =
                *reinterpret_cast<const uint4*>(&sm.x[TCD::at(r, cc)]);
        }
      }
      prod_join(ds, ds);
      OCLK(6);
      end_chunk(c, n, gc);
      odd = !odd;
    }
    // ---- d_initial_state: dS^T at the sequence's start ----
    if (p.flags & kBwdFlagWriteDInit) {
#pragma unroll
      for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
          store_any2(p.d_initial_state, sbase + static_cast<i64>(64 * hb + ra + 8 * hh) * D + 8 * j + 2 * t4,
                     p.dinit_type, ds[j][2 * hh], ds[j][2 * hh + 1]);
    }
  }
#if GDN_BWD_CLOCK
  if (clk_on)
    for (int i = 0; i < 16; ++i)
      gdn_bwd_onepass_clock[16 * (tid >> 7) + i] = sm.clk[16 * (tid >> 7) + i] / (nch > 0 ? nch : 1);
#endif
}
