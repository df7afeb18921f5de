// linear_attention/kernels/gdn_fused_ws.cuh — the fused gdn prefill, warp-specialised: a variant
// under trial (gdn_fused.cu builds gdn_prefill_fused from it under GDN_FUSED_WS=1; off in the
// engine; bench/gdn_fused_ab.sh runs it against the engine's build). Included by gdn_fused.cu
// after its helpers (descriptors, swizzle, shared-memory access, the wgmma forms).
//
// One CTA of three warpgroups per (output head, sequence) — or per span, or per (value or transition
// rows, ...) in fused_pass's other forms, whose grids and outputs it keeps (PH as fused_pass's):
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
// 120 and the state warpgroups to 192 (the CTA's pool balances: 2 x 128 x 24 = 128 x 48; 8-16 bytes of spill). The
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

// fused_pass's form PH (0 the forward, 1 gdn_summary, 2 span summaries, 3 span scans) on three
// warpgroups.
template <int PH>
__device__ __forceinline__ void ws_pass(const GdnParams& p, unsigned char* smem_raw) {
  constexpr bool kOut = PH == 0 || PH == 3;  // reads q, writes O
  constexpr bool kSum = PH == 1 || PH == 2;  // grid x = 2: value rows, then transition rows
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
  const i64 h = blockIdx.y;
  const PassRange rg = pass_range<PH>(p);
  if (!rg.run) return;
  const i64 seq = rg.seq, bos = rg.bos, tb = rg.tb, te = rg.te;
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const int nch = static_cast<int>((te - tb + C - 1) / C);  // chunk c: tokens tb + C c .. of the sequence
  const i64 srow = kOut ? state_row(p, seq) : seq;
  const bool mrows = kSum && blockIdx.x == 1;  // rows of M^T (uniform in the CTA)
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
      const i64 c0 = tb + static_cast<i64>(c) * C;
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
          if (kOut) cp_async16s(at + kSQ + piece_at[hh][i], qs + 32 * i, nb);
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
      const i64 c0 = tb + static_cast<i64>(c) * C;
      const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
      const u32 st = stage_at(c);
      unsigned char* const sp = stage_ptr(c);
      float* const eg_tok = reinterpret_cast<float*>(sp + kSEg);
      float* const kf_tok = reinterpret_cast<float*>(sp + kSKf);
      const u32 sQ = st + kSQ, sK = st + kSK, sV = st + kSV;
      // Own pieces landed: fp16 inputs to bf16 in place; the norms' inverses of rows qr[].
      cp_async_wait_all();
      float iq[2], ik[2];
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) quarter_norms(sQ, sK, sV, piece_at[hh], kOut, l2, iq[hh], ik[hh]);
      if (wi == 0) chunk_gates(p, g_raw, b_raw, n, h, lane, gam, bet);
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
      // L = K K^T and P = Q K^T, both here (m64n64k128 each; the summary forms have no P).
      float accl[32], accp[32];
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) Mma<64>::mma(accl, kdesc(sK, kk, kPanel64), kdesc(sK, kk, kPanel64), kk > 0);
      if (kOut) {
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) Mma<64>::mma(accp, kdesc(sQ, kk, kPanel64), kdesc(sK, kk, kPanel64), kk > 0);
      }
      wgmma_commit();
      aux_sync();  // the token factors
      wgmma_wait<0>();
      pin<32>(accl);
      if (kOut) pin<32>(accp);
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
          if (kOut) {
            const float x0 = s0 <= r ? qs[hh] * accp[j] * f0 : 0.f;
            const float x1 = s0 + 1 <= r ? qs[hh] * accp[j + 1] * f1 : 0.f;
            sts32(prow + static_cast<u32>(hh) * 1024u + swz_chunk(r, s0), pack_bf16(x0, x1));
          }
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
      // T_k (scratch) and T_v (the stage): two tasks a thread.
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) t_copy(a + 128 * hh, tf, sb + kABe, sb + kABet, sb + kAT, st + kSTv);
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
  pass_state_in<PH>(p, st, srow, seq, rg.span, h, v0, fr, fc, mrows);
  for (int c = 0; c < nch; ++c) {
    const i64 c0 = tb + static_cast<i64>(c) * C;
    const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
    const u32 sg = stage_at(c);
    const unsigned char* const sp = stage_ptr(c);
    const float* const eg_tok = reinterpret_cast<const float*>(sp + kSEg);
    const float* const kf_tok = reinterpret_cast<const float*>(sp + kSKf);
    nb_sync(kBarFull + (c & 1), kWsThreads);
    float o[32];
    state_chunk<kOut>(st, o, mrows, sg + kSV + static_cast<u32>(wg) * kPanel64, sg + kSTv, sg + kSWn, sg + kSQ, sg + kSP,
                      sg + kSK, kf_tok, eg_tok, *reinterpret_cast<const float*>(sp + kSGc), fc);
    if (kOut) store_o(p, o, sg + kSV + static_cast<u32>(wg) * kPanel64, wg, wi, lane, tid, fr, fc, n, bos, c0, h, v0);
    // Done with the stage: the auxiliary side may load the chunk after next into it.
    if (c + 2 < nch) nb_arrive(kBarEmpty + (c & 1), kWsThreads);
  }
  pass_state_out<PH>(p, st, srow, seq, rg.span, h, v0, fr, fc, mrows, rg.last_span);
}

}  // namespace ws
}  // namespace opgraph_gdn
