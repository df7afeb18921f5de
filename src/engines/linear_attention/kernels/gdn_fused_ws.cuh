// linear_attention/kernels/gdn_fused_ws.cuh — the fused gdn prefill, warp-specialised: a variant
// under trial (gdn_fused.cu builds gdn_prefill_fused from it under GDN_FUSED_WS=1; off in the
// engine; bench/gdn_fused_ab.sh runs it against the engine's build). Included by gdn_fused.cu
// after its helpers (descriptors, swizzle, shared-memory access, the wgmma forms).
//
// One CTA of three warpgroups per (output head, sequence), as gdn_prefill_fused:
//   warpgroups 0, 1  the state side: warpgroup w keeps S^T's value rows [64 w, 64 w + 64) in its
//                    accumulators and per chunk runs only the products that need the state
//                    (U^T + S^T Wn^T, S^T Q^T; P and the state update), then stores O.
//   warpgroup 2      the auxiliary side, a chunk ahead: it loads the rows (cp.async), forms the
//                    norms, the gate cumsum, L and P (wgmma), T = (I + L)^-1 (the diagonal blocks
//                    by columns, one-pass TF32 merges), T_k and T_v, Wn = -T_k K, and the token
//                    factors, all into the chunk's stage.
// Two stages, each holding what one chunk hands from the auxiliary side to the state side: the
// raw q, k, v tiles, Wn, T_v, P and the factors (e^gamma iq scale, ik e^(gamma_C - gamma), e^gamma_C).
// Named barriers hand stages over: FULL(s) (auxiliary arrives, the state side syncs) and
// EMPTY(s) (the state side arrives once done with the stage's chunk, the auxiliary side syncs
// before it loads the chunk after next into it). The auxiliary side loads chunk c + 1's rows in
// the middle of chunk c's work (after the inverse), so they land before it needs them.
// Registers: launched at 168 a thread (65536 / 384), setmaxnreg moves the auxiliary warpgroup to
// 120 and the state warpgroups to 192 (the CTA's pool balances: 2 x 128 x 24 = 128 x 48; no spills). The
// arithmetic is gdn_prefill_fused's, step for step (the diagonal blocks as under
// GDN_FUSED_INV_COL); only who computes what, and when, differ.
namespace opgraph_gdn {
namespace ws {

constexpr int kWsThreads = 384;
// A stage (bytes from its base; stage s at s * kStageBytes).
constexpr u32 kSQ = 0, kSK = 16384, kSV = 32768;  // raw q, k, v [64][128]
constexpr u32 kSWn = 49152;                       // Wn [64][128]
constexpr u32 kSTv = 65536;                       // T_v [64][64]
constexpr u32 kSP = 73728;                        // P [64][64]
constexpr u32 kSEg = 81920;                       // scale iq e^gamma a token (O^T's column scale)
constexpr u32 kSKf = kSEg + 4 * C;                // ik e^(gamma_C - gamma) a token
constexpr u32 kSGc = kSKf + 4 * C;                // e^gamma_C (one float)
constexpr u32 kStageBytes = 82944;                // 81 KiB: the tiles stay 1024-aligned
static_assert(kSGc + 4 <= kStageBytes, "stage overflow");
// The auxiliary side's scratch, after the two stages.
constexpr u32 kAT = 2 * kStageBytes;       // T_k [64][64]
constexpr u32 kALf = kAT + 8192;           // L fp32 [64][LDF]
constexpr u32 kATf = kALf + 4 * C * LDF;   // T fp32 [64][LDF]
constexpr u32 kAGam = kATf + 4 * C * LDF;  // gamma (log2 units)
constexpr u32 kABet = kAGam + 4 * C;       // beta
constexpr u32 kABe = kABet + 4 * C;        // beta e^gamma ik (T_k's column scale)
constexpr u32 kAIq = kABe + 4 * C;
constexpr u32 kAIk = kAIq + 4 * C;
constexpr u32 kWsBytes = kAIk + 4 * C;  // + 1024 to align the base: gdn_prefill_fused_smem_bytes

// Named barriers (0: __syncthreads; 1, 2: wg_sync of warpgroups 0, 1).
constexpr int kBarAux = 3, kBarFull = 4, kBarEmpty = 6;  // FULL(s) = 4 + s, EMPTY(s) = 6 + s
__device__ __forceinline__ void nb_sync(int id, int n) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void nb_arrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void aux_sync() { nb_sync(kBarAux, 128); }
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

// T = (I + L)^-1 by the auxiliary warpgroup's 128 threads (a: 0..127): the diagonal blocks by
// columns, then triangular_inverse_tc's two merge levels in one TF32 pass (level 2's eight tiles
// two a warp). Begins after L is readable; ends with T readable by the warpgroup.
__device__ __forceinline__ void inverse_aux(const float* lf, float* tf, int a) {
  if (a < 64) inverse_diagonal_blocks_col(lf, tf, a);
  aux_sync();
  const int lane = a & 31, warp = a >> 5;
  const int p = (warp >> 1) & 1, nt = warp & 1, o = 32 * p;
  {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<1>(c, lf + (o + 16) * LDF + o, tf + o * LDF + o + 8 * nt, 0, 16, lane);
    store_tile(tf + o * LDF + o + 16 + 8 * nt, c, lane);
  }
  aux_sync();
  {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<1>(c, tf + (o + 16) * LDF + o + 16, tf + o * LDF + o + 16 + 8 * nt, 0, 16, lane);
    store_neg_tile(tf + (o + 16) * LDF + o + 8 * nt, c, lane);
  }
  aux_sync();
  const int nj = warp;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<1>(c, lf + (32 + 16 * mi) * LDF, tf + 8 * nj, nj >= 2 ? 16 : 0, 32, lane);
    store_tile(tf + 16 * mi * LDF + 32 + 8 * nj, c, lane);
  }
  aux_sync();
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<1>(c, tf + (32 + 16 * mi) * LDF + 32, tf + 32 + 8 * nj, 0, mi == 0 ? 16 : 32, lane);
    store_neg_tile(tf + (32 + 16 * mi) * LDF + 8 * nj, c, lane);
  }
  aux_sync();
}

// The forward (PH 0 of fused_pass) on three warpgroups.
__device__ __forceinline__ void ws_pass(const GdnParams& p, unsigned char* smem_raw) {
  const u32 raw = static_cast<u32>(__cvta_generic_to_shared(smem_raw));
  unsigned char* base = smem_raw + ((1024u - (raw & 1023u)) & 1023u);
  const u32 sb = raw + ((1024u - (raw & 1023u)) & 1023u);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wg = warp >> 2, wi = warp & 3;
  const int fr = 16 * wi + (lane >> 2), fc = 2 * (lane & 3);
  auto frag = [&](int j) -> u32 {
    return static_cast<u32>((j & 3) >> 1) * 1024u + ((static_cast<u32>((j >> 2) & 7) ^ static_cast<u32>(fr & 7)) << 4);
  };
  const u32 frag0 = static_cast<u32>(fr) * 128u + (static_cast<u32>(fc) << 1);
  const i64 h = blockIdx.y, seq = blockIdx.z;
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const i64 bos = cu_at(p, seq, 0), te = cu_at(p, seq + 1, bos) - bos;
  const int nch = static_cast<int>((te + C - 1) / C);
  const i64 srow = state_row(p, seq);
  const float scale = static_cast<float>(p.scale);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  auto stage_at = [&](int c) -> u32 { return sb + static_cast<u32>(c & 1) * kStageBytes; };
  auto stage_ptr = [&](int c) -> unsigned char* { return base + static_cast<u32>(c & 1) * kStageBytes; };

  if (wg == 2) {
    // ---------------- the auxiliary side ----------------
    setmaxnreg_dec<120>();
    const int a = tid - 256;  // 0..127
    float* const lf = reinterpret_cast<float*>(base + kALf);
    float* const tf = reinterpret_cast<float*>(base + kATf);
    float* const gam = reinterpret_cast<float*>(base + kAGam);
    float* const bet = reinterpret_cast<float*>(base + kABet);
    float* const be_tok = reinterpret_cast<float*>(base + kABe);
    float* const iq_tok = reinterpret_cast<float*>(base + kAIq);
    float* const ik_tok = reinterpret_cast<float*>(base + kAIk);
    const u16* qg = reinterpret_cast<const u16*>(p.q);
    const u16* kg = reinterpret_cast<const u16*>(p.k);
    const u16* vg = reinterpret_cast<const u16*>(p.v);
    // Row quarters: thread a covers rows qr[0], qr[1] (virtual warps wi and wi + 4 of the
    // 8-warp layout: conflict-free swizzled pieces), pieces (lane % 4) + 4 i.
    const int qm = lane >> 2, qc = 8 * (lane & 3);
    int qr[2];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) qr[hh] = 8 * (wi + 4 * hh) + 4 * (qm & 1) + (qm >> 1);
    u32 piece_at[2][4];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int col = qc + 32 * i;
        piece_at[hh][i] =
            static_cast<u32>(col >> 6) * kPanel64 + static_cast<u32>(qr[hh]) * 128u + swz_chunk(qr[hh], col);
      }
    float g_raw[2] = {0.f, 0.f}, b_raw[2] = {0.f, 0.f};  // warp 8: tokens 2 lane, 2 lane + 1 of the next chunk
    auto prefetch = [&](int c) {
      const u32 at = stage_at(c);
      const i64 c0 = static_cast<i64>(c) * C;
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const bool in = c0 + qr[hh] < te;
        const i64 tok = bos + (in ? c0 + qr[hh] : 0);
        const u32 nb = in ? 16u : 0u;
        const u16* const qs = qg + tok * p.q_ts + hq * p.q_hs + qc;
        const u16* const ks = kg + tok * p.k_ts + hk * p.k_hs + qc;
        const u16* const vs = vg + tok * p.v_ts + hv * p.v_hs + qc;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          cp_async16s(at + kSQ + piece_at[hh][i], qs + 32 * i, nb);
          cp_async16s(at + kSK + piece_at[hh][i], ks + 32 * i, nb);
          cp_async16s(at + kSV + piece_at[hh][i], vs + 32 * i, nb);
        }
      }
      cp_async_commit();
      if (wi == 0) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          g_raw[e] = b_raw[e] = 0.f;
          if (c0 + 2 * lane + e < te) {
            const i64 off = (bos + c0 + 2 * lane + e) * p.ho + h;
            g_raw[e] = load_any(p.g, off, p.g_type);
            b_raw[e] = load_any(p.beta, off, p.beta_type);
          }
        }
      }
    };
    if (nch > 0) prefetch(0);
    for (int c = 0; c < nch; ++c) {
      const int n = static_cast<int>(te - static_cast<i64>(c) * C < C ? te - static_cast<i64>(c) * C : C);
      const u32 st = stage_at(c);
      unsigned char* const sp = stage_ptr(c);
      float* const eg_tok = reinterpret_cast<float*>(sp + kSEg);
      float* const kf_tok = reinterpret_cast<float*>(sp + kSKf);
      const u32 sQ = st + kSQ, sK = st + kSK, sV = st + kSV;
      // Own pieces landed: fp16 inputs to bf16 in place; the norms' inverses of rows qr[].
      cp_async_wait_all();
      float iq[2] = {1.f, 1.f}, ik[2] = {1.f, 1.f};
      if (l2 || GDN_IO != 0) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          float sq = 0.f, sk = 0.f;
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int t3 = 0; t3 < 3; ++t3) {
              const u32 ad = (t3 == 0 ? sQ : t3 == 1 ? sK : sV) + piece_at[hh][i];
              const uint4 w = lds128(ad);
              float x[8];
#pragma unroll
              for (int e = 0; e < 8; ++e) x[e] = io_of(w, e);
              if (t3 == 0)
#pragma unroll
                for (int e = 0; e < 8; ++e) sq += x[e] * x[e];
              if (t3 == 1)
#pragma unroll
                for (int e = 0; e < 8; ++e) sk += x[e] * x[e];
              if (GDN_IO != 0)
                sts128(ad, pack_bf16(x[0], x[1]), pack_bf16(x[2], x[3]), pack_bf16(x[4], x[5]), pack_bf16(x[6], x[7]));
            }
          if (l2) {
            sq += __shfl_xor_sync(0xffffffffu, sq, 1);
            sq += __shfl_xor_sync(0xffffffffu, sq, 2);
            sk += __shfl_xor_sync(0xffffffffu, sk, 1);
            sk += __shfl_xor_sync(0xffffffffu, sk, 2);
            iq[hh] = rsqrtf(sq + 1e-6f);
            ik[hh] = rsqrtf(sk + 1e-6f);
          }
        }
      }
      if (wi == 0) {  // the gate cumsum and beta (two tokens a lane)
        float gl[2] = {0.f, 0.f}, bb[2] = {0.f, 0.f};
#pragma unroll
        for (int e = 0; e < 2; ++e)
          if (2 * lane + e < n) gate_beta_of(p, g_raw[e], b_raw[e], h, gl[e], bb[e]);
        float sum = gl[0] + gl[1];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
          const float y = __shfl_up_sync(0xffffffffu, sum, o);
          if (lane >= o) sum += y;
        }
        gam[2 * lane] = (sum - gl[1]) * kLog2e;
        gam[2 * lane + 1] = sum * kLog2e;
        bet[2 * lane] = bb[0];
        bet[2 * lane + 1] = bb[1];
      }
      fence_async_shared();
      aux_sync();
      const float gc = gam[C - 1];
      if ((lane & 3) == 0) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = qr[hh];
          const float gr = gam[r], eg = exp2f(gr);
          iq_tok[r] = iq[hh];
          ik_tok[r] = ik[hh];
          be_tok[r] = bet[r] * eg * ik[hh];
          eg_tok[r] = scale * eg * iq[hh];
          kf_tok[r] = ik[hh] * exp2f(gc - gr);
        }
      }
      if (a == 0) *reinterpret_cast<float*>(sp + kSGc) = exp2f(gc);
      // L = K K^T and P = Q K^T, both here (m64n64k128 each).
      float accl[32], accp[32];
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) Mma<64>::mma(accl, kdesc(sK, kk, kPanel64), kdesc(sK, kk, kPanel64), kk > 0);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) Mma<64>::mma(accp, kdesc(sQ, kk, kPanel64), kdesc(sK, kk, kPanel64), kk > 0);
      wgmma_commit();
      aux_sync();  // the token factors
      wgmma_wait<0>();
      pin<32>(accl);
      pin<32>(accp);
      {
        const float gr[2] = {gam[fr], gam[fr + 8]};
        const float br[2] = {bet[fr] * ik_tok[fr], bet[fr + 8] * ik_tok[fr + 8]};
        const float qs[2] = {scale * iq_tok[fr], scale * iq_tok[fr + 8]};
        const u32 prow = st + kSP + static_cast<u32>(fr) * 128u + (static_cast<u32>(fc) << 1);
#pragma unroll
        for (int j = 0; j < 32; j += 2) {
          const int hh = (j & 3) >> 1, r = fr + 8 * hh, s0 = 8 * (j >> 2) + fc;
          const float f0 = ik_tok[s0] * ex2_ftz(gr[hh] - gam[s0]), f1 = ik_tok[s0 + 1] * ex2_ftz(gr[hh] - gam[s0 + 1]);
          lf[r * LDF + s0] = s0 < r ? br[hh] * accl[j] * f0 : 0.f;
          lf[r * LDF + s0 + 1] = s0 + 1 < r ? br[hh] * accl[j + 1] * f1 : 0.f;
          const float x0 = s0 <= r ? qs[hh] * accp[j] * f0 : 0.f;
          const float x1 = s0 + 1 <= r ? qs[hh] * accp[j + 1] * f1 : 0.f;
          sts32(prow + static_cast<u32>(hh) * 1024u + swz_chunk(r, s0), pack_bf16(x0, x1));
        }
      }
      aux_sync();
      inverse_aux(lf, tf, a);
      // The next chunk's rows into the other stage, once the state side is done with the chunk
      // before this one there (nothing to wait for before chunk 2).
      if (c + 1 < nch) {
        if (c >= 1) nb_sync(kBarEmpty + ((c + 1) & 1), kWsThreads);
        prefetch(c + 1);
      }
      // T_k (scratch) and T_v (the stage): two row quarters of 16 columns a thread.
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int q = a + 128 * hh, r = q >> 2, g = q & 3, s = 16 * g;
        u32 wk[8] = {0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u}, wv[8] = {0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u};
        if (g <= (r >> 4)) {
#pragma unroll
          for (int q4 = 0; q4 < 4; ++q4) {
            const float4 b4 = lds128f(sb + kABe + 4u * static_cast<u32>(s + 4 * q4));
            const float4 v4 = lds128f(sb + kABet + 4u * static_cast<u32>(s + 4 * q4));
            const float* tr = tf + r * LDF + s + 4 * q4;
            const float t0 = tr[0], t1 = tr[1], t2 = tr[2], t3 = tr[3];
            wk[2 * q4] = pack_bf16(t0 * b4.x, t1 * b4.y);
            wk[2 * q4 + 1] = pack_bf16(t2 * b4.z, t3 * b4.w);
            wv[2 * q4] = pack_bf16(t0 * v4.x, t1 * v4.y);
            wv[2 * q4 + 1] = pack_bf16(t2 * v4.z, t3 * v4.w);
          }
        }
        const u32 o0 = static_cast<u32>(r) * 128u + swz_chunk(r, s), o1 = static_cast<u32>(r) * 128u + swz_chunk(r, s + 8);
        sts128(sb + kAT + o0, wk[0], wk[1], wk[2], wk[3]);
        sts128(sb + kAT + o1, wk[4], wk[5], wk[6], wk[7]);
        sts128(st + kSTv + o0, wv[0], wv[1], wv[2], wv[3]);
        sts128(st + kSTv + o1, wv[4], wv[5], wv[6], wv[7]);
      }
      fence_async_shared();
      aux_sync();
      // Wn = -T_k K, both 64-column halves (m64n64k64 each) into the stage.
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float w[32];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < C / 16; ++kk)
          MmaBt<64>::mma(w, kdesc(sb + kAT, kk, kPanel64), mdesc(sK + static_cast<u32>(half) * kPanel64, kk), kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
        pin<32>(w);
        const u32 wrow = st + kSWn + static_cast<u32>(half) * kPanel64 + frag0;
#pragma unroll
        for (int j = 0; j < 32; j += 2) sts32(wrow + frag(j), pack_bf16(-w[j], -w[j + 1]));
      }
      fence_async_shared();
      // The stage is the state side's (its writes published by the arrive).
      nb_arrive(kBarFull + (c & 1), kWsThreads);
    }
    return;
  }

  // ---------------- the state side (warpgroups 0 and 1) ----------------
  setmaxnreg_inc<192>();
  const int v0 = 64 * wg;
  float st[64];
  {
    const bool load = (p.flags & kFlagHasInit) && srow >= 0;
    const i64 sbase = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
    for (int j = 0; j < 64; j += 2) {
      const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
      float x = 0.f, y = 0.f;
      if (load) load_any2(p.initial_state, sbase + static_cast<i64>(r) * D + c, p.state_type, x, y);
      st[j] = x;
      st[j + 1] = y;
    }
  }
  for (int c = 0; c < nch; ++c) {
    const i64 c0 = static_cast<i64>(c) * C;
    const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
    const u32 sg = stage_at(c);
    const unsigned char* const sp = stage_ptr(c);
    const float* const eg_tok = reinterpret_cast<const float*>(sp + kSEg);
    const float* const kf_tok = reinterpret_cast<const float*>(sp + kSKf);
    nb_sync(kBarFull + (c & 1), kWsThreads);
    u32 sa[8][4];
#pragma unroll
    for (int kk = 0; kk < 8; ++kk)
#pragma unroll
      for (int q = 0; q < 4; ++q) sa[kk][q] = pack_bf16(st[8 * kk + 2 * q], st[8 * kk + 2 * q + 1]);
    float vt[32], o[32];
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < C / 16; ++kk)
      MmaAtB<64>::mma(vt, mdesc(sg + kSV + static_cast<u32>(wg) * kPanel64, kk), kdesc(sg + kSTv, kk, kPanel64), kk > 0);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      RS<64, 0>::mma(vt, sa[kk], kdesc(sg + kSWn, kk, kPanel64), 1);
      RS<64, 0>::mma(o, sa[kk], kdesc(sg + kSQ, kk, kPanel64), kk > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    pin<32>(vt);
    pin<32>(o);
    u32 va[4][4], vk[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int j = 8 * kk + 2 * q, cc = 8 * (j >> 2) + fc;
        const float2 f = *reinterpret_cast<const float2*>(kf_tok + cc);
        va[kk][q] = pack_bf16(vt[j], vt[j + 1]);
        vk[kk][q] = pack_bf16(vt[j] * f.x, vt[j + 1] * f.y);
      }
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const float e0 = eg_tok[8 * t + fc], e1 = eg_tok[8 * t + fc + 1];
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        o[4 * t + 2 * hh] *= e0;
        o[4 * t + 2 * hh + 1] *= e1;
      }
    }
    {
      const float ec = *reinterpret_cast<const float*>(sp + kSGc);
#pragma unroll
      for (int j = 0; j < 64; ++j) st[j] *= ec;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < C / 16; ++kk) {
        RS<64, 0>::mma(o, va[kk], kdesc(sg + kSP, kk, kPanel64), 1);
        RS<128, 1>::mma(st, vk[kk], mdesc(sg + kSK, kk), 1);
      }
      wgmma_commit();
      wgmma_wait<0>();
      pin<32>(o);
      pin<64>(st);
    }
    if (p.o_type != kTypeF32 && (p.o & 15u) == 0) {
      // 16-bit O through this warpgroup's V panel of the stage (as gdn_prefill_fused).
      const bool bf = p.o_type == kTypeBf16;
      const u32 stage = sg + kSV + static_cast<u32>(wg) * kPanel64;
      const int mi = lane >> 3, mk = lane & 7;
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        u32 w4[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int j = 4 * (2 * m + (i >> 1)) + 2 * (i & 1);
          w4[i] = bf ? pack_bf16(o[j], o[j + 1]) : pack_f16(o[j], o[j + 1]);
        }
        const int cc = 8 * (2 * m + (mi >> 1)) + mk, vch = 2 * wi + (mi & 1);
        stmatrix_x4_trans(stage + static_cast<u32>(cc) * 128u + ((static_cast<u32>(vch) ^ static_cast<u32>(cc & 7)) << 4),
                          w4[0], w4[1], w4[2], w4[3]);
      }
      wg_sync(wg);
      const int tw = tid & 127;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int q = tw + 128 * k, cc = q >> 3, ch = q & 7;
        if (cc < n) {
          const uint4 w = lds128(stage + static_cast<u32>(cc) * 128u + ((static_cast<u32>(ch) ^ static_cast<u32>(cc & 7)) << 4));
          *reinterpret_cast<uint4*>(reinterpret_cast<u16*>(p.o) + (bos + c0 + cc) * p.ho * D + h * D + v0 + 8 * ch) = w;
        }
      }
    } else {
      const i64 orow = (bos + c0) * p.ho * D + h * D + v0 + fr;
      const i64 tok_stride = p.ho * D;
#pragma unroll
      for (int t = 0; t < 8; ++t)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int cc = 8 * t + fc + e;
          if (cc < n) {
            const i64 at = orow + cc * tok_stride;
            store_any(p.o, at, p.o_type, o[4 * t + e]);
            store_any(p.o, at + 8, p.o_type, o[4 * t + 2 + e]);
          }
        }
    }
    // Done with the stage: the auxiliary side may load the chunk after next into it.
    if (c + 2 < nch) nb_arrive(kBarEmpty + (c & 1), kWsThreads);
  }
  if ((p.flags & kFlagWriteFinal) && srow >= 0) {
    const i64 sbase = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
    for (int j = 0; j < 64; j += 2) {
      const int r = fr + 8 * ((j & 3) >> 1), cc = 8 * (j >> 2) + fc;
      store_any2(p.final_state, sbase + static_cast<i64>(r) * D + cc, p.state_type, st[j], st[j + 1]);
    }
  }
}

}  // namespace ws
}  // namespace opgraph_gdn
