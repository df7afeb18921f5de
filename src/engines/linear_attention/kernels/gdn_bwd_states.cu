// linear_attention/kernels/gdn_bwd_states.cu — the Gated DeltaNet backward's
// state-side kernels: gdn_bwd_prep (the chunks' state-free tiles) and the two
// sequential passes, gdn_bwd_fwd_scan (S at every chunk's start, Vn) and
// gdn_bwd_rev_scan (dS, dVn, d_initial_state). gdn_bwd_common.cuh for the whole
// backward and what the sources share; gdn_bwd_grads.cu for the rest.
#include "linear_attention/kernels/gdn_bwd_common.cuh"
#include "linear_attention/kernels/gdn_prep.cuh"

using namespace opgraph_gdn;
using namespace opgraph_gdn::bwd;

// ---------------------------------------------------------------------------
// gdn_bwd_prep: the forward's gdn_prefill_prep (gdn_prep.cuh) on the backward's
// argument, into the backward's workspace.
namespace opgraph_gdn {
static_assert(sizeof(PrepSmem) == gdn_bwd_prep_smem_bytes(D), "gdn_bwd_prep_smem_bytes disagrees with PrepSmem");
__device__ __forceinline__ u16* prep_block(const GdnBwdParams& p, i64 slot, i64 h) {
  return bwd::ws16(p, p.ws_blocks) + (slot * p.ho + h) * bwd::kBlockElems;
}
__device__ __forceinline__ float* prep_egc(const GdnBwdParams& p) { return bwd::ws32(p, p.ws_egc); }
}  // namespace opgraph_gdn

// Two CTAs a multiprocessor (at D = 128 in 128 registers, without spilling).
extern "C" __global__ void __launch_bounds__(kThreads, 2) gdn_bwd_prep(const GdnBwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  prep_chunk<false, true>(p, smem_raw);
}

// ---------------------------------------------------------------------------
// The two sequential passes: one CTA per (V slice of BV = 64, head, sequence).
// The state slice (S^T or dS^T rows v0 .. v0 + 63, all D columns) lives in fp32
// registers as mma fragments (warp tile 16 rows x D/2 columns) with a bf16 copy
// in shared memory (the B operand of the next products).
namespace opgraph_gdn {
namespace bwd {
// Two stages of each chunk's tiles: the next chunk's land (cp.async) while this one computes.
struct FwdStage {
  u16 wn[C * LDD];
  u16 kd[C * LDD];
  u16 u[C * LDB];  // U's columns v0 .. v0 + BV
};
struct FwdScanSmem {
  FwdStage st[2];
  u16 s[BV * LDD];
  u16 vn[C * LDB];
};
static_assert(sizeof(FwdScanSmem) == gdn_bwd_fwd_scan_smem_bytes(D), "gdn_bwd_fwd_scan_smem_bytes disagrees");
struct RevStage {
  u16 qe[C * LDD];
  u16 wn[C * LDD];
  u16 kd[C * LDD];
  u16 p[C * LDC];
  // The chunk's dO rows (this CTA's BV columns) as the caller stored them (bf16,
  // fp16 or fp32: up to 4 bytes an element), rows past the chunk zero-filled.
  alignas(16) unsigned char dor[C * BV * 4];
  u16 s[BV * LDD];  // S^T at the chunk's start, this CTA's rows (fwd_scan's), for <S^T, dS^T>
};
struct RevScanSmem {
  RevStage st[2];
  u16 ds[BV * LDD];
  u16 dob[C * LDB];  // scale * dO [C][BV]
  u16 dvn[C * LDB];
};
static_assert(sizeof(RevScanSmem) == gdn_bwd_rev_scan_smem_bytes(D), "gdn_bwd_rev_scan_smem_bytes disagrees");
}  // namespace bwd
}  // namespace opgraph_gdn

namespace opgraph_gdn {
namespace bwd {
// The span's M as the walk takes it (fixup_walk, gdn_common.cuh): bf16 [k][n] in its block's first half.
__device__ __forceinline__ u16* span_m16(const GdnBwdParams& p, i64 seq, i64 span, i64 h) {
  return reinterpret_cast<u16*>(span_block(p, seq, span, h, kSpanM));
}
}  // namespace bwd
}  // namespace opgraph_gdn

// The forward scan in three forms (PH), one CTA per (V slice, head, sequence [x span]):
//  0  gdn_bwd_fwd_scan: the whole sequence from initial_state, S^T and Vn stored per chunk.
//  1  gdn_bwd_fwd_summary: a chain split's first pass over one span's chunks, nothing stored per
//     chunk: slices 0 .. D/BV-1 are value rows from a zero seed (their end state is the span's H),
//     slices D/BV .. rows of its transition M from the identity with U = 0 (the update
//     X <- X (e^gC I + Wn^T Kd) + U^T Kd keeps rows independent). The last span's H seeds
//     nothing (those CTAs exit); every span's M is kept (the reverse pass takes M^T), none
//     where a sequence has one span. Under kBwdFlagSummary (gdn_summary_bwd, one span a sequence) only
//     the M rows run, and M goes to the transition output.
//  2  gdn_bwd_fwd_span: one span from its seed (gdn_bwd_span_fixup's; span 0's is the initial
//     state), S^T and Vn stored per chunk as PH 0. Under kBwdFlagCkpt the spans are ckpt_chunks long and
//     span j > 0 starts from the sequence's checkpoint j - 1 (no fix-up; PH 1 runs M rows only).
template <int PH>
__device__ __forceinline__ void fwd_scan_pass(const GdnBwdParams& p, unsigned char* smem_raw) {
  FwdScanSmem& sm = *reinterpret_cast<FwdScanSmem*>(smem_raw);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  constexpr int kVSlices = D / BV;
  const bool mrows = PH == 1 && static_cast<int>(blockIdx.x) >= kVSlices;  // rows of M, not of S^T
  const i64 v0 = static_cast<i64>(mrows ? blockIdx.x - kVSlices : blockIdx.x) * BV, h = blockIdx.y;
  const bool ckpt = (p.flags & kBwdFlagCkpt) != 0;
  const i64 spans_z = PH == 2 && ckpt ? p.ckpt_spans : p.n_spans;
  const i64 seq = PH == 0 ? static_cast<i64>(blockIdx.z) : static_cast<i64>(blockIdx.z) / spans_z;
  const i64 span = PH == 0 ? 0 : static_cast<i64>(blockIdx.z) % spans_z;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 first = bos / C + seq;
  i64 cb, ce, nsp;
  if (!span_range<PH>(PH == 2 && ckpt ? p.ckpt_chunks : p.span_chunks, (len + C - 1) / C, span, cb, ce, nsp))
    return;
  // gdn_summary_bwd and the checkpoint-seeded split: M rows only (whole sequences for the summary).
  const bool summary = PH == 1 && (p.flags & kBwdFlagSummary) != 0;
  if (summary || (PH == 1 && ckpt) ? !mrows || (!summary && nsp == 1)
                                   : PH == 1 && (nsp == 1 || (!mrows && span == nsp - 1)))
    return;
  constexpr int NTS = D / 16;
  const int ms = 16 * (warp & 3), ns = (D / 2) * (warp >> 2);  // state tile: rows v, columns k
  const int m0 = 16 * (warp & 3), n0 = 32 * (warp >> 2);       // Vn tile: rows token, columns v
  float st[NTS][4];
  {
    // The seed: initial_state (PH 0; PH 2 span 0 under checkpoints), the fix-up's (PH 2), the sequence's
    // checkpoint span - 1 (PH 2 under checkpoints), zero (PH 1 value rows) or the identity (PH 1 M rows).
    const bool from_ck = PH == 2 && ckpt && span > 0;
    const bool from_init = (PH == 0 || (PH == 2 && ckpt && span == 0)) && (p.flags & kFlagHasInit) != 0;
    const bool from_fix = PH == 2 && !ckpt;
    const i64 base = (seq * p.ho + h) * D * D + v0 * D;
    const i64 ck_row = from_ck ? checkpoint_row0(p, seq, C * p.ckpt_chunks) + span - 1 : 0;
    const i64 ck_base = (ck_row * p.ho + h) * D * D + v0 * D;
    const float* seed = from_fix ? span_block(p, seq, span, h, kSpanSeed) + v0 * D : nullptr;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        float a = 0.f, b = 0.f;
        if (from_init) load_any2(p.initial_state, base + static_cast<i64>(v) * D + kk, p.init_type, a, b);
        if (from_ck && ck_row < p.ckpt_rows)  // the host's rule B6 keeps every row needed below ckpt_rows
          load_any2(p.checkpoints, ck_base + static_cast<i64>(v) * D + kk, p.ckpt_type, a, b);
        if (from_fix) load_f2(seed + static_cast<i64>(v) * D + kk, a, b);
        if (mrows) {
          a = v0 + v == kk ? 1.f : 0.f;
          b = v0 + v == kk + 1 ? 1.f : 0.f;
        }
        st[j][2 * hh] = a;
        st[j][2 * hh + 1] = b;
        st_bf2(&sm.s[v * LDD + kk], a, b);
      }
  }
  const float* egc = ws32(p, p.ws_egc);
  auto prefetch = [&](i64 ci, int buf) {
    const u16* blk = ws16(p, p.ws_blocks) + ((first + ci) * p.ho + h) * kBlockElems;
    copy_tile(sm.st[buf].wn, LDD, blk + kOffWn, D, C, D, tid);
    copy_tile(sm.st[buf].kd, LDD, blk + kOffKd, D, C, D, tid);
    if (!mrows) copy_tile(sm.st[buf].u, LDB, blk + kOffU + v0, D, C, BV, tid);
    cp_async_commit();
  };
  if (ce > cb) prefetch(cb, 0);
  int buf = 0;
  for (i64 ci = cb; ci < ce; ++ci, buf ^= 1) {
    const i64 sh = (first + ci) * p.ho + h;
    // S^T at the chunk's start (this CTA's rows), bf16.
    if (PH != 1) {
      u16* dst = ws16(p, p.ws_st) + sh * D * D + v0 * D;
#pragma unroll
      for (int j = 0; j < NTS; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
          st_bf2(&dst[static_cast<i64>(v) * D + kk], st[j][2 * hh], st[j][2 * hh + 1]);
        }
    }
    const float ec = egc[sh];
    cp_async_wait_all();
    __syncthreads();  // this chunk's tiles landed; the previous chunk's readers of the other stage are done
    if (ci + 1 < ce) prefetch(ci + 1, buf ^ 1);
    const FwdStage& sg = sm.st[buf];
    float cv[4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const u32 w = mrows ? 0u : lds32(&sg.u[(m0 + g8 + 8 * hh) * LDB + n0 + 8 * j + 2 * t4]);
        cv[j][2 * hh] = bf16_to_f32(static_cast<u16>(w));
        cv[j][2 * hh + 1] = bf16_to_f32(static_cast<u16>(w >> 16));
      }
    // Vn = U + Wn S.
    warp_mma<4, D>(cv, sg.wn + m0 * LDD, LDD, sm.s + n0 * LDD, LDD, lane);
    {
      u16* dst = ws16(p, p.ws_vn) + sh * C * D;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = m0 + g8 + 8 * hh, c = n0 + 8 * j + 2 * t4;
          st_bf2(&sm.vn[r * LDB + c], cv[j][2 * hh], cv[j][2 * hh + 1]);
          if (PH != 1) st_bf2(&dst[r * D + v0 + c], cv[j][2 * hh], cv[j][2 * hh + 1]);
        }
    }
    __syncthreads();  // Vn written; every read of S (the bf16 copy) done
    // S^T = exp(gamma_C) S^T + Vn^T Kd.
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) st[j][e] *= ec;
    warp_mma<NTS, C, true, true>(st, sm.vn + ms, LDB, sg.kd + ns, LDD, lane);
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        st_bf2(&sm.s[v * LDD + kk], st[j][2 * hh], st[j][2 * hh + 1]);
      }
  }
  if (summary) {
    // Row i of the identity became row i of M^T: M[kk][i] (dense [N, HO, K, K]).
    if (p.transition) {
      const i64 base = (seq * p.ho + h) * D * D + v0;
#pragma unroll
      for (int j = 0; j < NTS; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
          store_any(p.transition, base + static_cast<i64>(kk) * D + v, p.trans_type, st[j][2 * hh]);
          store_any(p.transition, base + static_cast<i64>(kk + 1) * D + v, p.trans_type, st[j][2 * hh + 1]);
        }
    }
  } else if (PH == 1) {  // H fp32; M bf16 (the walk's operand as it is: fixup_walk, gdn_common.cuh)
    float* dst = span_block(p, seq, span, h, kSpanH) + v0 * D;
    u16* dm = span_m16(p, seq, span, h) + v0 * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        if (mrows) st_bf2(dm + static_cast<i64>(v) * D + kk, st[j][2 * hh], st[j][2 * hh + 1]);
        else store_f2(dst + static_cast<i64>(v) * D + kk, st[j][2 * hh], st[j][2 * hh + 1]);
      }
    if (GDN_WALK_SKIP && mrows && v0 == 0 && threadIdx.x == 0) put_span_m_flag(span_m16(p, seq, span, h), 0u);
  }
}

GDN_PASS_ENTRY(gdn_bwd_fwd_scan, GdnBwdParams, 2, fwd_scan_pass, 0)
GDN_PASS_ENTRY(gdn_bwd_fwd_summary, GdnBwdParams, 2, fwd_scan_pass, 1)
GDN_PASS_ENTRY(gdn_bwd_fwd_span, GdnBwdParams, 2, fwd_scan_pass, 2)

// The reverse scan in three forms (PH), one CTA per (V slice, head, sequence [x span]):
//  0  gdn_bwd_rev_scan: the whole sequence from d_final_state; dS^T, dVn and <S^T, dS^T> stored
//     per chunk, d_initial_state at the end.
//  1  gdn_bwd_rev_summary: a chain split's first reverse pass over one span's chunks from a zero
//     dS^T at the span's end, nothing stored per chunk: dS^T at the span's start is the span's H'
//     (the true one is dS^T_end M^T + H', M the span's forward transition). Span 0 exits (its
//     start needs no seed). Under kBwdFlagSummary (gdn_summary_bwd, one span a sequence) every sequence
//     runs whole and its dS^T at the start is the output G.
//  2  gdn_bwd_rev_span: one span from its seed (gdn_bwd_span_fixup's; the last span's is
//     d_final_state), stores as PH 0; span 0 writes d_initial_state.
template <int PH>
__device__ __forceinline__ void rev_scan_pass(const GdnBwdParams& p, unsigned char* smem_raw) {
  RevScanSmem& sm = *reinterpret_cast<RevScanSmem*>(smem_raw);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const i64 v0 = static_cast<i64>(blockIdx.x) * BV, h = blockIdx.y;
  const i64 seq = PH == 0 ? static_cast<i64>(blockIdx.z) : static_cast<i64>(blockIdx.z) / p.n_spans;
  const i64 span = PH == 0 ? 0 : static_cast<i64>(blockIdx.z) % p.n_spans;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 first = bos / C + seq;
  const i64 nch = (len + C - 1) / C;
  i64 cb, ce, nsp;
  if (!span_range<PH>(p.span_chunks, nch, span, cb, ce, nsp)) return;
  const bool summary = PH == 1 && (p.flags & kBwdFlagSummary) != 0;  // gdn_summary_bwd: the whole sequence
  if (PH == 1 && span == 0 && !summary) return;
  const float scale = static_cast<float>(p.scale);
  constexpr int NTS = D / 16;
  const int ms = 16 * (warp & 3), ns = (D / 2) * (warp >> 2);
  const int m0 = 16 * (warp & 3), n0 = 32 * (warp >> 2);
  const i64 sbase = (seq * p.ho + h) * D * D + v0 * D;  // this CTA's rows of the [N, HO, D, D] states
  float ds[NTS][4];
  {
    // The seed: d_final_state (PH 0), zero (PH 1) or the fix-up's (PH 2: the last span's is
    // d_final_state, copied by the fix-up, so no CTA of this pass reads d_final_state while span 0
    // writes d_initial_state, which may be the same buffer).
    const bool from_fin = PH == 0 && (p.flags & kBwdFlagHasDFinal) != 0;
    const float* seed = PH == 2 ? span_block(p, seq, span, h, kSpanRSeed) + v0 * D : nullptr;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        float a = 0.f, b = 0.f;
        if (from_fin) load_any2(p.d_final_state, sbase + static_cast<i64>(v) * D + kk, p.dfin_type, a, b);
        if (PH == 2) load_f2(seed + static_cast<i64>(v) * D + kk, a, b);
        ds[j][2 * hh] = a;
        ds[j][2 * hh + 1] = b;
        st_bf2(&sm.ds[v * LDD + kk], a, b);
      }
  }
  const float* egc = ws32(p, p.ws_egc);
  // dO lands with the chunk's other tiles (cp.async, one chunk ahead) where its
  // rows are 16-byte aligned; otherwise it is read from global memory in the pass below.
  const int eb = p.do_type == kTypeF32 ? 4 : 2;
  const bool do_async = (p.d_o & 15) == 0;
  auto prefetch = [&](i64 ci, int buf) {
    const u16* blk = ws16(p, p.ws_blocks) + ((first + ci) * p.ho + h) * kBlockElems;
    RevStage& sg = sm.st[buf];
    copy_tile(sg.qe, LDD, blk + kOffQe, D, C, D, tid);
    copy_tile(sg.wn, LDD, blk + kOffWn, D, C, D, tid);
    copy_tile(sg.kd, LDD, blk + kOffKd, D, C, D, tid);
    copy_tile(sg.p, LDC, blk + kOffP, C, C, C, tid);
    if (PH != 1) copy_tile(sg.s, LDD, ws16(p, p.ws_st) + ((first + ci) * p.ho + h) * D * D + v0 * D, D, BV, D, tid);
    if (do_async) {
      const i64 c0 = ci * C;
      const int rows = static_cast<int>(len - c0 < C ? len - c0 : C);
      const int pieces = BV * eb / 16;  // 16-byte pieces a row
      const unsigned char* g = reinterpret_cast<const unsigned char*>(p.d_o);
      for (int i = tid; i < C * pieces; i += kThreads) {
        const int r = i / pieces, c = i % pieces;
        const i64 tok = bos + c0 + (r < rows ? r : 0);
        const unsigned char* src = g + (((tok * p.ho + h) * D + v0) * eb + 16 * c);
        cp_async16(reinterpret_cast<u16*>(sg.dor + r * BV * eb + 16 * c), reinterpret_cast<const u16*>(src),
                   r < rows ? 16 : 0);
      }
    }
    cp_async_commit();
  };
  if (ce > cb) prefetch(ce - 1, 0);
  int buf = 0;
  for (i64 ci = ce - 1; ci >= cb; --ci, buf ^= 1) {
    const i64 c0 = ci * C;
    const int n = static_cast<int>(len - c0 < C ? len - c0 : C);
    const i64 sh = (first + ci) * p.ho + h;
    // dS^T after the chunk (this CTA's rows), bf16.
    if (PH != 1) {
      u16* dst = ws16(p, p.ws_dst) + sh * D * D + v0 * D;
#pragma unroll
      for (int j = 0; j < NTS; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
          st_bf2(&dst[static_cast<i64>(v) * D + kk], ds[j][2 * hh], ds[j][2 * hh + 1]);
        }
    }
    const float ec = egc[sh];
    cp_async_wait_all();
    __syncthreads();  // this chunk's tiles landed; the previous chunk's readers (dob, dvn, the other stage) done
    if (ci > cb) prefetch(ci - 1, buf ^ 1);
    // scale dO (this CTA's columns), rows past the chunk zero.
    if (do_async) {
      const u64 raw = reinterpret_cast<u64>(sm.st[buf].dor);
      for (int i = tid; i < C * BV / 2; i += kThreads) {
        const int r = i / (BV / 2), c = 2 * (i % (BV / 2));
        float a, b;
        load_any2(raw, r * BV + c, p.do_type, a, b);
        st_bf2(&sm.dob[r * LDB + c], scale * a, scale * b);
      }
    } else {
      for (int i = tid; i < C * BV / 2; i += kThreads) {
        const int r = i / (BV / 2), c = 2 * (i % (BV / 2));
        float a = 0.f, b = 0.f;
        if (r < n) load_any2(p.d_o, ((bos + c0 + r) * p.ho + h) * D + v0 + c, p.do_type, a, b);
        st_bf2(&sm.dob[r * LDB + c], scale * a, scale * b);
      }
    }
    __syncthreads();  // dob written
    const RevStage& sg = sm.st[buf];
    // <S^T, dS^T> over this CTA's rows (dS^T after the chunk, fp32; S^T at its start):
    // one partial sum a warp, summed by gdn_bwd_grads in a fixed order.
    if (PH != 1) {
      float acc = 0.f;
#pragma unroll
      for (int j = 0; j < NTS; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const u32 w = lds32(&sg.s[(ms + g8 + 8 * hh) * LDD + ns + 8 * j + 2 * t4]);
          acc += ds[j][2 * hh] * bf16_to_f32(static_cast<u16>(w)) + ds[j][2 * hh + 1] * bf16_to_f32(static_cast<u16>(w >> 16));
        }
      acc = warp_sum(acc);
      if (lane == 0) ws32(p, p.ws_sds)[sh * 16 + 8 * blockIdx.x + warp] = acc;
    }
    // dVn = P^T (scale dO) + Kd dS.
    {
      float cdv[4][4] = {};
      warp_mma<4, C, true, true>(cdv, sg.p + m0, LDC, sm.dob + n0, LDB, lane);
      warp_mma<4, D>(cdv, sg.kd + m0 * LDD, LDD, sm.ds + n0 * LDD, LDD, lane);
      u16* dst = ws16(p, p.ws_dvn) + sh * C * D;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = m0 + g8 + 8 * hh, c = n0 + 8 * j + 2 * t4;
          st_bf2(&sm.dvn[r * LDB + c], cdv[j][2 * hh], cdv[j][2 * hh + 1]);
          if (PH != 1) st_bf2(&dst[r * D + v0 + c], cdv[j][2 * hh], cdv[j][2 * hh + 1]);
        }
    }
    __syncthreads();  // dvn written; every read of dS (the bf16 copy) done
    // dS^T = exp(gamma_C) dS^T + (scale dO)^T Qe + dVn^T Wn.
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) ds[j][e] *= ec;
    warp_mma<NTS, C, true, true>(ds, sm.dob + ms, LDB, sg.qe + ns, LDD, lane);
    warp_mma<NTS, C, true, true>(ds, sm.dvn + ms, LDB, sg.wn + ns, LDD, lane);
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        st_bf2(&sm.ds[v * LDD + kk], ds[j][2 * hh], ds[j][2 * hh + 1]);
      }
  }
  if (PH == 1 && !summary) {
    float* dst = span_block(p, seq, span, h, kSpanRH) + v0 * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        store_f2(dst + static_cast<i64>(v) * D + kk, ds[j][2 * hh], ds[j][2 * hh + 1]);
      }
  } else if (span == 0 && (p.flags & kBwdFlagWriteDInit)) {
    // Read d_final_state above (this CTA's rows only) before writing: the two may share one buffer.
    // (gdn_summary_bwd: G, dS^T at the sequence's start, through the same pointer.)
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        store_any2(p.d_initial_state, sbase + static_cast<i64>(v) * D + kk, p.dinit_type, ds[j][2 * hh],
                   ds[j][2 * hh + 1]);
      }
  }
}

GDN_PASS_ENTRY(gdn_bwd_rev_scan, GdnBwdParams, 1, rev_scan_pass, 0)
GDN_PASS_ENTRY(gdn_bwd_rev_summary, GdnBwdParams, 1, rev_scan_pass, 1)
GDN_PASS_ENTRY(gdn_bwd_rev_span, GdnBwdParams, 1, rev_scan_pass, 2)

// ---------------------------------------------------------------------------
// gdn_bwd_span_fixup: a chain split's middle pass, one CTA of 8 warps per (V slice and direction,
// head, sequence); blockIdx.x < D / BV: the forward direction, X = the initial state rows (or
// zero) as span 0's seed, then for each span s but the last X <- X M_s + H_s as span s + 1's
// seed; else the reverse one, dX = the d_final_state rows (or zero) as the last span's seed, then
// for each span s from the last down to 1 dX <- dX M_s^T + H'_s as span s - 1's seed. X / dX enter
// the product as bf16, M_s as the summaries stored it in bf16, fp32 accumulation from H_s / H'_s
// (fixup_walk, gdn_common.cuh, as the forward's gdn_span_fixup, in both directions).
// The fused forms' split (PIPELINE_ARCH 3) walks the two directions in two launches, each after the summaries it
// takes: gdn_bwd_span_fixup on D / BV CTAs in x (the forward direction only), then gdn_bwd_span_fixup_rev (kRevOnly:
// every CTA the reverse direction, grid x D / BV).
static_assert(sizeof(FixupSmem) == gdn_bwd_fixup_smem_bytes(D), "gdn_bwd_fixup_smem_bytes disagrees");

namespace opgraph_gdn {
namespace bwd {
template <bool kRevOnly>
__device__ __forceinline__ void span_fixup(const GdnBwdParams& p, unsigned char* smem_raw) {
  FixupSmem& sm = *reinterpret_cast<FixupSmem*>(smem_raw);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  constexpr int kVSlices = D / BV;
  const bool rev = kRevOnly || static_cast<int>(blockIdx.x) >= kVSlices;
  if (!rev && (p.flags & kBwdFlagCkpt)) return;  // the checkpoints seed the forward spans
  const i64 v0 = static_cast<i64>(rev && !kRevOnly ? blockIdx.x - kVSlices : blockIdx.x) * BV;
  const i64 h = blockIdx.y, seq = blockIdx.z;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 nch = (len + C - 1) / C, nsp = nch > 0 ? (nch + p.span_chunks - 1) / p.span_chunks : 1;
  constexpr int NTS = D / 16;
  const int ms = 16 * (warp & 3), ns = (D / 2) * (warp >> 2);
  float x[NTS][4];
  {
    const bool load = rev ? (p.flags & kBwdFlagHasDFinal) != 0 : (p.flags & kFlagHasInit) != 0;
    const i64 base = (seq * p.ho + h) * D * D + v0 * D;
    float* seed = span_block(p, seq, rev ? nsp - 1 : 0, h, rev ? kSpanRSeed : kSpanSeed) + v0 * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        float a = 0.f, b = 0.f;
        if (load) {
          if (rev) load_any2(p.d_final_state, base + static_cast<i64>(v) * D + kk, p.dfin_type, a, b);
          else load_any2(p.initial_state, base + static_cast<i64>(v) * D + kk, p.init_type, a, b);
        }
        x[j][2 * hh] = a;
        x[j][2 * hh + 1] = b;
        store_f2(seed + static_cast<i64>(v) * D + kk, a, b);
      }
  }
  // Forward step i applies span i (seeding span i + 1); reverse step i applies span nsp - 1 - i (seeding its
  // predecessor's end).
  if (rev)
    fixup_walk<true>(
        sm, x, nsp - 1, [&](i64 i) -> const u16* { return span_m16(p, seq, nsp - 1 - i, h); },
        [&](i64 i) -> const float* { return span_block(p, seq, nsp - 1 - i, h, kSpanRH) + v0 * D; },
        [&](i64 i) { return span_block(p, seq, nsp - 2 - i, h, kSpanRSeed) + v0 * D; });
  else
    fixup_walk<false>(
        sm, x, nsp - 1, [&](i64 i) -> const u16* { return span_m16(p, seq, i, h); },
        [&](i64 i) -> const float* { return span_block(p, seq, i, h, kSpanH) + v0 * D; },
        [&](i64 i) { return span_block(p, seq, i + 1, h, kSpanSeed) + v0 * D; });
}
}  // namespace bwd
}  // namespace opgraph_gdn

extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_bwd_span_fixup(const GdnBwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  span_fixup<false>(p, smem_raw);
}
extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_bwd_span_fixup_rev(const GdnBwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  span_fixup<true>(p, smem_raw);
}
