// linear_attention/kernels/gdn_two_pass.cu — the two-pass Gated DeltaNet
// prefill (the engine's PIPELINE_ARCH knob 1) and its chain split (knob
// CHAIN_SPLIT); gdn_common.cuh for the shared parts.
//
// gdn_prefill_prep + gdn_prefill_scan: every state-free piece of every chunk at
//   once into a workspace, then a sequential pass of state products only.
// gdn_span_summary + gdn_span_fixup + gdn_span_scan: that sequential pass split
//   into spans of a sequence's chunks computed in parallel.
// (Below, at their definitions.)
#include "linear_attention/kernels/gdn_common.cuh"
#include "linear_attention/kernels/gdn_prep.cuh"

#ifndef GDN_CKPT
// 1: the build whose scan and span scan write state_checkpoints (p.ckpt); the engine asks for it only where they
// are bound, so the other builds are the ones they were.
#define GDN_CKPT 0
#endif

using namespace opgraph_gdn;

// ---- the two-pass prefill ----
// gdn_prefill_prep: one CTA of 8 warps per (chunk slot, output head): every
// state-free piece of one 64-token chunk (the cumulative gate, l2norm, L, T,
// W, U, P, the decayed K), written to the workspace block of (slot, head)
// (gdn_params.cuh names the tiles). All chunks of all sequences at once.
// gdn_prefill_scan: one CTA per (V-slice, head, sequence) as gdn_prefill; per
// chunk only the state products, from the block of the chunk:
//   Vn = U + Wn S;  O = scale (Qe S + P Vn);  S = exp(gamma_C) S + Vn^T Kd
// with the next chunk's tiles fetched (cp.async) while this one computes.

namespace opgraph_gdn {

static_assert(sizeof(PrepSmem) == gdn_prep_smem_bytes(D), "gdn_prep_smem_bytes disagrees with PrepSmem");

struct ScanStage {
  u16 qe[C * LDD];
  u16 wn[C * LDD];
  u16 p[C * LDC];
  u16 kd[C * LDD];
};
struct ScanSmem {
  ScanStage st[2];
  u16 s[BV * LDD];   // S^T slice at the chunk start (bf16 copy of the registers)
  u16 vn[C * LDB];   // Vn [C][BV]
};
static_assert(sizeof(ScanSmem) == gdn_scan_smem_bytes(D), "gdn_scan_smem_bytes disagrees with ScanSmem");

constexpr i64 kBlockElems = gdn_ws_block_elems(D);
constexpr i64 kBlockBytes = gdn_ws_block_bytes(D);

// The prep's destinations (gdn_prep.cuh) in the two-pass workspace: the blocks
// from its start, then exp(gamma_C) after all of them.
__device__ __forceinline__ u16* prep_block(const GdnParams& p, i64 slot, i64 h) {
  return reinterpret_cast<u16*>(p.ws) + (slot * p.ho + h) * kBlockElems;
}
__device__ __forceinline__ float* prep_egc(const GdnParams& p) {
  return reinterpret_cast<float*>(p.ws + static_cast<u64>(p.n_slots * p.ho * kBlockBytes));
}

}  // namespace opgraph_gdn

extern "C" __global__ void __launch_bounds__(kThreads, 2) gdn_prefill_prep(const GdnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  prep_chunk<true>(p, smem_raw);
}

// The sequential pass, in three forms (PH):
//  0  gdn_prefill_scan: one CTA per (V-slice, head, sequence), the whole
//     sequence from initial_state; O and final_state.
//  1  gdn_span_summary: a chain split's first pass, one CTA per (slice, head,
//     sequence x span) over the span's chunks only: slices 0 .. D/BV-1 are
//     value rows from a zero seed (their end state is H), slices D/BV .. are
//     rows of the transition M from the identity with U = 0 (the state update
//     X <- X (e^gC I + Wn^T Kd) + U^T Kd, rows independent). No O. The last
//     span of a sequence seeds nothing: its CTAs exit.
//  2  gdn_span_scan: the scan of one span from its seed (span 0: initial_state),
//     O for the span's tokens; the last span writes final_state.
//  3  gdn_summary_scan: the gdn_summary op (the fused kernel's gdn_summary_fused serves d = 128; this form any
//     head dim, after gdn_prefill_prep with q read as k): PH 1 over each sequence whole, one CTA per (slice,
//     head, sequence), value rows from a zero seed to H (p.o, [N, HO, V, K] in p.o_type), transition rows from
//     the identity to M^T (p.final_state, [N, HO, K, K] in p.state_type); an empty sequence stores 0 and I.
template <int PH>
__device__ __forceinline__ void scan_pass(const GdnParams& p, unsigned char* smem_raw) {
  ScanSmem& sm = *reinterpret_cast<ScanSmem*>(smem_raw);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  constexpr int kVSlices = D / BV;
  constexpr bool kWhole = PH == 0 || PH == 3;  // the sequence whole, not a span of it
  constexpr bool kOut = PH == 0 || PH == 2;    // O (q rows read)
  const bool mrows = (PH == 1 || PH == 3) && static_cast<int>(blockIdx.x) >= kVSlices;  // rows of M, not of S^T
  const i64 v0 = static_cast<i64>(mrows ? blockIdx.x - kVSlices : blockIdx.x) * BV;
  const i64 h = blockIdx.y;
  const i64 seq = kWhole ? static_cast<i64>(blockIdx.z) : static_cast<i64>(blockIdx.z) / p.n_spans;
  const i64 span = kWhole ? 0 : static_cast<i64>(blockIdx.z) % p.n_spans;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 first = bos / C + seq;
  // The tokens [tb, te) of this CTA's span (PH 0: the sequence).
  i64 tb = 0, te = len;
  bool last_span = true;
  if (!kWhole) {
    // An empty sequence has one (empty) span: it still writes its final state.
    const i64 nsp = seq_spans(p, (len + C - 1) / C);
    if (span >= nsp) return;
    last_span = span == nsp - 1;
    if (PH == 1 && last_span) return;
    tb = span * p.span_chunks * C;
    te = tb + p.span_chunks * C < len ? tb + p.span_chunks * C : len;
  }
  const i64 srow = state_row(p, seq);
  const float scale = static_cast<float>(p.scale);
#if GDN_CKPT
  // state_checkpoints (the scan and the span scan; the GDN_CKPT build): the sequence's first row.
  const bool ckpt = kOut && p.ckpt != 0;
  const i64 ck_row0 = ckpt ? checkpoint_row0(p, seq, p.ckpt_every) : 0;
#endif
  const u16* ws = reinterpret_cast<const u16*>(p.ws);
  const float* gcs = reinterpret_cast<const float*>(p.ws + static_cast<u64>(p.n_slots * p.ho * kBlockBytes));

  constexpr int NTS = D / 16;
  const int ms = 16 * (warp & 3), ns = (D / 2) * (warp >> 2);
  float st[NTS][4];
  {
    // The seed: initial_state (PH 0), the fix-up's seed (PH 2: span 0's is the
    // initial state, copied by the fix-up, so no CTA of this pass reads
    // initial_state while the last span writes final_state, which may be the
    // same buffer), zero (PH 1 value rows) or the identity (PH 1 M rows).
    const bool from_init = PH == 0 && (p.flags & kFlagHasInit) && srow >= 0;
    const bool from_seed = PH == 2;
    const i64 base = srow * p.state_row_stride + (h * D + v0) * D;
    const float* seed = from_seed ? span_block(p, seq, span, h, kSumSeed) + v0 * D : nullptr;
#pragma unroll
    for (int j = 0; j < NTS; ++j) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        float a = 0.f, b = 0.f;
        if (from_init) load_any2(p.initial_state, base + static_cast<i64>(v) * D + kk, p.state_type, a, b);
        if (from_seed) {
          load_f2(seed + static_cast<i64>(v) * D + kk, a, b);
        }
        if (mrows) {
          a = v0 + v == kk ? 1.f : 0.f;
          b = v0 + v == kk + 1 ? 1.f : 0.f;
        }
        st[j][2 * hh] = a;
        st[j][2 * hh + 1] = b;
        *reinterpret_cast<u32*>(&sm.s[v * LDD + kk]) = pack_bf16(a, b);
      }
    }
  }

  const int m0 = 16 * (warp & 3), n0 = 32 * (warp >> 2);
  auto block_of = [&](i64 c) { return ws + ((first + c / C) * p.ho + h) * kBlockElems; };
  auto prefetch = [&](i64 c, int buf) {
    const u16* b = block_of(c);
    ScanStage& sg = sm.st[buf];
    constexpr int PD = D / 8, PC = C / 8;  // 16-byte pieces per row
    for (int i = tid; i < C * PD; i += kThreads) {
      const int r = i / PD, piece = i % PD;
      if (kOut) cp_async16(&sg.qe[r * LDD + piece * 8], b + kOffQe + r * D + piece * 8, 16);
      cp_async16(&sg.wn[r * LDD + piece * 8], b + kOffWn + r * D + piece * 8, 16);
      cp_async16(&sg.kd[r * LDD + piece * 8], b + kOffKd + r * D + piece * 8, 16);
    }
    if (kOut)
      for (int i = tid; i < C * PC; i += kThreads) {
        const int r = i / PC, piece = i % PC;
        cp_async16(&sg.p[r * LDC + piece * 8], b + kOffP + r * C + piece * 8, 16);
      }
    cp_async_commit();
  };
  // U of the chunk as this thread's accumulator fragment, and exp(gamma_C), in registers.
  u32 un[4][2] = {};
  float gcn = 1.f;
  auto load_u = [&](i64 c) {
    const u16* b = block_of(c) + kOffU;
    if (!mrows) {
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
          un[j][hh] = *reinterpret_cast<const u32*>(&b[(m0 + g8 + 8 * hh) * D + v0 + n0 + 8 * j + 2 * t4]);
    }
    gcn = gcs[(first + c / C) * p.ho + h];
  };
  if (te > tb) {
    prefetch(tb, 0);
    load_u(tb);
  }

  int buf = 0;
  for (i64 c0 = tb; c0 < te; c0 += C, buf ^= 1) {
    const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
    const bool more = c0 + C < te;
    cp_async_wait_all();
    __syncthreads();  // this chunk's tiles landed; the previous chunk's readers are done
    if (more) prefetch(c0 + C, buf ^ 1);
    const ScanStage& sg = sm.st[buf];
    float cv[4][4], co[4][4] = {};
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        cv[j][2 * hh] = bf16_to_f32(static_cast<u16>(un[j][hh]));
        cv[j][2 * hh + 1] = bf16_to_f32(static_cast<u16>(un[j][hh] >> 16));
      }
    const float ec = gcn;
    if (more) load_u(c0 + C);

    // Vn = U + Wn S; o = Qe S.
    warp_mma<4, D>(cv, sg.wn + m0 * LDD, LDD, sm.s + n0 * LDD, LDD, lane);
    if (kOut) warp_mma<4, D>(co, sg.qe + m0 * LDD, LDD, sm.s + n0 * LDD, LDD, lane);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = m0 + g8 + 8 * hh;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        *reinterpret_cast<u32*>(&sm.vn[r * LDB + n0 + 8 * j + 2 * t4]) = pack_bf16(cv[j][2 * hh], cv[j][2 * hh + 1]);
    }
    __syncthreads();

    if (kOut) {
      // O = scale (o + P Vn), rows of the chunk only.
      warp_mma<4, C, false, true>(co, sg.p + m0 * LDC, LDC, sm.vn + n0, LDB, lane);
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = m0 + g8 + 8 * hh;
        if (r < n) {
          const i64 orow = ((bos + c0 + r) * p.ho + h) * D + v0;
#pragma unroll
          for (int j = 0; j < 4; ++j)
            store_any2(p.o, orow + n0 + 8 * j + 2 * t4, p.o_type, scale * co[j][2 * hh], scale * co[j][2 * hh + 1]);
        }
      }
    }

    // S^T = exp(gamma_C) S^T + Vn^T Kd (registers), and its bf16 copy.
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
        *reinterpret_cast<u32*>(&sm.s[v * LDD + kk]) = pack_bf16(st[j][2 * hh], st[j][2 * hh + 1]);
      }
#if GDN_CKPT
    // A full chunk ending on a multiple of the cadence (tokens from the sequence's start): its state is a
    // checkpoint (no row at or past ckpt_rows).
    if (ckpt && n == C && (c0 + C) % p.ckpt_every == 0) {
      const i64 row = ck_row0 + (c0 + C) / p.ckpt_every - 1;
      if (row < p.ckpt_rows) {
        const i64 base = (row * p.ho + h) * D * D + v0 * D;
#pragma unroll
        for (int j = 0; j < NTS; ++j)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
            store_any2(p.ckpt, base + static_cast<i64>(v) * D + kk, p.ckpt_type, st[j][2 * hh], st[j][2 * hh + 1]);
          }
      }
    }
#endif
  }

  if (PH == 1) {
    // H fp32; M bf16 (span_m16, the walk's operand as it is).
    float* dst = span_block(p, seq, span, h, kSumH) + v0 * D;
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
  } else if (PH == 3) {
    const i64 base = (seq * p.ho + h) * D * D + v0 * D;
    const u64 dst = mrows ? p.final_state : p.o;
    const long long type = mrows ? p.state_type : p.o_type;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        store_any2(dst, base + static_cast<i64>(v) * D + kk, type, st[j][2 * hh], st[j][2 * hh + 1]);
      }
  } else if (last_span && (p.flags & kFlagWriteFinal) && srow >= 0) {
    const i64 base = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        store_any2(p.final_state, base + static_cast<i64>(v) * D + kk, p.state_type, st[j][2 * hh],
                   st[j][2 * hh + 1]);
      }
  }
}

GDN_PASS_ENTRY(gdn_prefill_scan, GdnParams, 1, scan_pass, 0)
GDN_PASS_ENTRY(gdn_span_summary, GdnParams, 1, scan_pass, 1)
GDN_PASS_ENTRY(gdn_span_scan, GdnParams, 1, scan_pass, 2)
GDN_PASS_ENTRY(gdn_summary_scan, GdnParams, 1, scan_pass, 3)

// gdn_span_fixup: a chain split's middle pass, one CTA of 8 warps per (V-slice,
// head, sequence): X = the initial state rows (or zero), span 0's seed; then
// for each span s but the last X <- X M_s + H_s (fixup_walk, gdn_common.cuh: X as
// bf16 operand, M_s as the summaries stored it in bf16, fp32 accumulation from H_s,
// both landing two spans ahead), written as span s + 1's seed.
static_assert(sizeof(FixupSmem) == gdn_fixup_smem_bytes(D), "gdn_fixup_smem_bytes disagrees with FixupSmem");
extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_span_fixup(const GdnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  FixupSmem& sm = *reinterpret_cast<FixupSmem*>(smem_raw);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const i64 v0 = static_cast<i64>(blockIdx.x) * BV;
  const i64 h = blockIdx.y, seq = blockIdx.z;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 nsp = seq_spans(p, (len + C - 1) / C);
  const i64 srow = state_row(p, seq);
  constexpr int NTS = D / 16;
  const int ms = 16 * (warp & 3), ns = (D / 2) * (warp >> 2);
  float x[NTS][4];
  {
    const bool load = (p.flags & kFlagHasInit) && srow >= 0;
    const i64 base = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        float a = 0.f, b = 0.f;
        if (load) load_any2(p.initial_state, base + static_cast<i64>(v) * D + kk, p.state_type, a, b);
        x[j][2 * hh] = a;
        x[j][2 * hh + 1] = b;
        store_f2(span_block(p, seq, 0, h, kSumSeed) + (v0 + v) * D + kk, a, b);
      }
  }
  fixup_walk<false>(
      sm, x, nsp - 1, [&](i64 s) -> const u16* { return span_m16(p, seq, s, h); },
      [&](i64 s) -> const float* { return span_block(p, seq, s, h, kSumH) + v0 * D; },
      [&](i64 s) { return span_block(p, seq, s + 1, h, kSumSeed) + v0 * D; });
}
