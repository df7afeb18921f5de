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
// recompute) and PH 7 (its S^T-only form) cover their sequence whole, as PH 0; PH 5 and 6 (gdn_bwd's
// fused forms under a chain split, gdn_fused_ws3.cuh) take spans as PH 2 and 3: PH 5's value-row CTA
// (x = 0) exits on the last span, its transition-row CTA (x = 1) runs every span (the reverse walk
// takes the last span's M too), and both exit where the sequence has one span.
struct PassRange {
  i64 seq, span, bos, tb, te;
  bool last_span, run;
};
// GDN_SPLIT_ADAPT's maps from the grid's z to a span (gdn_params.cuh). The span summaries run the F "full" spans
// (every span of a split sequence but its last, span_chunks chunks each) at z = their index in sequence order; the
// span scan runs each sequence's last span (or the whole sequence) at z = s, then the full spans at z = N + their
// index, so the longest CTAs (sequences left whole, up to split_min_chunks chunks) are dispatched first. A warp scans
// the sequences 32 at a time, a lane a sequence: `full` its spans but the last, `incl` the inclusive prefix sum of
// `full` over the group's lanes, `total` the group's sum (ceil(N / 32) rounds of two independent loads a lane). scripts/emulate_split_compact.py runs both functions below in Python against the
// default map's set of spans.
struct SpanAt {
  int seq, span;  // N and a sequence's spans are below 2^31 (the grid's z holds them)
  bool run;
};
__device__ __forceinline__ void span_group(const GdnParams& p, int s0, int lane, int& full, int& nsp, int& incl,
                                           int& total) {
  const int s = s0 + lane;
  nsp = 1;
  if (s < static_cast<int>(p.n_seq)) {
    const i64 bos = cu_at(p, s, 0), len = cu_at(p, s + 1, bos) - bos;
    nsp = static_cast<int>(seq_spans(p, (len + C - 1) / C));
  }
  full = s < static_cast<int>(p.n_seq) ? nsp - 1 : 0;
  incl = full;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int y = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += y;
  }
  total = __shfl_sync(0xffffffffu, incl, 31);
}
// The full span at z (< F), for the summaries (every warp of the CTA the same answer); run false past F.
__device__ __forceinline__ SpanAt full_span_at(const GdnParams& p, int z) {
  const int lane = static_cast<int>(threadIdx.x & 31), n = static_cast<int>(p.n_seq);
  int before = 0;  // the full spans of the groups before this one
  for (int s0 = 0; s0 < n; s0 += 32) {
    int full, nsp, incl, total;
    span_group(p, s0, lane, full, nsp, incl, total);
    if (z < before + total) {  // warp-uniform: the group holds z
      const int l = __ffs(__ballot_sync(0xffffffffu, z < before + incl)) - 1;
      const int excl = __shfl_sync(0xffffffffu, incl - full, l);
      return {s0 + l, z - before - excl, true};
    }
    before += total;
  }
  return {0, 0, false};
}
// The span scan's map, [gdn_split_grid_spans] rows of (sequence, span) to p.span_table, (-1, -1) past N + F: one
// warp (the summaries' CTA (0, 0, 0), before its own span). Rows past the table (only a cu_seqlens table whose sequences
// overlap could make more spans than the bound) are not written.
__device__ __forceinline__ void write_span_table(const GdnParams& p) {
  const int lane = static_cast<int>(threadIdx.x & 31), n = static_cast<int>(p.n_seq);
  const int rows = static_cast<int>(gdn_split_grid_spans(p.t, p.n_seq, p.span_chunks));
  int2* const tab = reinterpret_cast<int2*>(p.span_table);
  int before = 0;  // the full spans of the groups before this one (F after the loop)
  for (int s0 = 0; s0 < n; s0 += 32) {
    int full, nsp, incl, total;
    span_group(p, s0, lane, full, nsp, incl, total);
    const int s = s0 + lane;
    if (s < n) {
      const int first = n + before + incl - full;
      for (int k = 0; k < full; ++k)
        if (first + k < rows) tab[first + k] = make_int2(s, k);
      tab[s] = make_int2(s, nsp - 1);  // s < n <= rows
    }
    before += total;
  }
  for (int z = n + before + lane; z < rows; z += 32) tab[z] = make_int2(-1, -1);
}

template <int PH>
__device__ __forceinline__ PassRange pass_range(const GdnParams& p) {
  PassRange r;
  constexpr bool kSpans = PH == 2 || PH == 3 || PH == 5 || PH == 6;
  r.seq = kSpans ? static_cast<i64>(blockIdx.z) / p.n_spans : static_cast<i64>(blockIdx.z);
  r.span = kSpans ? static_cast<i64>(blockIdx.z) % p.n_spans : 0;
  if constexpr (GDN_SPLIT_ADAPT && PH == 2) {  // the forward's span summaries: the full spans, and the map
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x < 32) write_span_table(p);
    const SpanAt at = full_span_at(p, static_cast<int>(blockIdx.z));
    r.seq = at.seq;
    r.span = at.span;
    if (!at.run) {
      r.run = false;
      return r;
    }
  }
  if constexpr (GDN_SPLIT_ADAPT && PH == 3) {  // the forward's span scan: its row of the map
    const int2 at = reinterpret_cast<const int2*>(p.span_table)[blockIdx.z];
    r.seq = at.x;
    r.span = at.y;
    if (at.x < 0) {
      r.run = false;
      return r;
    }
  }
  r.bos = cu_at(p, r.seq, 0);
  const i64 len = cu_at(p, r.seq + 1, r.bos) - r.bos;
  r.tb = 0;
  r.te = len;
  r.last_span = true;
  r.run = true;
  if (kSpans) {
    // An empty sequence has one (empty) span: its scan still writes the final state.
    const i64 nsp = seq_spans(p, (len + C - 1) / C);
    if (r.span >= nsp) {
      r.run = false;
      return r;
    }
    r.last_span = r.span == nsp - 1;
    if (PH == 2 && r.last_span) r.run = false;  // the last span seeds nothing
    if (PH == 5 && (nsp == 1 || (r.last_span && blockIdx.x == 0))) r.run = false;
    r.tb = r.span * p.span_chunks * C;
    r.te = r.tb + p.span_chunks * C < len ? r.tb + p.span_chunks * C : len;
    if (GDN_SPLIT_ADAPT && r.last_span) r.te = len;  // a sequence left whole (split_min_chunks) is one span
  }
  return r;
}

// The state slice S^T [v0 .. v0 + 64][0 .. 128) a warpgroup starts from, in m64n128 accumulator
// order (fragment row fr, column fc): PH 0, 4 and 7 the initial state's row srow (zero without one), PH 3
// the span's seed, the transition's rows (mrows) the identity, otherwise zero.
template <int PH>
__device__ __forceinline__ void pass_state_in(const GdnParams& p, float (&st)[64], i64 srow, i64 seq, i64 span, i64 h,
                                              int v0, int fr, int fc, bool mrows) {
  const bool load = (PH == 0 || PH == 4 || PH == 7) && (p.flags & kFlagHasInit) && srow >= 0;
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
// of PH 3 the final state's row srow; PH 4 and 7 nothing (the backward needs no final state).
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
  } else if (PH != 4 && PH != 7 && last_span && (p.flags & kFlagWriteFinal) && srow >= 0) {
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
