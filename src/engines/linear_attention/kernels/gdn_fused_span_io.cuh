// linear_attention/kernels/gdn_fused_span_io.cuh — what a CTA of the fused pass (gdn_fused.cu's fused_pass,
// gdn_fused_ws3.cuh's ws3_pass) covers in each form PH (its sequence, span and tokens), the state slice it starts
// from and where the slice goes at the end (the final state, the gdn_summary outputs, a chain split's span blocks,
// state checkpoints). Split out of gdn_fused.cu; included by it after its own pieces.
#pragma once
#include "linear_attention/kernels/gdn_common.cuh"

namespace opgraph_gdn {

// What a CTA of the fused pass in form PH covers: its sequence and span, the sequence's first
// token bos, the tokens [tb, te) of the CTA (the sequence, or (PH 2, 3) its span of span_chunks
// chunks), whether it is the sequence's last span, and whether the CTA runs at all (a span past
// the sequence's end, or PH 2's last span, which seeds nothing, exits). PH 4 (gdn_bwd's forward
// recompute) covers its sequence whole, as PH 0; PH 5 and 6 (gdn_bwd's fused forms under a chain
// split, gdn_fused_ws3.cuh) take spans as PH 2 and 3: PH 5's value-row CTA (x = 0) exits on the
// last span, its transition-row CTA (x = 1) runs every span (the reverse walk takes the last
// span's M too), and both exit where the sequence has one span.
struct PassRange {
  i64 seq, span, bos, tb, te;
  bool last_span, run;
};
template <int PH>
__device__ __forceinline__ PassRange pass_range(const GdnParams& p) {
  PassRange r;
  constexpr bool kSpans = PH == 2 || PH == 3 || PH == 5 || PH == 6;
  r.seq = kSpans ? static_cast<i64>(blockIdx.z) / p.n_spans : static_cast<i64>(blockIdx.z);
  r.span = kSpans ? static_cast<i64>(blockIdx.z) % p.n_spans : 0;
  r.bos = cu_at(p, r.seq, 0);
  const i64 len = cu_at(p, r.seq + 1, r.bos) - r.bos;
  r.tb = 0;
  r.te = len;
  r.last_span = true;
  r.run = true;
  if (kSpans) {
    // An empty sequence has one (empty) span: its scan still writes the final state.
    const i64 nch = (len + C - 1) / C, nsp = nch > 0 ? (nch + p.span_chunks - 1) / p.span_chunks : 1;
    if (r.span >= nsp) {
      r.run = false;
      return r;
    }
    r.last_span = r.span == nsp - 1;
    if (PH == 2 && r.last_span) r.run = false;  // the last span seeds nothing
    if (PH == 5 && (nsp == 1 || (r.last_span && blockIdx.x == 0))) r.run = false;
    r.tb = r.span * p.span_chunks * C;
    r.te = r.tb + p.span_chunks * C < len ? r.tb + p.span_chunks * C : len;
  }
  return r;
}

// The state slice S^T [v0 .. v0 + 64][0 .. 128) a warpgroup starts from, in m64n128 accumulator
// order (fragment row fr, column fc): PH 0 and 4 the initial state's row srow (zero without one), PH 3
// the span's seed, the transition's rows (mrows) the identity, otherwise zero.
template <int PH>
__device__ __forceinline__ void pass_state_in(const GdnParams& p, float (&st)[64], i64 srow, i64 seq, i64 span, i64 h,
                                              int v0, int fr, int fc, bool mrows) {
  const bool load = (PH == 0 || PH == 4) && (p.flags & kFlagHasInit) && srow >= 0;
  const i64 sbase = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
  for (int j = 0; j < 64; j += 2) {
    const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
    float a = 0.f, b = 0.f;
    if (load) load_any2(p.initial_state, sbase + static_cast<i64>(r) * D + c, p.state_type, a, b);
    if (PH == 3) load_f2(span_block(p, seq, span, h, kSumSeed) + static_cast<i64>(v0 + r) * D + c, a, b);
    if (mrows) {  // the identity: row v0 + r, column c
      a = v0 + r == c ? 1.f : 0.f;
      b = v0 + r == c + 1 ? 1.f : 0.f;
    }
    st[j] = a;
    st[j + 1] = b;
  }
}

// The slice's rows (state layout, dense rows of D from element sbase) to dst in its run-time type.
__device__ __forceinline__ void store_slice(u64 dst, long long type, i64 sbase, const float (&st)[64], int fr, int fc) {
#pragma unroll
  for (int j = 0; j < 64; j += 2) {
    const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
    store_any2(dst, sbase + static_cast<i64>(r) * D + c, type, st[j], st[j + 1]);
  }
}

// Where the slice goes at the end: PH 1 H (value rows) or M^T (transition rows), dense [N, HO,
// D, D]; PH 2 the span's H or transition rows, fp32, to its span blocks; PH 0 and the last span
// of PH 3 the final state's row srow; PH 4 nothing (the backward needs no final state).
template <int PH>
__device__ __forceinline__ void pass_state_out(const GdnParams& p, const float (&st)[64], i64 srow, i64 seq, i64 span,
                                               i64 h, int v0, int fr, int fc, bool mrows, bool last_span) {
  if (PH == 1) {
    store_slice(mrows ? p.final_state : p.o, mrows ? p.state_type : p.o_type,
                (seq * p.ho + h) * D * D + static_cast<i64>(v0) * D, st, fr, fc);
  } else if (PH == 2) {  // H fp32; M bf16 (span_m16: gdn_span_fixup's operand as it is)
    float* dst = span_block(p, seq, span, h, kSumH) + static_cast<i64>(v0) * D;
    u16* dm = span_m16(p, seq, span, h) + static_cast<i64>(v0) * D;
#pragma unroll
    for (int j = 0; j < 64; j += 2) {
      const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
      if (mrows) st_bf2(dm + static_cast<i64>(r) * D + c, st[j], st[j + 1]);
      else store_f2(dst + static_cast<i64>(r) * D + c, st[j], st[j + 1]);
    }
    if (GDN_WALK_SKIP && mrows && v0 == 0 && fr == 0 && fc == 0) put_span_m_flag(span_m16(p, seq, span, h), 0u);
  } else if (PH != 4 && last_span && (p.flags & kFlagWriteFinal) && srow >= 0) {
    store_slice(p.final_state, p.state_type, srow * p.state_row_stride + (h * D + v0) * D, st, fr, fc);
  }
}

// The slice's state rows as checkpoint row `row` (as pass_state_out's final state; none at or past ckpt_rows).
__device__ __forceinline__ void store_checkpoint(const GdnParams& p, const float (&st)[64], i64 row, i64 h, int v0,
                                                 int fr, int fc) {
  if (row < p.ckpt_rows)
    store_slice(p.ckpt, p.ckpt_type, (row * p.ho + h) * D * D + static_cast<i64>(v0) * D, st, fr, fc);
}

}  // namespace opgraph_gdn
