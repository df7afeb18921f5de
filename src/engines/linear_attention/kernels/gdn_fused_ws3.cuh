// linear_attention/kernels/gdn_fused_ws3.cuh — GDN_WS_R3, the warp-specialised form of the fused Gated
// DeltaNet prefill that the engine builds as PIPELINE_ARCH 3 (ws::ws3_pass; since 0b900ea). A part of gdn_fused_ws.cuh, which includes it under
// GDN_WS_R3 after the pieces it shares with ws_pass (state_chunk_x, lp_issue, lp_epilogue,
// inverse_aux from gdn_ws_inverse.cuh, quarter_row_pieces, request_quarter_row, the named barriers).
#pragma once
namespace opgraph_gdn {
namespace ws {

// ---- GDN_WS_R3 (the engine's PIPELINE_ARCH 3): three row stages, the state side loading and normalising ----
// The same three warpgroups and arithmetic as ws_pass (X form: state_chunk_x<kOut, true>), rebalanced:
//   state side  after chunk c: waits for its own copies of chunk c + 2's rows (requested after
//               chunk c - 1), forms their norms (quarter_norms: fp16 to bf16 in place, iq and ik a
//               row into the row stage) and arrives on ROWS((c + 2) % 3); then, both state
//               warpgroups done with chunk c (a 256-thread named barrier), requests chunk c + 3's
//               rows into the row stage chunk c leaves (12 cp.async a thread). Chunks 0 .. 2 are
//               requested, and 0, 1 normalised, before the state is read in.
//   aux side    chunk c: waits ROWS(c % 3) (phase c / 3), the factors (eg, kf, ke a token,
//               e^gamma_C) into product stage c % 2, L and P (P into the product stage), the inverse
//               (chunk c + 1's gates formed meanwhile: GDN_WS3_GATES), T_v; arrives FULL(c % 2). No
//               rows, no norms, no Wn, no T_k.
// Row stage r (49 KiB): q, k, v [64][128] bf16, iq and ik a row, ROWS(r) (an mbarrier, 256
// arrivals a phase). Product stage s (17 KiB): T_v, P [64][64] bf16, the factors. Then the
// auxiliary side's lf, tf, gamma, beta. ROWS(c % 3) completing implies the state side is done with
// chunk c - 2 (it normalises chunk c after chunk c - 2), so product stage c % 2 is free then;
// the row stage a request fills held chunk c - 3, which both state warpgroups have left, and the
// auxiliary side read it (q, k) before its FULL arrive for that chunk. Model-checked:
// python3 scripts/model_ws_barriers.py 8 --r3.
namespace r3 {
constexpr u32 kRQ = 0, kRK = 16384, kRV = 32768;  // a row stage's tiles
constexpr u32 kRIq = 49152, kRIk = kRIq + 4 * C;  // 1 / ||q||, 1 / ||k|| a row (1 without l2)
constexpr u32 kRMbar = kRIk + 4 * C;              // ROWS(r)
constexpr u32 kRBytes = 50176;                    // 49 KiB: the tiles stay 1024-aligned
constexpr u32 kRGuard = kRMbar + 8;              // row stage 0 only: GDN_BETA_GUARD's flag (a beta out of range)
static_assert(kRGuard + 4 <= kRBytes, "row stage overflow");
constexpr u32 kPTv = 0, kPP = 8192;               // a product stage's tiles
constexpr u32 kPEg = 16384, kPKf = kPEg + 4 * C, kPKe = kPKf + 4 * C, kPGc = kPKe + 4 * C;
constexpr u32 kPBytes = 17408;                    // 17 KiB
static_assert(kPGc + 4 <= kPBytes, "product stage overflow");
constexpr u32 kP0 = 3 * kRBytes;                  // product stages
constexpr u32 kXLf = kP0 + 2 * kPBytes;           // the auxiliary side's scratch
constexpr u32 kXTf = kXLf + 4 * C * LDF;
constexpr u32 kXGam = kXTf + 4 * C * LDF;        // gamma, beta: two chunks' (by chunk parity: warp 8
constexpr u32 kXBet = kXGam + 8 * C;              // forms chunk c + 1's while the others still read c's)
constexpr u32 kXBe = kXBet + 8 * C;               // beta e^gamma ik a token, one chunk's (PH 4: T_k's column scale)
constexpr u32 kBytes = kXBe + 4 * C;              // + 1024 to align the base
static_assert(kBytes + 1024 <= 232448, "over the 227 KiB a CTA may have");
static_assert(kBytes + 1024 == gdn_fused_ws_smem_bytes(D), "gdn_fused_ws_smem_bytes disagrees with the stages' map");
constexpr u32 kXSt = kBytes;  // PH 4 under GDN_BWD_FWD_STAGE: a 4 KiB staging panel a state warpgroup
static_assert(kXSt + 2 * 4096 + 1024 == gdn_bwd_fwd_fused_smem_bytes(D) || !GDN_BWD_FWD_STAGE,
              "gdn_bwd_fwd_fused_smem_bytes disagrees with the staging panels");
static_assert(kXSt + 2 * 4096 + 1024 <= 232448, "the staging panels over the 227 KiB a CTA may have");
}  // namespace r3

// R3's auxiliary side: two of the three changes measured on the H200 (together with the L / P epilogue's
// plain stores, lp_epilogue: 0.905-0.917x; bench/results/2026-12-03-gdn-ws3-aux-h200.txt), on by default:
//   GDN_WS3_GATES  2 (the engine's since 2026-12-04): warps 10 and 11, idle while warps 8 and 9 form the
//                  inverse's diagonal blocks, form chunk c + 1's gates there, a token a lane (each its
//                  half's prefix sums; at chunk c + 1's top threads 32..63 add the first half's total, before
//                  the barrier after which anyone reads them), and load chunk c + 2's raw gates (H200:
//                  0.94x; with GDN_WS3_MERGE2 0.90-0.91x, bench/results/2026-12-04-gdn-ws3-gates-merge-h200.txt).
//                  Chunk c + 1's gates go to the parity chunk c - 1 used, which its T_v copy read last,
//                  before chunk c's first barrier. 1 (0b900ea's): warp 8 forms them while chunk c's L / P
//                  products run; Nsight Compute then showed the other three aux warps waiting for warp 8 at
//                  the barrier after the L / P epilogue, ~18 % of the aux side's time
//                  (bench/results/2026-12-04-gdn-ws3-profile-8a91c12-h200.txt). 0: warp 8 at the chunk's top.
//                  (Tried and removed: 3, 2's halves on warps 8 and 9 right after their L / P epilogues, H200
//                  1.006-1.011x; bench/results/2026-12-04-gdn-ws3-trials2-h200.txt.)
#ifndef GDN_WS3_GATES
#define GDN_WS3_GATES 2
#endif
// GDN_WS3_EPIW (1, the engine's since 2026-12-04): the forms with O (the prefill, the span scan) run the L / P
// epilogue specialised on the warp's index (lp_epilogue<kOut, WI>, one copy a warp: no work above a warp's diagonal
// block, no mask but P's on it; the ~190 mask instructions a warp a chunk that the compiler kept as bit masks go);
// both product stages' P tiles zeroed once before the first chunk (the entries above the diagonal are then never
// written). H200: 0.971-0.981x, outputs bitwise equal (bench/results/2026-12-04-gdn-ws3-epiw-h200.txt). The summary
// forms keep the generic epilogue (four copies there spill 124-136 bytes).
#ifndef GDN_WS3_EPIW
#define GDN_WS3_EPIW 1
#endif
// GDN_WS3_NORMMID (a variant under trial; H200 0.978-0.999x on top of LD 68, 0.979-1.014x on top of the four-column
// reads (bench/results/2026-12-04-gdn-ws3-trials2-h200.txt), bitwise equal: left off while the aux
// side is the critical path, bench/results/2026-12-04-gdn-ws3-trials-h200.txt): the state side forms chunk c + 2's norms and
// arrives on its ROWS while chunk c's first product group is in flight (state_chunk_x's mid), instead of after
// chunk c's O store: the norms leave the state side's critical path (the clocks put 'norms + requests' at ~2.0k of
// its ~6.4k busy cycles a chunk), and the aux side gets the rows earlier. The requests stay after chunk c (the row
// stage they refill is chunk c's).
#ifndef GDN_WS3_NORMMID
#define GDN_WS3_NORMMID 0
#endif
// (Tried and removed, bench/results/2026-12-04-gdn-ws3-trials2-h200.txt: the L / P products issued as soon as the
// rows are in, before the gates' barrier, 0.998-1.003x; the epilogue's loads and decays hoisted above its first
// store, 1.07-1.16x, 40-44 B of spills; the second merge level's k range at compile time with two accumulators,
// 1.03-1.06x, 16 B of spills. And on 2026-12-06, bench/results/2026-12-06-gdn-split-tail-h100.txt: chunk c + 1's L / P
// products issued after chunk c's inverse and waited for after its FULL arrive, in flight through its T_v copy
// (ptxas serialises them if a divergent branch lies between issue and wait), 1.012-1.105x on the H100, bitwise equal.)
// GDN_WS3_GATES 2: token j (32 x the gate warp's index among the two, + lane) of a chunk starting at c0: its raw gate and beta
// (0 past te), and its half's prefix sums of the natural-log gates (log2 units) into gam[j], beta into bet[j].
__device__ __forceinline__ void gate_raw1(const GdnParams& p, i64 bos, i64 c0, i64 te, i64 h, int j, float& g,
                                          float& b) {
  g = b = 0.f;
  if (c0 + j < te) {
    const i64 off = (bos + c0 + j) * p.ho + h;
    g = load_any(p.g, off, p.g_type);
    b = load_any(p.beta, off, p.beta_type);
  }
}
// Returns the token's beta as formed (0 past n).
__device__ __forceinline__ float half_gates(const GdnParams& p, float g, float b, int n, i64 h, int j, int lane,
                                            float* gam, float* bet) {
  float gl = 0.f, bb = 0.f;
  if (j < n) gate_beta_of(p, g, b, h, gl, bb);
  float sum = gl;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float y = __shfl_up_sync(0xffffffffu, sum, o);
    if (lane >= o) sum += y;
  }
  gam[j] = sum * kLog2e;
  bet[j] = bb;
  return bb;
}
// ---- PH 4, gdn_bwd's forward recompute: a chunk's tiles to the gdn_bwd workspace (gdn_bwd_params.cuh's regions,
// per (chunk slot, output head) sh, as gdn_bwd_prep and gdn_bwd_fwd_scan write them) ----
// The chunk block of sh: bf16 qe, wn, kd, u [C][D], p, T [C][C] at gdn_common.cuh's kOff* (u is not written: only
// gdn_bwd_fwd_scan, which this form replaces, reads it).
__device__ __forceinline__ u16* bwd_block(const GdnParams& p, i64 sh) {
  return reinterpret_cast<u16*>(p.bwd_ws + p.bwd_blocks) + sh * gdn_bwd_block_elems(D);
}
__device__ __forceinline__ float* bwd_egc(const GdnParams& p) { return reinterpret_cast<float*>(p.bwd_ws + p.bwd_egc); }
__device__ __forceinline__ u16* bwd_st(const GdnParams& p) { return reinterpret_cast<u16*>(p.bwd_ws + p.bwd_st); }
__device__ __forceinline__ u16* bwd_vn(const GdnParams& p) { return reinterpret_cast<u16*>(p.bwd_ws + p.bwd_vn); }
// T (fp32 rows LDF apart) to the block's dense bf16 T tile, zeros above the diagonal: 16 bytes a piece, four pieces
// a thread of the auxiliary warpgroup (a: 0..127).
__device__ __forceinline__ void bwd_store_t(const float* tf, u16* bt, int a) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int q = a + 128 * i, r = q >> 3, c = 8 * (q & 7);
    u32 w[4];
#pragma unroll
    for (int e = 0; e < 8; e += 2) {
      const float x0 = c + e <= r ? tf[r * LDF + c + e] : 0.f;
      const float x1 = c + e + 1 <= r ? tf[r * LDF + c + e + 1] : 0.f;
      w[e / 2] = pack_bf16(x0, x1);
    }
    *reinterpret_cast<uint4*>(bt + r * C + c) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}
// The state slice S^T [v0 .. v0 + 64) at the chunk's start (st's m64n128 fragments, row fr (+ 8), column fc (+ 1)) as
// bf16 rows of D from dst (the slice's first row).
__device__ __forceinline__ void bwd_store_state(const float (&st)[64], u16* dst, int fr, int fc) {
#pragma unroll
  for (int j = 0; j < 64; j += 2) {
    const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
    *reinterpret_cast<u32*>(dst + r * D + c) = pack_bf16(st[j], st[j + 1]);
  }
}
// Under GDN_BWD_FWD_STAGE: a warpgroup's m64 x (32 NR) fragments f (f[4 t + 2 hh + e]: row fr + 8 hh, column 8 t + fc
// + e, negated under kNeg) to the bf16 rows at dst (row stride D), through its 4 KiB panel `stage` in NR rounds of 32
// columns: each warp's 16 rows by two stmatrix .x4 (matrix i of the k-th: n-tile 4 q + 2 k + i / 2, row half i % 2)
// into 64 rows of 64 bytes, a row's 16-byte chunks XOR-swizzled by (row >> 1) & 3 (a matrix's eight rows and a
// quarter-warp's reads on distinct banks), then two 16-byte stores a thread, four threads a row's 64 bytes. The panel
// is guarded by a warpgroup barrier before each round's writes (the previous round's, or call's, reads) and one
// before its reads. scripts/emulate_bwd_fwd_stage.py checks the map against the fragments' elements.
template <int NR, bool kNeg>
__device__ __forceinline__ void bwd_store_staged(const float (&f)[16 * NR], u32 stage, u16* dst, int wg, int wi,
                                                 int lane, int tid) {
  const int mi = lane >> 3, rr = lane & 7, tw = tid & 127;
#pragma unroll
  for (int q = 0; q < NR; ++q) {
    wg_sync(wg);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      u32 w4[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int j = 4 * (4 * q + 2 * k + (i >> 1)) + 2 * (i & 1);
        w4[i] = kNeg ? pack_bf16(-f[j], -f[j + 1]) : pack_bf16(f[j], f[j + 1]);
      }
      const int row = 16 * wi + 8 * (mi & 1) + rr, c16 = 2 * k + (mi >> 1);
      stmatrix_x4(stage + static_cast<u32>(row) * 64u + (static_cast<u32>(c16 ^ ((row >> 1) & 3)) << 4), w4[0], w4[1],
                  w4[2], w4[3]);
    }
    wg_sync(wg);
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int ch = tw + 128 * i, row = ch >> 2, c16 = ch & 3;
      const uint4 w = lds128(stage + static_cast<u32>(row) * 64u + (static_cast<u32>(c16 ^ ((row >> 1) & 3)) << 4));
      *reinterpret_cast<uint4*>(dst + row * D + 32 * q + 8 * c16) = w;
    }
  }
}
// Vn (this warpgroup's Vn^T fragments: vn[4 t + 2 hh + e] = Vn^T[fr + 8 hh][8 t + fc + e]) to the dense bf16 [C][D]
// tile at dst, value columns v0 .. v0 + 64: packed and stored transposed (stmatrix) into the warpgroup's panel
// `stage` as Vn[c][v0 .. v0 + 64) (store_o's map; the panel's V rows are dead once Vn^T is formed), then 16-byte
// stores by row, all 64 rows (a partial chunk's rows past its tokens are zeros: beta is 0 there). (store_o's staging
// written again rather than shared: with it as one helper the eight-warp prefill's machine code changed,
// scripts/gdn_sass_same.sh, and that kernel's H200 checks ran on the code as it is.)
__device__ __forceinline__ void bwd_store_vn(const float (&vn)[32], u32 stage, u16* dst, int wg, int wi, int lane,
                                             int tid, int v0) {
  const int mi = lane >> 3, mk = lane & 7;
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    u32 w4[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // matrix i: the 8 x 8 block (t = 2 m + i / 2, hh = i % 2)
      const int j = 4 * (2 * m + (i >> 1)) + 2 * (i & 1);
      w4[i] = pack_bf16(vn[j], vn[j + 1]);
    }
    const int c = 8 * (2 * m + (mi >> 1)) + mk, vch = 2 * wi + (mi & 1);
    stmatrix_x4_trans(stage + static_cast<u32>(c) * 128u + ((static_cast<u32>(vch) ^ static_cast<u32>(c & 7)) << 4),
                      w4[0], w4[1], w4[2], w4[3]);
  }
  wg_sync(wg);
  const int tw = tid & 127;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int q = tw + 128 * k, c = q >> 3, ch = q & 7;
    const u32 at = static_cast<u32>(c) * 128u + ((static_cast<u32>(ch) ^ static_cast<u32>(c & 7)) << 4);
    *reinterpret_cast<uint4*>(dst + c * D + v0 + 8 * ch) = lds128(stage + at);
  }
}
// Qe = diag(e^gamma iq) Q and Kd = diag(ik e^(gamma_C - gamma)) K from the rows as loaded (bf16 by now: the row
// stage's swizzled [64][128] tiles at sQ, sK) and their factors a token, to the block: 16 bytes a piece, four of each
// tile a thread of the state side (t: 0..255).
__device__ __forceinline__ void bwd_store_qk(u32 sQ, u32 sK, const float* eg_tok, const float* kf_tok, u16* blk,
                                             int t) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const bool isk = i >= 4;
    const int q = t + 256 * (i & 3), r = q >> 4, col = 8 * (q & 15);
    const u32 off = static_cast<u32>(col >> 6) * kPanel64 + static_cast<u32>(r) * 128u + swz_chunk(r, col);
    const uint4 w = lds128((isk ? sK : sQ) + off);
    const float f = isk ? kf_tok[r] : eg_tok[r];
    const uint4 y = make_uint4(pack_bf16(f * bf16_lo(w.x), f * bf16_hi(w.x)),
                               pack_bf16(f * bf16_lo(w.y), f * bf16_hi(w.y)),
                               pack_bf16(f * bf16_lo(w.z), f * bf16_hi(w.z)),
                               pack_bf16(f * bf16_lo(w.w), f * bf16_hi(w.w)));
    *reinterpret_cast<uint4*>(blk + (isk ? kOffKd : kOffQe) + r * D + col) = y;
  }
}

// ---- PH 5, 6: gdn_bwd's fused forms under a chain split (the backward's span blocks, gdn_bwd_params.cuh) ----
// The span block `which` (kSpanH .. kSpanRSeed) of (sequence, span, output head): fp32 [D][D], S^T rows (M: K x K).
__device__ __forceinline__ float* bwd_span_block(const GdnParams& p, i64 seq, i64 span, i64 h, int which) {
  float* const blocks = reinterpret_cast<float*>(p.bwd_ws + p.bwd_span);
  return blocks + gdn_bwd_span_block_at(seq, span, h, which, p.n_spans, p.ho, D);
}
// PH 6: the warpgroup's slice of the span's seed, in m64n128 accumulator order as pass_state_in: under a chain split
// gdn_bwd_span_fixup's forward walk's (span 0's the initial state or zero); seeded by state_checkpoints (ckpt_every
// > 0: spans of ckpt_every tokens, the host's rule B6 keeps every row needed below ckpt_rows) span 0 from the
// initial state (or zero), span j > 0 from the sequence's checkpoint j - 1.
__device__ __forceinline__ void bwd_span_seed(const GdnParams& p, float (&st)[64], i64 seq, i64 span, i64 h, int v0,
                                              int fr, int fc) {
  const bool ck = p.ckpt_every > 0;
  const bool from_init = ck && span == 0 && (p.flags & kFlagHasInit) != 0;
  const bool from_ck = ck && span > 0;
  const i64 row = from_ck ? checkpoint_row0(p, seq, p.ckpt_every) + span - 1 : from_init ? seq : 0;
  const i64 base = (row * p.ho + h) * D * D + static_cast<i64>(v0) * D;  // a dense [rows, HO, D, D] row's slice
  const float* seed = ck ? nullptr : bwd_span_block(p, seq, span, h, kSpanSeed) + static_cast<i64>(v0) * D;
#pragma unroll
  for (int j = 0; j < 64; j += 2) {
    const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
    float a = 0.f, b = 0.f;
    if (!ck) load_f2(seed + static_cast<i64>(r) * D + c, a, b);
    if (from_init) load_any2(p.initial_state, base + static_cast<i64>(r) * D + c, p.state_type, a, b);
    if (from_ck && row < p.ckpt_rows) load_any2(p.ckpt, base + static_cast<i64>(r) * D + c, p.ckpt_type, a, b);
    st[j] = a;
    st[j + 1] = b;
  }
}
// PH 5: the span's end state from a zero seed (value rows: H) or from the identity with U = 0 (transition rows: M),
// to the span's H block (fp32) or M block (bf16, in its first half), as gdn_bwd_fwd_summary writes them, which
// gdn_bwd_span_fixup reads.
__device__ __forceinline__ void bwd_span_summary_out(const GdnParams& p, const float (&st)[64], i64 seq, i64 span,
                                                     i64 h, int v0, int fr, int fc, bool mrows) {
  float* dst = bwd_span_block(p, seq, span, h, kSpanH) + static_cast<i64>(v0) * D;
  u16* dm = reinterpret_cast<u16*>(bwd_span_block(p, seq, span, h, kSpanM)) + static_cast<i64>(v0) * D;
#pragma unroll
  for (int j = 0; j < 64; j += 2) {
    const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
    if (mrows) st_bf2(dm + static_cast<i64>(r) * D + c, st[j], st[j + 1]);
    else store_f2(dst + static_cast<i64>(r) * D + c, st[j], st[j + 1]);
  }
  if (GDN_WALK_SKIP && mrows && v0 == 0 && fr == 0 && fc == 0)
    put_span_m_flag(reinterpret_cast<u16*>(bwd_span_block(p, seq, span, h, kSpanM)), 0u);
}

// The vanishing-transition bound's share of a beta b (as the kernels form it): 0.02 where b > 1 (|k|^2 of a bf16 k
// up to 1 + 2^-7), `bad` set where b lies outside [0, 2] (NaN too), where the bound does not hold.
__device__ __forceinline__ float beta_bound_term(float b, float& bad) {
  if (!(b >= 0.f && b <= 2.f)) bad = 1.f;
  return b > 1.f ? 0.02f : 0.f;
}
// Token tok's term of the bound on head h: its natural-log gate plus its beta's share.
__device__ __forceinline__ float token_bound_term(const GdnParams& p, i64 tok, i64 h, float& bad) {
  float gl, b;
  gate_beta(p, tok, h, gl, b);
  return gl + beta_bound_term(b, bad);
}
// A chain split's span transition M (its rows' CTA: PH 2, PH 5) known from the gates and betas alone to be zero in
// bf16. With k l2-normalised in the kernel and beta in [0, 2], a token's transition e^g (I - beta k k^T) has norm at
// most e^g (k rounded to bf16 has |k|^2 <= 1 + 2^-7, so e^(g + 0.02) where beta > 1), so the span's M has norm at most
// e^(sum), and under a sum below -200 every entry of M is below 1.4e-87, whose bf16 (least subnormal 9.2e-41) is 0:
// what the span's chunks would compute and store, as zeros without running them. Gates in long sequences with
// strong decay (g ~ -0.5 a token: ~ -1000 over 2048 tokens) do that; weak decay runs the span as before. A NaN
// gate or beta, or one outside the bound's rule, runs it too. Every thread of the CTA calls it (two barriers; `red`
// 32 floats of shared memory the pipeline has not taken yet).
__device__ __forceinline__ bool span_transition_vanishes(const GdnParams& p, i64 bos, i64 tb, i64 te, i64 h,
                                                         float* red) {
  if (!(p.flags & kFlagL2Norm)) return false;  // uniform: |k| unbounded
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = static_cast<int>(blockDim.x >> 5);
  float sum = 0.f, bad = 0.f;
  for (i64 t = tb + threadIdx.x; t < te; t += blockDim.x) sum += token_bound_term(p, bos + t, h, bad);
  sum = warp_sum(sum);
  bad = warp_sum(bad);
  if (lane == 0) red[warp] = sum, red[16 + warp] = bad;
  __syncthreads();
  float tot = 0.f, nbad = 0.f;
  for (int w = 0; w < nw; ++w) tot += red[w], nbad += red[16 + w];
  __syncthreads();  // every thread read red before the pipeline takes its bytes
  return nbad == 0.f && tot < -200.f;  // false for a NaN sum
}
#ifndef GDN_BETA_GUARD
// 1 (the builds "_g" of the unsplit prefill, PIPELINE_ARCH 4 without use_beta_sigmoid; la_engine.h): the fp16
// inverse's domain checked at run time, a (sequence, head) at a time. The fp16 build's gate warps check each beta as
// they form it (half_gates) and set a flag in shared memory (r3::kRGuard) where one leaves [0, 2] or is NaN; the
// state side reads it after the last chunk's FULL barrier (every chunk's gates were formed before the auxiliary
// side's arrival there) and writes the pair's verdict word to p.guard: 1, and it returns without writing the final
// state (its O rows are the fallback's to overwrite); else 0 and it writes the final state as always. The fp32 build
// launched next with kFlagGuardRedo runs only the pairs marked 1 (every other CTA returns at once), so each pair's
// outputs come from the inverse its betas allow. Nothing the fallback reads (q, k, v, the gates, the initial state)
// is written by the fp16 build of a marked pair: the final state (in place or a pool row) is its only state store.
// 0: no guard (every other build).
#define GDN_BETA_GUARD 0
#endif
#ifndef GDN_SPAN_TAIL
#define GDN_SPAN_TAIL 1
#endif
// GDN_SPAN_TAIL's cut, for every thread of the CTA from thread 0's scan of the per-chunk bound terms red[0 .. n) (NaN:
// no bound through that chunk): kFromEnd, the latest chunk c >= 1 whose suffix [c, n) sums below -200 (0 if none);
// else the earliest count k < n whose prefix [0, k) does (n if none). Three barriers (the first publishes red); red[n]
// carries the answer.
template <bool kFromEnd>
__device__ __forceinline__ int vanishing_cut(float* red, int n) {
  __syncthreads();
  if (threadIdx.x == 0) {
    int cut = kFromEnd ? 0 : n;
    float sum = 0.f;
    for (int i = 0; i + 1 < n; ++i) {
      const int c = kFromEnd ? n - 1 - i : i;
      sum += red[c];
      if (!(sum == sum)) break;  // NaN: no bound past this chunk
      if (sum < -200.f) {
        cut = kFromEnd ? c : c + 1;
        break;
      }
    }
    red[n] = __int_as_float(cut);
  }
  __syncthreads();
  const int cut = __float_as_int(red[n]);
  __syncthreads();  // every thread read red before the pipeline takes its bytes
  return cut;
}
// GDN_SPAN_TAIL (1, the engine's since 2026-12-06; 0: every chunk of the span): a chain split's value-row span
// summary (H, PH 2 / 5) runs only the span's last chunks, from the latest chunk c whose suffix [c, end) has gates
// summing below -200 (span_transition_vanishes' bound, chunk by chunk: under l2norm with beta in [0, 2] the suffix's
// transition has norm below 1.4e-87). The state at c enters H only through that transition, so the truncated H
// differs from the whole span's by at most 1.4e-87 of that state's norm, far below fp32's rounding of either (both
// are the exact H within rounding; bitwise equal unless a value lies within 1e-80 of a rounding boundary). Strong
// decay (the benchmarks' logsigmoid gates: ~ -50 a chunk) runs about four chunks of a span instead of all of it.
// A NaN gate or a beta outside [0, 2] in a chunk stops the suffix there. H100, with GDN_WALK_SKIP
// (bench/results/2026-12-06-gdn-split-tail-h100.txt): the summaries of the 2/8, 1 x 32768 cell at spans of 32
// 130.8 -> 42.5 us, the cell 0.335 -> 0.232 ms (strong decay); with weak decay (nothing vanishes) 1.01-1.03x, the
// cost of the gates' scan. Every thread of the CTA calls it (three
// barriers; `red` span_chunks + 1 floats of shared memory the pipeline has not taken yet).
__device__ __forceinline__ int span_tail_start(const GdnParams& p, i64 bos, i64 tb, i64 te, i64 h, float* red) {
  if (!(p.flags & kFlagL2Norm)) return 0;  // uniform: |k| unbounded
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = static_cast<int>(blockDim.x >> 5);
  const int nch = static_cast<int>((te - tb + C - 1) / C);
  for (int c = warp; c < nch; c += nw) {  // chunk c's sum, NaN where a beta breaks the bound
    float sum = 0.f, bad = 0.f;
    for (int j = lane; j < C; j += 32) {
      const i64 t = tb + static_cast<i64>(c) * C + j;
      if (t >= te) break;
      sum += token_bound_term(p, bos + t, h, bad);
    }
    sum = warp_sum(sum);
    bad = warp_sum(bad);
    if (lane == 0) red[c] = bad == 0.f ? sum : __int_as_float(0x7fc00000);
  }
  return vanishing_cut<true>(red, nch);
}
// The span's M block as zeros (bf16, D x D from m), the CTA's threads 16 bytes a store.
__device__ __forceinline__ void zero_span_m16(u16* m) {
  for (int e = static_cast<int>(threadIdx.x); e < D * D / 8; e += static_cast<int>(blockDim.x))
    reinterpret_cast<uint4*>(m)[e] = make_uint4(0u, 0u, 0u, 0u);
}

// PH 4 (gdn_bwd_fwd_fused): the forward pass with no O, from the initial state (dense [N, HO, D, D] rows); per chunk
// the state side stores S^T at the chunk's start and Vn (as gdn_bwd_fwd_scan), forms Wn = -T_k K (an m64n64k64
// wgmma a warpgroup; the auxiliary side puts T_k = T diag(beta e^gamma ik) in the product stage's P tile, which
// holds nothing else in this form) and copies Qe and Kd out of the row stage; the auxiliary side forms P unscaled
// (to the block directly), T (to the block) and e^gamma_C (as gdn_bwd_prep). q rows load as for O. The scale is 1 in
// this form (P and eg carry none: the backward's products take it).
// PH 6 (gdn_bwd_fwd_span_fused): PH 4 over one span of a chain split, from its seed (the span's chunks at their slots
// in the sequence). PH 5 (gdn_bwd_fwd_summary_fused): PH 2's span summaries (no q, nothing stored per chunk) to the
// backward's span blocks.
template <int PH>
__device__ __forceinline__ void ws3_pass(const GdnParams& p, unsigned char* smem_raw) {
  using namespace r3;
  constexpr bool kOut = PH == 0 || PH == 3;
  constexpr bool kSum = PH == 1 || PH == 2 || PH == 5;
  constexpr bool kBwd = PH == 4 || PH == 6;  // gdn_bwd's forward recompute (above), whole or a span of it
  // PH 7 (GDN_BWD_ONEPASS, a trial): the one-pass backward's first pass — PH 4's chunk steps (the same state
  // arithmetic, so the same bits) storing only S^T at each chunk's start and T: no q rows, no P, no other tile.
  constexpr bool kSt = PH == 7;
  constexpr bool kQ = kOut || kBwd;  // q rows loaded, P formed
  constexpr bool kH = GDN_WS3_F16INV && !kBwd && !kSt;  // the inverse on fp16 tiles (gdn_ws_inverse.cuh; a trial)
  const u32 raw = static_cast<u32>(__cvta_generic_to_shared(smem_raw));
  unsigned char* base = smem_raw + ((1024u - (raw & 1023u)) & 1023u);
  const u32 sb = raw + ((1024u - (raw & 1023u)) & 1023u);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wg = warp >> 2, wi = warp & 3;
  const int fr = 16 * wi + (lane >> 2), fc = 2 * (lane & 3);
  const i64 h = blockIdx.y;
  const PassRange rg = pass_range<PH>(p);
  if (!rg.run) return;
  const i64 seq = rg.seq, bos = rg.bos, te = rg.te;
  // GDN_SPAN_TAIL: a value-row span summary from its vanishing suffix's first chunk (x = 0: uniform in the CTA).
  float* const red = reinterpret_cast<float*>(base);
  // GDN_BETA_GUARD's fp16 build (above): its gate warps check each beta, the state side writes the verdict.
  constexpr bool kGuard = GDN_BETA_GUARD && PH == 0 && kH;
  static_assert(!kGuard || GDN_WS3_GATES >= 2, "the guard checks the betas where the gate warps form them");
  unsigned* const guard_flag = reinterpret_cast<unsigned*>(base + kRGuard);
#if GDN_BETA_GUARD
  if constexpr (PH == 0) {  // the fallback runs only the pairs the fp16 build marked
    if ((p.flags & kFlagGuardRedo) && reinterpret_cast<const unsigned*>(p.guard)[seq * p.ho + h] == 0u) return;
  }
#endif
  const i64 tb = rg.tb + ((PH == 2 || PH == 5) && GDN_SPAN_TAIL && blockIdx.x == 0
                              ? static_cast<i64>(C) * span_tail_start(p, bos, rg.tb, te, h, red)
                              : 0);
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const int nch = static_cast<int>((te - tb + C - 1) / C);
  const i64 srow = kOut ? state_row(p, seq) : seq;
  const bool mrows = kSum && blockIdx.x == 1;
  if constexpr (PH == 2 || PH == 5) {
    if (mrows && span_transition_vanishes(p, bos, tb, te, h, red)) {
      u16* const m = PH == 2 ? span_m16(p, seq, rg.span, h)
                             : reinterpret_cast<u16*>(bwd_span_block(p, seq, rg.span, h, kSpanM));
      if (!GDN_WALK_SKIP) zero_span_m16(m);
      else if (tid == 0) put_span_m_flag(m, 1u);  // the walk skips the product (no M stored)
      return;
    }
  }
  const float scale = kBwd ? 1.f : static_cast<float>(p.scale);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  auto rows_at = [&](int c) -> u32 { return sb + static_cast<u32>(c % 3) * kRBytes; };
  auto rows_ptr = [&](int c) -> unsigned char* { return base + static_cast<u32>(c % 3) * kRBytes; };
  auto prod_at = [&](int c) -> u32 { return sb + kP0 + static_cast<u32>(c & 1) * kPBytes; };
  auto prod_ptr = [&](int c) -> unsigned char* { return base + kP0 + static_cast<u32>(c & 1) * kPBytes; };
  if (tid == 0) {
#pragma unroll
    for (int r = 0; r < 3; ++r) opgraph_gemm::bar_init(sb + static_cast<u32>(r) * kRBytes + kRMbar, 256);
    if (kGuard) *guard_flag = 0u;
    opgraph_gemm::bar_init_fence();
  }
  __syncthreads();

  if (wg == 2) {
    // ---------------- the auxiliary side ----------------
    setmaxnreg_dec<120>();
    if (GDN_WS_START_SYNC) __syncthreads();
    const int a = tid - 256;
    float* const lf = reinterpret_cast<float*>(base + kXLf);
    float* const tf = reinterpret_cast<float*>(base + kXTf);
    float g_raw[2] = {0.f, 0.f}, b_raw[2] = {0.f, 0.f};  // warp 8: tokens 2 lane, 2 lane + 1 of a chunk
    // GDN_WS3_GATES 2: warps 10, 11 form the gates (in the diagonal-block phase), token gj each lane.
    constexpr bool kHalves = GDN_WS3_GATES >= 2;
    const bool gate_warp = wi >= 2;
    const int gj = 32 * (wi - 2) + lane;
    if (kHalves && nch > 0 && gate_warp) {  // chunk 0's gates into parity 0; chunk 1's loaded
      gate_raw1(p, bos, tb, te, h, gj, g_raw[0], b_raw[0]);
      const float bb = half_gates(p, g_raw[0], b_raw[0], static_cast<int>(te - tb < C ? te - tb : C), h, gj, lane,
                                  reinterpret_cast<float*>(base + kXGam), reinterpret_cast<float*>(base + kXBet));
      if (kGuard && !(bb >= 0.f && bb <= 2.f)) *guard_flag = 1u;
      if (nch > 1) gate_raw1(p, bos, tb + C, te, h, gj, g_raw[0], b_raw[0]);
    }
    // Chunk 0's halves written before threads 32..63 read them at its top (later chunks' were written a chunk
    // ahead, behind the inverse's barriers). Without it, test_la_gpu's safe-gate case with a_log and dt_bias
    // (the longest gate path) read chunk 0's gates unwritten on the H200 (fused-ws-split8's final state).
    if (kHalves && nch > 0) aux_sync();
    if (!kHalves && nch > 0 && wi == 0) load_gates(p, bos, tb, te, h, lane, g_raw, b_raw);
    if (GDN_WS3_GATES == 1 && nch > 0 && wi == 0) {  // chunk 0's gates into parity 0; chunk 1's loaded
      chunk_gates(p, g_raw, b_raw, static_cast<int>(te - tb < C ? te - tb : C), h, lane,
                  reinterpret_cast<float*>(base + kXGam), reinterpret_cast<float*>(base + kXBet));
      if (nch > 1) load_gates(p, bos, tb + C, te, h, lane, g_raw, b_raw);
    }
    if (GDN_WS3_EPIW && kOut) {  // both product stages' P tiles: lp_epilogue<kOut, WI> never writes above the diagonal
#pragma unroll
      for (int k = 0; k < 2; ++k)
#pragma unroll
        for (int i = 0; i < 4; ++i)
          *reinterpret_cast<uint4*>(prod_ptr(k) + kPP + 16 * a + 2048 * i) = make_uint4(0u, 0u, 0u, 0u);
    }
    WS_CLK_DECL
    for (int c = 0; c < nch; ++c) {
      const i64 c0 = tb + static_cast<i64>(c) * C;
      const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
      const u32 rs = rows_at(c), ps = prod_at(c);
      const float* const iq_tok = reinterpret_cast<const float*>(rows_ptr(c) + kRIq);
      const float* const ik_tok = reinterpret_cast<const float*>(rows_ptr(c) + kRIk);
      unsigned char* const pp = prod_ptr(c);
      float* const eg_tok = reinterpret_cast<float*>(pp + kPEg);
      float* const kf_tok = reinterpret_cast<float*>(pp + kPKf);
      float* const ke_tok = reinterpret_cast<float*>(pp + kPKe);
      const u32 sQ = rs + kRQ, sK = rs + kRK;
      const u32 gb = static_cast<u32>(c & 1) * 4u * C;
      float* const gam = reinterpret_cast<float*>(base + kXGam + gb);
      float* const bet = reinterpret_cast<float*>(base + kXBet + gb);
      if (GDN_WS3_GATES == 0 && wi == 0) {
        chunk_gates(p, g_raw, b_raw, n, h, lane, gam, bet);
        if (c + 1 < nch) load_gates(p, bos, c0 + C, te, h, lane, g_raw, b_raw);
      }
      WS_CLK(0);
      opgraph_gemm::bar_wait(rs + kRMbar, static_cast<u32>((c / 3) & 1));
      fence_async_shared();
      float accl[32], accp[32];
      if (kHalves && a >= 32 && a < 64) gam[a] += gam[31];  // the second half's prefix sums
      aux_sync();  // gam, bet
      WS_CLK(3);
      const float gc = gam[C - 1];
      const i64 sh = (bos / C + seq + tb / C + c) * p.ho + h;  // PH 4, 6: the chunk's slot and head (backward's ws)
      if (a < C) {
        const float gr = gam[a], eg = exp2f(gr);
        eg_tok[a] = scale * eg * iq_tok[a];
        kf_tok[a] = ik_tok[a] * exp2f(gc - gr);
        ke_tok[a] = eg * ik_tok[a];
        if (kBwd) reinterpret_cast<float*>(base + kXBe)[a] = bet[a] * eg * ik_tok[a];
      }
      if (a == 0) {
        *reinterpret_cast<float*>(pp + kPGc) = exp2f(gc);
        if (kBwd) bwd_egc(p)[sh] = exp2f(gc);
      }
      lp_issue<kQ>(accl, accp, sK, sQ);
      // GDN_WS3_GATES: chunk c + 1's gates into the other parity's gamma / beta (chunk c - 1's: every
      // aux thread left them before this chunk's aux_sync above), chunk c + 2's loaded.
      if (GDN_WS3_GATES == 1 && wi == 0 && c + 1 < nch) {
        const u32 gb1 = static_cast<u32>((c + 1) & 1) * 4u * C;
        chunk_gates(p, g_raw, b_raw, static_cast<int>(te - c0 - C < C ? te - c0 - C : C), h, lane,
                    reinterpret_cast<float*>(base + kXGam + gb1), reinterpret_cast<float*>(base + kXBet + gb1));
        if (c + 2 < nch) load_gates(p, bos, c0 + 2 * C, te, h, lane, g_raw, b_raw);
      }
      wgmma_wait<0>();
      pin<32>(accl);
      if (kQ) pin<32>(accp);
      // GDN_WS3_GATES 2: chunk c + 1's gates into the other parity (chunk c - 1's: read last by its T_v copy,
      // before this chunk's barriers), chunk c + 2's loaded.
      auto next_gates = [&] {
        // (GATES 2: only threads 64..127 call it, in the diagonal-block phase.)
        if (!kHalves || c + 1 >= nch) return;
        const u32 gb1 = static_cast<u32>((c + 1) & 1) * 4u * C;
        const float bb =
            half_gates(p, g_raw[0], b_raw[0], static_cast<int>(te - c0 - C < C ? te - c0 - C : C), h, gj, lane,
                       reinterpret_cast<float*>(base + kXGam + gb1), reinterpret_cast<float*>(base + kXBet + gb1));
        if (kGuard && !(bb >= 0.f && bb <= 2.f)) *guard_flag = 1u;
        if (c + 2 < nch) gate_raw1(p, bos, c0 + 2 * C, te, h, gj, g_raw[0], b_raw[0]);
      };
      if constexpr (kBwd) {  // P unscaled, to the block (the state side forms no O)
        lp_epilogue<true, -1, true>(accl, accp, gam, bet, ik_tok, iq_tok, scale, lf, pp + kPP, fr, fc,
                                    bwd_block(p, sh) + kOffP);
      } else if (GDN_WS3_EPIW && kOut) {  // the prefill and span scan forms (the summary forms spill with four copies)
#define GDN_WS3_EPI_W(W)                                                                                               \
  lp_epilogue<kOut, W, false, kH>(accl, accp, gam, bet, ik_tok, iq_tok, scale, lf, pp + kPP, fr, fc)
        switch (wi) {
          case 0: GDN_WS3_EPI_W(0); break;
          case 1: GDN_WS3_EPI_W(1); break;
          case 2: GDN_WS3_EPI_W(2); break;
          default: GDN_WS3_EPI_W(3); break;
        }
#undef GDN_WS3_EPI_W
      } else {
        lp_epilogue<kOut, -1, false, kH>(accl, accp, gam, bet, ik_tok, iq_tok, scale, lf, pp + kPP, fr, fc);
      }
      aux_sync();
      WS_CLK(1);
#if GDN_WS_CLOCK
      auto tick = [&](int i) { WS_CLK(i); };
#else
      const NoTick tick{};
#endif
      inverse_aux<kH>(lf, tf, a, tick, next_gates);
      WS_CLK(2);
      if constexpr (kBwd) {  // T_k into the P tile (the state side's Wn), T to the block
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) t_copy<true>(a + 128 * hh, tf, sb + kXBe, sb + kXBet + gb, ps + kPP, ps + kPTv);
        bwd_store_t(tf, bwd_block(p, sh) + kOffT, a);
      } else {
        // T too (pass 2 forms no inverse), to the one-pass workspace's T region: [sh][C][C] from bwd_blocks
        if constexpr (kSt) bwd_store_t(tf, reinterpret_cast<u16*>(p.bwd_ws + p.bwd_blocks) + sh * C * C, a);
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          if constexpr (kH) t_copy_h(a + 128 * hh, reinterpret_cast<const u16*>(tf), sb + kXBet + gb, ps + kPTv);
          else t_copy<false>(a + 128 * hh, tf, 0u, sb + kXBet + gb, 0u, ps + kPTv);
        }
      }
      fence_async_shared();
      WS_CLK(5);
      nb_arrive(kBarFull + (c & 1), kWsThreads);
      WS_CLK(6);
    }
    WS_CLK_PRINT(a == 0, 0, nch);  // gates, L / P, the inverse's merges, ROWS wait, its diagonal blocks, T_v, arrive
    WS_CLK_PRINT(a == 64, 2, nch);  // the same slots for warp 10 (its diagonal-block phase: the next gates)
    WS_CLK_PRINT(a == 96, 3, nch);  // and warp 11
    return;
  }

  // ---------------- the state side (warpgroups 0 and 1) ----------------
  setmaxnreg_inc<192>();
  if (GDN_WS_START_SYNC) __syncthreads();
  const int v0 = 64 * wg;
  // Thread tid's row lr and 16-byte pieces lq + 4 i of every tile (the four lanes of a row together:
  // quarter_norms' shuffles).
  const int lr = tid >> 2, lq = tid & 3;
  u32 piece[4];
  quarter_row_pieces(lr, lq, piece);
  auto request_rows = [&](int c) {
    const u32 at = rows_at(c);
    request_quarter_row<kQ>(p, at + kRQ, at + kRK, at + kRV, piece, bos, tb + static_cast<i64>(c) * C, te, lr, lq, hq,
                            hk, hv);
    cp_async_commit();
  };
  // Chunk c's rows landed (this thread's copies; the caller waited): norms, then ROWS(c % 3).
  auto publish_rows = [&](int c) {
    const u32 at = rows_at(c);
    float iq, ik;
    quarter_norms(at + kRQ, at + kRK, at + kRV, piece, kQ, l2, iq, ik);
    if (lq == 0) {
      float* const rp = reinterpret_cast<float*>(rows_ptr(c));
      rp[kRIq / 4 + lr] = iq;
      rp[kRIk / 4 + lr] = ik;
    }
    fence_async_shared();
    opgraph_gemm::bar_arrive(at + kRMbar);
  };
  for (int c = 0; c < nch && c < 3; ++c) request_rows(c);
  float st[64];
  if constexpr (PH == 6)
    bwd_span_seed(p, st, seq, rg.span, h, v0, fr, fc);
  else
    pass_state_in<PH>(p, st, srow, seq, rg.span, h, v0, fr, fc, mrows);
  cp_async_wait_all();
  for (int c = 0; c < nch && c < 2; ++c) publish_rows(c);
  WS_CLK_DECL
  // state_checkpoints (the forward and the span scans' value rows): the sequence's first row.
  const bool ckpt = GDN_CKPT && kOut && p.ckpt != 0;
  const i64 ck_row0 = ckpt ? checkpoint_row0(p, seq, p.ckpt_every) : 0;
  for (int c = 0; c < nch; ++c) {
    const i64 c0 = tb + static_cast<i64>(c) * C;
    const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
    const u32 rs = rows_at(c), ps = prod_at(c);
    const unsigned char* const pp = prod_ptr(c);
    const float* const eg_tok = reinterpret_cast<const float*>(pp + kPEg);
    const float* const kf_tok = reinterpret_cast<const float*>(pp + kPKf);
    const float* const ke_tok = reinterpret_cast<const float*>(pp + kPKe);
    nb_sync(kBarFull + (c & 1), kWsThreads);
    WS_CLK(0);
    float o[32];
    // Chunk c + 2's rows landed (requested after chunk c - 1, or before the loop): their norms, ROWS.
    auto rows_ahead = [&] {
      if (c + 2 < nch) {
        cp_async_wait_all();
        publish_rows(c + 2);
      }
    };
#if GDN_WS_CLOCK
    auto tick = [&](int i) { WS_CLK(i); };
#else
    const NoTick tick{};
#endif
    auto mid = [&] {
      if (GDN_WS3_NORMMID) rows_ahead();
    };
    if constexpr (kBwd) {
      const i64 sh = (bos / C + seq + tb / C + c) * p.ho + h;
      if (GDN_BWD_FWD_STAGE)  // S^T at the chunk's start
        bwd_store_staged<4, false>(st, sb + kXSt + 4096u * static_cast<u32>(wg), bwd_st(p) + sh * D * D +
                                   static_cast<i64>(v0) * D, wg, wi, lane, tid);
      else
        bwd_store_state(st, bwd_st(p) + sh * D * D + static_cast<i64>(v0) * D, fr, fc);
      state_chunk_x<false, true>(st, o, false, rs + kRV + static_cast<u32>(wg) * kPanel64, ps + kPTv, rs + kRK,
                                 rs + kRQ, ps + kPP, rs + kRK, kf_tok, eg_tok, ke_tok,
                                 *reinterpret_cast<const float*>(pp + kPGc), fc, wi, lane, tick, mid,
                                 [&](const float (&vt)[32]) {
#pragma unroll
                                   for (int j = 0; j < 32; ++j) o[j] = vt[j];
                                 });
      // Vn; not in the span recompute of GDN_BWD_ONEPASS's build (the one-pass form's split: its pass 2 forms Vn on
      // chip, its workspace has no Vn region)
      if constexpr (!(GDN_BWD_ONEPASS && PH == 6))
        bwd_store_vn(o, rs + kRV + static_cast<u32>(wg) * kPanel64, bwd_vn(p) + sh * C * D, wg, wi, lane, tid, v0);
      // Wn = -T_k K, this warpgroup's 64 columns (o is free again), while Qe and Kd are copied out.
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < C / 16; ++kk)
        MmaBt<64>::mma(o, kdesc(ps + kPP, kk, kPanel64), mdesc(rs + kRK + static_cast<u32>(wg) * kPanel64, kk), kk > 0);
      wgmma_commit();
      u16* const blk = bwd_block(p, sh);
      bwd_store_qk(rs + kRQ, rs + kRK, eg_tok, kf_tok, blk, tid);
      wgmma_wait<0>();
      pin<32>(o);
      if (GDN_BWD_FWD_STAGE) {
        bwd_store_staged<2, true>(o, sb + kXSt + 4096u * static_cast<u32>(wg), blk + kOffWn + 64 * wg, wg, wi, lane,
                                  tid);
      } else {
#pragma unroll
        for (int j = 0; j < 32; j += 2) {
          const int r = fr + 8 * ((j & 3) >> 1), cc = 64 * wg + 8 * (j >> 2) + fc;
          *reinterpret_cast<u32*>(blk + kOffWn + r * D + cc) = pack_bf16(-o[j], -o[j + 1]);
        }
      }
    } else {
      if constexpr (kSt) {  // S^T at the chunk's start, as PH 4 stores it
        const i64 sh = (bos / C + seq + tb / C + c) * p.ho + h;  // the chunk's slot and head, as PH 4's
        u16* const dst = bwd_st(p) + sh * D * D + static_cast<i64>(v0) * D;
        if (GDN_BWD_FWD_STAGE)
          bwd_store_staged<4, false>(st, sb + kXSt + 4096u * static_cast<u32>(wg), dst, wg, wi, lane, tid);
        else
          bwd_store_state(st, dst, fr, fc);
      }
      state_chunk_x<kOut, true>(st, o, mrows, rs + kRV + static_cast<u32>(wg) * kPanel64, ps + kPTv, rs + kRK, rs + kRQ,
                                ps + kPP, rs + kRK, kf_tok, eg_tok, ke_tok, *reinterpret_cast<const float*>(pp + kPGc),
                                fc, wi, lane, tick, mid);
    }
    WS_CLK(1);
    // A full chunk ending on a multiple of the cadence (tokens from the sequence's start): its state is a checkpoint.
    if (ckpt && n == C && (c0 + C) % p.ckpt_every == 0)
      store_checkpoint(p, st, ck_row0 + (c0 + C) / p.ckpt_every - 1, h, v0, fr, fc);
    if (kOut) store_o(p, o, rs + kRV + static_cast<u32>(wg) * kPanel64, wg, wi, lane, tid, fr, fc, n, bos, c0, h, v0);
    WS_CLK(2);
    if (!GDN_WS3_NORMMID) rows_ahead();
    if (c + 3 < nch) {
      nb_sync(kBarState, 256);  // both state warpgroups have left row stage c % 3
      request_rows(c + 3);
    }
    WS_CLK(3);
  }
  WS_CLK_PRINT(tid == 0, 1, nch);  // FULL wait, state_chunk, store_o, norms + requests
  if constexpr (kGuard) {  // every chunk's betas were checked before the last FULL arrive (or none: nch == 0)
    const bool bad = *reinterpret_cast<volatile const unsigned*>(guard_flag) != 0u;
    if (tid == 0) reinterpret_cast<unsigned*>(p.guard)[seq * p.ho + h] = bad ? 1u : 0u;
    if (bad) return;  // the fp32 fallback writes the pair's O and final state
  }
  if constexpr (PH == 5)
    bwd_span_summary_out(p, st, seq, rg.span, h, v0, fr, fc, mrows);
  else
    pass_state_out<PH>(p, st, srow, seq, rg.span, h, v0, fr, fc, mrows, rg.last_span);
}

}  // namespace ws
}  // namespace opgraph_gdn
