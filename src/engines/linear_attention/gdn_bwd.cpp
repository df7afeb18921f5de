// engines/linear_attention/gdn_bwd.cpp — gdn_bwd on the linear_attention engine:
// the kernel requests, the workspace and the plan (up to nine launches of kernels/gdn_bwd_states.cu,
// gdn_bwd_grads.cu and gdn_fused.cu per execute); gdn_summary_bwd's plan too (three launches; its rules in
// gdn_summary_bwd.cpp). The support rules B1..B9 and the form a config names are gdn_bwd_rules.cpp's, the chain
// split rules and the proposals gdn_bwd_heuristics.cpp's.
#include "engines/linear_attention/gdn_bwd.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <utility>

#include "engines/linear_attention/gdn_bwd_onepass.h"
#include "engines/linear_attention/gdn_overrides.h"
#include "engines/linear_attention/kernels/gdn_bwd_params.cuh"
#include "engines/linear_attention/la_engine.h"
#include "engines/linear_attention/la_rules.h"
#include "engines/linear_attention/kernels/gdn_params.cuh"
#include "exec/operand_table.h"
#include "opgraph/op_graph.h"
#include "runtime/context_scope.h"
#include "runtime/device.h"
#include "runtime/shared_runtimes.h"

namespace opgraph::linear_attention {
namespace {

using opgraph_gdn::GdnBwdParams;

using rules::type_code;

constexpr unsigned kThreads = 256;
constexpr unsigned kFinishTokensPerBlock = kThreads / 32;  // one warp a token

// `onepass`: the one-pass form's builds (PIPELINE_ARCH 5, rule B11) of the gradient source's entries.
runtime::KernelRequest request(long long d, DataType io, const char* entry, bool onepass = false) {
  // The prep and the two scans in one source, the gradient kernels in the other; the fused forward recompute and
  // the fused reverse scan are in the forward's warp-specialised fused build (gdn_fused.cu, GDN_FUSED_WS), the
  // one-pass form's first pass in that build with GDN_BWD_ONEPASS (its ws3_pass PH 7).
  // Its split's span recompute is that build's gdn_bwd_fwd_span_fused (no Vn stored: pass 2 forms it on chip).
  const std::string e = entry;
  if (e == "gdn_bwd_fwd_st_fused" || (onepass && e == "gdn_bwd_fwd_span_fused")) {
    runtime::KernelRequest r = rules::kernel_request(d, io, entry, "linear_attention/kernels/gdn_fused.cu");
    r.defines.push_back({"GDN_FUSED_WS", "1"});
    r.defines.push_back({"GDN_BWD_ONEPASS", "1"});
    if (e != "gdn_bwd_fwd_st_fused") r.kernel += "_onepass";
    return r;
  }
  if (e == "gdn_bwd_fwd_fused" || e == "gdn_bwd_rev_fused" || e == "gdn_bwd_fwd_summary_fused" ||
      e == "gdn_bwd_fwd_span_fused" || e == "gdn_bwd_rev_summary_fused" || e == "gdn_bwd_rev_span_fused") {
    runtime::KernelRequest r = rules::kernel_request(d, io, entry, "linear_attention/kernels/gdn_fused.cu");
    r.defines.push_back({"GDN_FUSED_WS", "1"});
    return r;
  }
  const bool grads_src =
      e == "gdn_bwd_grads" || e == "gdn_bwd_finish" || e == "gdn_bwd_gate_params" || e == "gdn_bwd_onepass";
  runtime::KernelRequest r = rules::kernel_request(d, io, entry,
                                                   grads_src ? "linear_attention/kernels/gdn_bwd_grads.cu"
                                                             : "linear_attention/kernels/gdn_bwd_states.cu");
  // gdn_bwd_onepass as measured (kernels/gdn_bwd_params.cuh), the finish reading its dq / dk sums (its split's walks,
  // gdn_bwd_states.cu, are PIPELINE_ARCH 3's builds)
  if (onepass && grads_src) {
    for (const char* def :
         {"GDN_BWD_ONEPASS", "GDN_BWD_ONEPASS_RED", "GDN_BWD_ONEPASS_BATCH", "GDN_BWD_ONEPASS_TMARED"})
      r.defines.push_back({def, "1"});
    r.kernel += "_onepass";
  }
  return r;
}

// Every entry, in launch order; a plan launches those its form needs (the split's five
// or the two whole-sequence scans; the fused forward recompute in place of the prep and the forward scan; the fused
// forms' split: kFwdSumF, kFixup (its forward direction), kFwdSpanF, kRevSumF, kFixupRev, kRevSpanF).
enum Entry : int {
  kPrep, kFwdFused, kFwdSt, kFwdSumF, kFwdSummary, kRevSummary, kFixup, kFwdScan, kFwdSpan, kFwdSpanF, kRevSumF,
  kFixupRev, kRevScan, kRevFused, kRevSpanF, kRevSpan, kOnePass, kGrads, kFinish, kGateParams, kKernels
};
constexpr const char* kEntries[kKernels] = {
    "gdn_bwd_prep",           "gdn_bwd_fwd_fused",         "gdn_bwd_fwd_st_fused",   "gdn_bwd_fwd_summary_fused",
    "gdn_bwd_fwd_summary",    "gdn_bwd_rev_summary",       "gdn_bwd_span_fixup",     "gdn_bwd_fwd_scan",
    "gdn_bwd_fwd_span",       "gdn_bwd_fwd_span_fused",    "gdn_bwd_rev_summary_fused", "gdn_bwd_span_fixup_rev",
    "gdn_bwd_rev_scan",       "gdn_bwd_rev_fused",         "gdn_bwd_rev_span_fused", "gdn_bwd_rev_span",
    "gdn_bwd_onepass",        "gdn_bwd_grads",             "gdn_bwd_finish",         "gdn_bwd_gate_params"};
// The entries only the d = 128 warp-specialised build has.
bool fused_entry(int e) {
  return e == kFwdFused || e == kRevFused || e == kFwdSumF || e == kFwdSpanF || e == kRevSumF || e == kRevSpanF;
}
// The one-pass form's own two (PIPELINE_ARCH 5, d = 128, bf16 only).
bool onepass_entry(int e) { return e == kFwdSt || e == kOnePass; }
bool split_entry(int e) { return e == kFwdSummary || e == kRevSummary || e == kFixup || e == kFwdSpan || e == kRevSpan; }
bool whole_entry(int e) { return e == kFwdScan || e == kRevScan; }
// Whether a plan of form `f` launches entry `e`. The prep and the scans (PIPELINE_ARCH 0, 1): under a split the
// split's five kernels, else the two whole-sequence scans; with checkpoints the forward recompute is gdn_bwd_fwd_span
// (seeded by them) in either form. The fused forms: the fused forward recompute in place of the prep and the forward
// scan — whole, or under state_checkpoints gdn_bwd_fwd_span_fused over spans seeded by them, or under PIPELINE_ARCH
// 3's split the forward summaries, the fix-up's forward walk and gdn_bwd_fwd_span_fused over the split's spans —;
// 3's fused reverse scan in place of the reverse scan (under its split: the reverse summaries, the reverse walk and
// gdn_bwd_rev_span_fused); 2 keeps the whole-sequence reverse scan.
// The one-pass form (5): gdn_bwd_fwd_st_fused, gdn_bwd_onepass, the finish and the gate parameters; under its split
// PIPELINE_ARCH 3's split kernels but its last (the forward summaries and walk, the forward recompute of every span,
// the reverse summaries and walk) in place of gdn_bwd_fwd_st_fused, gdn_bwd_onepass over the spans from their seeds.
bool form_entry(int e, const BwdForm& f, bool ckpt) {
  if (f.onepass) {
    if (e == kOnePass || e == kFinish || e == kGateParams) return true;
    if (f.split <= 0) return e == kFwdSt;
    return e == kFwdSumF || e == kFixup || e == kFwdSpanF || e == kRevSumF || e == kFixupRev;
  }
  if (onepass_entry(e)) return false;
  if (f.fused) {
    const bool fsplit = f.fused_rev && f.split > 0;
    switch (e) {
      case kFwdFused: return !ckpt && !fsplit;
      case kFwdSumF:
      case kFixup: return fsplit;  // (B9 refuses the split with checkpoints)
      case kFwdSpanF: return ckpt || fsplit;
      case kRevSumF:
      case kFixupRev:
      case kRevSpanF: return fsplit;
      case kRevFused: return f.fused_rev && !fsplit;
      case kRevScan: return !f.fused_rev;
      case kGrads:
      case kFinish:
      case kGateParams: return true;
      default: return false;
    }
  }
  if (fused_entry(e) || e == kFixupRev) return false;
  if (ckpt && (e == kFwdSpan || e == kFwdScan)) return e == kFwdSpan;
  return f.split > 0 ? !whole_entry(e) : !split_entry(e);
}

// Operand order of the table rows.
enum Slot : int {
  kQ, kK, kV, kG, kBeta, kCu, kInit, kDO, kDFinal, kALog, kDtBias,
  kDQ, kDK, kDV, kDG, kDBeta, kDInit, kDALog, kDDt, kTrans, kCkpt, kSlots
};

// Everything a plan launches, fixed at build (fwd: the fused forward recompute's argument, its pointers but the
// workspace's filled at execute).
struct BwdLaunch {
  GdnBwdParams params{};
  opgraph_gdn::GdnParams fwd{};
  std::array<runtime::LaunchDims, kKernels> dims;
  std::int64_t workspace = 0;
};

// HQ = HK: gdn_bwd_grads takes each q / k head's group of output heads in one CTA and
// writes dQ and dK itself (kBwdFlagQkDirect); otherwise they are staged in fp32 per output
// head and summed by gdn_bwd_finish.
bool qk_direct(const GdnBwdProblem& p) { return p.hq == p.hk; }

// The workspace layout of problem `p`: dq, dk staged in fp32 only where HQ != HK, dV only
// where v heads are grouped (HV < HO); gdn_bwd_finish sums what is staged, and
// gdn_bwd_grads writes the rest itself.
// gdn_summary_bwd: the prep's tiles and e^gamma_C only (its summaries store nothing per chunk).
// The one-pass form (`onepass`): its own layout (gdn_bwd_ws_onepass: T alone in the block region unsplit, no dS^T,
// Vn or dVn, the dq / dk sums [T][HQ] / [T][HK]).
opgraph_gdn::GdnBwdWs workspace_of(const GdnBwdProblem& p, long long split, bool onepass = false) {
  if (onepass) return opgraph_gdn::gdn_bwd_ws_onepass(p.d, p.t, p.n_seq, p.hq, p.hk, p.ho, p.hv != p.ho, split);
  return opgraph_gdn::gdn_bwd_ws(p.d, p.t, p.n_seq, p.ho, !qk_direct(p), p.hv != p.ho, split, p.summary);
}
// gdn_summary_bwd's one span a sequence: longer than any sequence of the call.
long long summary_span_chunks(const GdnBwdProblem& p) { return (p.t + 63) / 64 + 1; }

// gdn_bwd_fwd_fused's argument (the forward's GdnParams, kernels/gdn_params.cuh) for `p` from the backward's `k`:
// the forward's flags and types, the initial state's dense rows, the workspace regions it writes.
opgraph_gdn::GdnParams fused_recompute_params(const GdnBwdProblem& p, const GdnBwdParams& k) {
  opgraph_gdn::GdnParams f{};
  f.t = k.t;
  f.n_seq = k.n_seq;
  f.hq = k.hq;
  f.hk = k.hk;
  f.hv = k.hv;
  f.ho = k.ho;
  f.state_rows = p.n_seq;
  f.state_row_stride = p.ho * p.d * p.d;
  f.g_type = k.g_type;
  f.beta_type = k.beta_type;
  f.state_type = k.init_type;
  f.o_type = opgraph_gdn::kTypeBf16;  // no O in this form
  f.a_log_type = k.a_log_type;
  f.dt_bias_type = k.dt_bias_type;
  // The gate, beta and l2norm bits are the forward's own (gdn_bwd_params.cuh reads them); the backward's own bits
  // and kFlagWriteFinal / kFlagPool stay off.
  f.flags = k.flags & (opgraph_gdn::kFlagL2Norm | opgraph_gdn::kFlagSafeGate | opgraph_gdn::kFlagLinearGate |
                       opgraph_gdn::kFlagBetaSigmoid | opgraph_gdn::kFlagNegEig | opgraph_gdn::kFlagHasInit |
                       opgraph_gdn::kFlagHasALog | opgraph_gdn::kFlagHasDtBias | opgraph_gdn::kFlagCu64);
  f.scale = k.scale;  // (the form takes none: the backward's products do)
  f.q_ts = k.q_ts;
  f.q_hs = k.q_hs;
  f.k_ts = k.k_ts;
  f.k_hs = k.k_hs;
  f.v_ts = k.v_ts;
  f.v_hs = k.v_hs;
  // Unsplit (gdn_bwd_fwd_fused) one span a sequence; under the fused forms' split (gdn_bwd_fwd_summary_fused,
  // gdn_bwd_fwd_span_fused) the backward's spans and span blocks; under state_checkpoints (gdn_bwd_fwd_span_fused
  // seeded by them, ckpt_every > 0) spans of the cadence, the checkpoints' type and rows (the pointer at execute).
  f.n_spans = k.span_chunks > 0 ? k.n_spans : 1;
  f.span_chunks = k.span_chunks;
  if (p.checkpoints >= 0) {
    f.n_spans = k.ckpt_spans;
    f.span_chunks = k.ckpt_chunks;
    f.ckpt_type = k.ckpt_type;
    f.ckpt_every = p.checkpoint_every;
    f.ckpt_rows = k.ckpt_rows;
  }
  f.bwd_blocks = k.ws_blocks;
  f.bwd_egc = k.ws_egc;
  f.bwd_st = k.ws_st;
  f.bwd_vn = k.ws_vn;
  f.bwd_span = k.ws_span;
  return f;
}

// Under a chain split of `split` chunks a span (> 0), the scans run as the split's five kernels; the fused forward
// recompute runs gdn_bwd_fwd_fused in place of the prep and the forward scan.
BwdLaunch launch_for(const GdnBwdProblem& p, const BwdForm& form) {
  const long long split = form.split;
  BwdLaunch l;
  GdnBwdParams& k = l.params;
  k.t = p.t;
  k.n_seq = p.n_seq;
  k.hq = p.hq;
  k.hk = p.hk;
  k.hv = p.hv;
  k.ho = p.ho;
  k.n_slots = opgraph_gdn::gdn_bwd_slots(p.t, p.n_seq);
  k.q_ts = p.q_ts;
  k.q_hs = p.q_hs;
  k.k_ts = p.k_ts;
  k.k_hs = p.k_hs;
  k.v_ts = p.v_ts;
  k.v_hs = p.v_hs;
  k.g_type = type_code(p.g_type);
  k.beta_type = type_code(p.beta_type);
  k.init_type = type_code(p.init_type);
  k.do_type = type_code(p.do_type);
  k.dfin_type = type_code(p.dfin_type);
  k.dq_type = type_code(p.dq_type);
  k.dk_type = type_code(p.dk_type);
  k.dv_type = type_code(p.dv_type);
  k.dg_type = type_code(p.dg_type);
  k.dbeta_type = type_code(p.dbeta_type);
  k.dinit_type = type_code(p.dinit_type);
  k.a_log_type = type_code(p.a_log_type);
  k.dt_bias_type = type_code(p.dt_bias_type);
  k.dalog_type = type_code(p.dalog_type);
  k.ddt_type = type_code(p.ddt_type);
  long long f = 0;
  if (p.l2norm) f |= opgraph_gdn::kFlagL2Norm;
  if (p.linear_gate) f |= opgraph_gdn::kFlagLinearGate;
  if (p.beta_sigmoid) f |= opgraph_gdn::kFlagBetaSigmoid;
  if (p.neg_eig) f |= opgraph_gdn::kFlagNegEig;
  if (p.initial_state >= 0) f |= opgraph_gdn::kFlagHasInit;
  if (p.cu64) f |= opgraph_gdn::kFlagCu64;
  if (p.d_final_state >= 0) f |= opgraph_gdn::kBwdFlagHasDFinal;
  if (p.d_initial_state >= 0) f |= opgraph_gdn::kBwdFlagWriteDInit;
  if (p.safe_gate) f |= opgraph_gdn::kFlagSafeGate;
  if (p.a_log >= 0) f |= opgraph_gdn::kFlagHasALog;
  if (p.dt_bias >= 0) f |= opgraph_gdn::kFlagHasDtBias;
  if (p.d_a_log >= 0) f |= opgraph_gdn::kBwdFlagWriteDALog;
  if (p.d_dt_bias >= 0) f |= opgraph_gdn::kBwdFlagWriteDDt;
  if (qk_direct(p) && !form.onepass) f |= opgraph_gdn::kBwdFlagQkDirect;
  // The one-pass form's gates by TMA: fp32 and whole 16-byte groups of heads a token (execute clears the bit where
  // g or beta is not 16-byte aligned).
  if (form.onepass && p.g_type == DataType::FLOAT && p.beta_type == DataType::FLOAT && p.ho % 4 == 0)
    f |= opgraph_gdn::kBwdFlagGatesTma;
  if (p.summary) f |= opgraph_gdn::kBwdFlagSummary;
  if (p.checkpoints >= 0) f |= opgraph_gdn::kBwdFlagCkpt;
  k.flags = f;
  k.trans_type = type_code(p.trans_type);
  k.grads_group = qk_direct(p) && !form.onepass ? p.ho / p.hq : 1;
  k.scale = p.scale;
  const opgraph_gdn::GdnBwdWs w = workspace_of(p, split, form.onepass);
  k.ws_blocks = w.blocks;
  k.ws_egc = w.egc;
  k.ws_st = w.st;
  k.ws_dst = w.dst;
  k.ws_vn = w.vn;
  k.ws_dvn = w.dvn;
  k.ws_dq = w.dq;
  k.ws_dk = w.dk;
  k.ws_dv = w.dv;
  k.ws_ga = w.ga;
  k.ws_gd = w.gd;
  k.ws_sds = w.sds;
  k.ws_span = w.span;
  k.span_chunks = p.summary ? summary_span_chunks(p) : split;
  k.n_spans = p.summary ? 1 : opgraph_gdn::gdn_bwd_spans(p.t, split);
  const bool ckpt = p.checkpoints >= 0;
  if (ckpt) {
    k.ckpt_type = type_code(p.ckpt_type);
    k.ckpt_rows = p.ckpt_rows;
    k.ckpt_chunks = p.checkpoint_every / 64;
    k.ckpt_spans = gdn_bwd_checkpoint_spans(p);
  }
  l.workspace = w.total;
  const auto slots = static_cast<unsigned>(k.n_slots), heads = static_cast<unsigned>(p.ho),
             seqs = static_cast<unsigned>(p.n_seq), slices = static_cast<unsigned>(p.d / 64);
  auto dims = [](unsigned x, unsigned y, unsigned z, long long smem, unsigned threads = kThreads) {
    runtime::LaunchDims d;
    d.grid[0] = x;
    d.grid[1] = y;
    d.grid[2] = z;
    d.block[0] = threads;
    d.shared_bytes = static_cast<unsigned>(smem);
    return d;
  };
  const bool split_on = split > 0;
  // Grid x 0: not launched by this form.
  const unsigned sx = split_on ? slices : 0, wx = split_on ? 0 : slices;
  const auto spans = static_cast<unsigned>(seqs * (split_on ? k.n_spans : 1));
  l.dims[kPrep] = dims(slots, heads, 1, opgraph_gdn::gdn_bwd_prep_smem_bytes(p.d));
  l.dims[kFwdSummary] = dims(2 * sx, heads, spans, opgraph_gdn::gdn_bwd_fwd_scan_smem_bytes(p.d));
  l.dims[kRevSummary] = dims(sx, heads, spans, opgraph_gdn::gdn_bwd_rev_scan_smem_bytes(p.d));
  l.dims[kFixup] = dims(2 * sx, heads, seqs, opgraph_gdn::gdn_bwd_fixup_smem_bytes(p.d));
  // With checkpoints the forward recompute is always the seeded spans (a split's summary and fix-up exit their
  // forward CTAs at once).
  l.dims[kFwdScan] = dims(ckpt ? 0 : wx, heads, seqs, opgraph_gdn::gdn_bwd_fwd_scan_smem_bytes(p.d));
  l.dims[kFwdSpan] = ckpt ? dims(slices, heads, static_cast<unsigned>(seqs * k.ckpt_spans),
                                 opgraph_gdn::gdn_bwd_fwd_scan_smem_bytes(p.d))
                          : dims(sx, heads, spans, opgraph_gdn::gdn_bwd_fwd_scan_smem_bytes(p.d));
  l.dims[kRevScan] = dims(wx, heads, seqs, opgraph_gdn::gdn_bwd_rev_scan_smem_bytes(p.d));
  // The fused forward recompute: one CTA of three warpgroups a (head, sequence), as the forward's fused prefill.
  l.dims[kFwdFused] = dims(0, heads, seqs, 0);
  if (form.fused) {
    l.fwd = fused_recompute_params(p, k);
    l.dims[kFwdFused] =
        dims(1, heads, seqs, opgraph_gdn::gdn_bwd_fwd_fused_smem_bytes(p.d), opgraph_gdn::kGdnFusedWsThreads);
    l.dims[kPrep].grid[0] = 0;
    l.dims[kFwdScan].grid[0] = 0;
  }
  // The fused reverse scan: one CTA of three warpgroups a (head, sequence) for both V halves of dS^T.
  l.dims[kRevFused] = dims(0, heads, seqs, 0);
  if (form.fused_rev) {
    l.dims[kRevFused] = dims(1, heads, seqs, opgraph_gdn::gdn_bwd_rev_fused_smem_bytes(p.d),
                             opgraph_gdn::kGdnFusedWsThreads);
    l.dims[kRevScan].grid[0] = 0;
  }
  l.dims[kRevSpan] = dims(sx, heads, spans, opgraph_gdn::gdn_bwd_rev_scan_smem_bytes(p.d));
  // The fused forms with checkpoints: the forward recompute over the checkpoints' spans, each seeded by its own.
  if (form.fused && ckpt)
    l.dims[kFwdSpanF] = dims(1, heads, static_cast<unsigned>(seqs * k.ckpt_spans),
                             opgraph_gdn::gdn_bwd_fwd_fused_smem_bytes(p.d), opgraph_gdn::kGdnFusedWsThreads);
  // The fused forms' split: the forward summaries (value and transition rows), the fix-up's forward walk, the
  // forward recompute of every span, the reverse summaries, the fix-up's reverse walk, the reverse scan of every
  // span (one CTA of three warpgroups a (head, sequence x span) each but the walks). (B9 refuses it with
  // checkpoints: its summaries and the spans seeded by them would each need the one GdnParams's span fields.)
  if ((form.fused_rev || form.onepass) && split_on) {
    l.fwd = fused_recompute_params(p, k);
    const long long fsmem = opgraph_gdn::gdn_bwd_fwd_fused_smem_bytes(p.d);
    const long long rsmem = opgraph_gdn::gdn_bwd_rev_fused_smem_bytes(p.d);
    const unsigned ws_threads = opgraph_gdn::kGdnFusedWsThreads;
    l.dims[kFwdSumF] = dims(2, heads, spans, opgraph_gdn::gdn_fused_ws_smem_bytes(p.d), ws_threads);
    l.dims[kFixup] = dims(slices, heads, seqs, opgraph_gdn::gdn_bwd_fixup_smem_bytes(p.d));
    l.dims[kFwdSpanF] = dims(1, heads, spans, fsmem, ws_threads);
    l.dims[kRevSumF] = dims(1, heads, spans, rsmem, ws_threads);
    l.dims[kFixupRev] = dims(slices, heads, seqs, opgraph_gdn::gdn_bwd_fixup_smem_bytes(p.d));
    l.dims[kRevSpanF] = dims(1, heads, spans, rsmem, ws_threads);
  }
  // The one-pass form: its first pass (the fused recompute's CTA and argument; under its split the fused split's
  // first five kernels above) and gdn_bwd_onepass, one CTA of 16 warps a (head, sequence), or split a (head,
  // sequence x span).
  if (form.onepass) {
    l.fwd = fused_recompute_params(p, k);
    l.dims[kFwdSt] = dims(split_on ? 0 : 1, heads, seqs, opgraph_gdn::gdn_bwd_fwd_fused_smem_bytes(p.d),
                          opgraph_gdn::kGdnFusedWsThreads);
    l.dims[kOnePass] =
        dims(1, heads, spans, opgraph_gdn::kGdnBwdOnePassSmemBytes, opgraph_gdn::kGdnBwdGradsThreads);
  }
  // Nothing launched that the form does not request (gdn_summary_bwd's launches are set below).
  for (int e = 0; e < kKernels; ++e)
    if (!p.summary && !form_entry(e, form, ckpt)) l.dims[static_cast<std::size_t>(e)].grid[0] = 0;
  l.dims[kGrads] = dims(slots, static_cast<unsigned>(p.ho / k.grads_group), 1,
                        opgraph_gdn::gdn_bwd_grads_smem_bytes(p.d), opgraph_gdn::kGdnBwdGradsThreads);
  if (form.onepass) l.dims[kGrads].grid[0] = 0;
  // The head-group sums of what gdn_bwd_grads staged: only where it staged something (the one-pass form: always, its
  // dq / dk sums through the l2norm Jacobian).
  const bool finish = form.onepass || !qk_direct(p) || p.hv != p.ho;
  l.dims[kFinish] =
      dims(finish ? static_cast<unsigned>((p.t + kFinishTokensPerBlock - 1) / kFinishTokensPerBlock) : 0, 1, 1, 0);
  // The gate parameters' sums: only when a d_a_log or d_dt_bias is produced.
  l.dims[kGateParams] = dims(p.d_a_log >= 0 || p.d_dt_bias >= 0 ? heads : 0, 1, 1, 0);
  if (p.summary) {
    // gdn_summary_bwd: the prep, then G (the reverse summary, every sequence whole) and, when
    // produced, M (the forward summary's transition rows; its value-row CTAs exit at once).
    for (int e = 0; e < kKernels; ++e)
      if (e != kPrep) l.dims[static_cast<std::size_t>(e)].grid[0] = 0;
    l.dims[kRevSummary] = dims(slices, heads, seqs, opgraph_gdn::gdn_bwd_rev_scan_smem_bytes(p.d));
    if (p.transition >= 0)
      l.dims[kFwdSummary] = dims(2 * slices, heads, seqs, opgraph_gdn::gdn_bwd_fwd_scan_smem_bytes(p.d));
  }
  return l;
}

class GdnBwdPlan final : public CompiledPlan {
 public:
  GdnBwdPlan(GdnBwdProblem p, BwdForm form, runtime::KernelRuntime* rt,
             std::array<const runtime::LoadedKernel*, kKernels> kernels, OperandTable table,
             std::array<std::int32_t, kSlots> rows)
      : p_(std::move(p)), form_(form), rt_(rt), kernels_(kernels), table_(std::move(table)), rows_(rows),
        launch_(launch_for(p_, form_)) {}
  std::int64_t workspace_size() const override { return launch_.workspace; }
  Result<std::int64_t> workspace_size_for(const VariantPack& pack) const override {
    if (!pack.has_overrides()) return launch_.workspace;
    if (!table_.accepts_overridden(pack)) return table_.explain_overridden(pack);
    auto q = gdn_bwd_overridden_problem(p_, pack, table_.layout());
    if (q.is_bad()) return q.status();
    OPGRAPH_CHECK(spans_fit(*q));
    return launch_for(*q, form_).workspace;
  }

  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (!ctx.device)
      return {ErrorCode::INVALID_VALUE,
              "engine linear_attention executes device buffers; this call has no device handle"};
    if (ctx.device->ordinal >= 0 && ctx.device->ordinal != rt_->device().ordinal)
      return {ErrorCode::INVALID_CUDA_DEVICE, "engine linear_attention: the plan was built on device " +
                                                  std::to_string(rt_->device().ordinal) +
                                                  "; this call's handle drives device " +
                                                  std::to_string(ctx.device->ordinal)};
    // The one branch for execute-time shape overrides: the built launch, or one for
    // the call's T and N (the same kernels), checked before anything runs.
    BwdLaunch moved;
    const BwdLaunch* l = &launch_;
    if (!pack.has_overrides()) {
      if (!table_.accepts(pack)) return table_.explain(pack);
    } else {
      if (!table_.accepts_overridden(pack)) return table_.explain_overridden(pack);
      auto q = gdn_bwd_overridden_problem(p_, pack, table_.layout());
      if (q.is_bad()) return q.status();
      OPGRAPH_CHECK(spans_fit(*q));
      moved = launch_for(*q, form_);
      l = &moved;
    }
    if (ctx.workspace.bytes < l->workspace || !ctx.workspace.data)
      return {ErrorCode::INVALID_VALUE, "engine linear_attention: gdn_bwd needs a workspace of " +
                                            std::to_string(l->workspace) + " bytes" +
                                            (l == &launch_ ? "" : " at the call's extents") + ", got " +
                                            std::to_string(ctx.workspace.data ? ctx.workspace.bytes : 0)};
    if (reinterpret_cast<std::uintptr_t>(ctx.workspace.data) % 256 != 0)
      return {ErrorCode::INVALID_VALUE, "engine linear_attention: the gdn_bwd workspace must be 256-byte aligned"};
    const runtime::ContextScope bound(rt_->api(), rt_->context());
    OPGRAPH_CHECK(bound.status());
    const OperandBuffer* ops = pack.operands().data();
    auto ptr = [&](int slot) -> unsigned long long {
      const std::int32_t row = rows_[static_cast<std::size_t>(slot)];
      if (row < 0) return 0;
      return reinterpret_cast<unsigned long long>(ops[table_.rows()[static_cast<std::size_t>(row)].position].data);
    };
    GdnBwdParams a = l->params;
    a.q = ptr(kQ);
    a.k = ptr(kK);
    a.v = ptr(kV);
    a.g = ptr(kG);
    a.beta = ptr(kBeta);
    a.cu_seqlens = ptr(kCu);
    a.initial_state = ptr(kInit);
    a.d_o = ptr(kDO);
    a.d_final_state = ptr(kDFinal);
    a.dq = ptr(kDQ);
    a.dk = ptr(kDK);
    a.dv = ptr(kDV);
    a.dg = ptr(kDG);
    a.dbeta = ptr(kDBeta);
    a.d_initial_state = ptr(kDInit);
    a.a_log = ptr(kALog);
    a.dt_bias = ptr(kDtBias);
    a.d_a_log = ptr(kDALog);
    a.d_dt_bias = ptr(kDDt);
    a.transition = ptr(kTrans);
    a.checkpoints = ptr(kCkpt);
    a.ws = reinterpret_cast<unsigned long long>(ctx.workspace.data);
    if (a.n_seq <= 0 || a.ho <= 0) return Status::ok();
    const CUstream stream = static_cast<CUstream>(ctx.stream);
    void* args[] = {&a};
    // The fused forward recompute takes the forward's argument: the inputs it reads and the workspace it writes.
    opgraph_gdn::GdnParams f;
    void* fused_args[] = {&f};
    if (form_.fused || form_.onepass) {  // (its split's forward launches too; the one-pass form's first pass)
      f = l->fwd;
      f.q = a.q;
      f.k = a.k;
      f.v = a.v;
      f.g = a.g;
      f.beta = a.beta;
      f.cu_seqlens = a.cu_seqlens;
      f.initial_state = a.initial_state;
      f.a_log = a.a_log;
      f.dt_bias = a.dt_bias;
      f.ckpt = a.checkpoints;
      f.bwd_ws = a.ws;
    }
    // The one-pass form: gdn_bwd_onepass's maps for the call's pointers (the plan's OnePassMapCache: encoded where no
    // recent call had them), its dq / dk sums zeroed on the stream.
    OnePassMaps maps{};
    void* onepass_args[] = {&a, &maps};
    if (form_.onepass) {
      const runtime::CudaDriverApi& api = rt_->api();
      // (No token: every CTA's walk is empty and reads no map; d_initial_state is d_final_state.)
      if (a.t > 0) {
        OPGRAPH_CHECK(map_cache_.maps(api, a, maps));
        OPGRAPH_CHECK(zero_onepass_sums(api, a, stream));
      }
    }
    for (int i = 0; i < kKernels; ++i) {
      const runtime::LaunchDims& d = l->dims[static_cast<std::size_t>(i)];
      // Not this form's, T = 0 (no token to finish), no gate parameter gradient.
      if (d.grid[0] == 0) continue;
      const bool fwd_arg = i == kFwdFused || i == kFwdSumF || i == kFwdSpanF || i == kFwdSt;
      OPGRAPH_CHECK(rt_->launch(*kernels_[static_cast<std::size_t>(i)], d, stream,
                                i == kOnePass ? onepass_args : fwd_arg ? fused_args : args));
    }
    return Status::ok();
  }

 private:
  // A call's extents under the plan's split: N x spans within the grid's z.
  Status spans_fit(const GdnBwdProblem& q) const {
    if (form_.onepass)
      if (const std::string why = gdn_bwd_b11_refusal(q); !why.empty())
        return Status(ErrorCode::INVALID_VARIANT_PACK,
                      "engine linear_attention: gdn_bwd: shape override under PIPELINE_ARCH 5: rule B11 one pass: " +
                          why);
    if (q.checkpoints >= 0 && q.n_seq * gdn_bwd_checkpoint_spans(q) > 65535)
      return Status(ErrorCode::INVALID_VARIANT_PACK,
                    "engine linear_attention: gdn_bwd: shape override: N x checkpoint spans (" +
                        std::to_string(q.n_seq) + " x " + std::to_string(gdn_bwd_checkpoint_spans(q)) +
                        ") exceeds the grid's 65535");
    if (form_.split <= 0 || q.n_seq * opgraph_gdn::gdn_bwd_spans(q.t, form_.split) <= 65535) return Status::ok();
    return Status(ErrorCode::INVALID_VARIANT_PACK,
                  "engine linear_attention: gdn_bwd: shape override: N x spans (" + std::to_string(q.n_seq) + " x " +
                      std::to_string(opgraph_gdn::gdn_bwd_spans(q.t, form_.split)) +
                      ") exceeds the grid's 65535 under the plan's CHAIN_SPLIT " + std::to_string(form_.split));
  }

  GdnBwdProblem p_;
  BwdForm form_;  // its split: CHAIN_SPLIT (chunks a span; 0: none)
  runtime::KernelRuntime* rt_;
  std::array<const runtime::LoadedKernel*, kKernels> kernels_;
  OperandTable table_;
  std::array<std::int32_t, kSlots> rows_;  // slot -> table row (-1: not bound)
  BwdLaunch launch_;
  mutable OnePassMapCache map_cache_;  // the one-pass form's TMA maps of the last calls
};

Result<OperandTable> operand_table_for(const GdnBwdProblem& p, const DeclaredLayout& layout,
                                       std::array<std::int32_t, kSlots>& rows) {
  const std::int64_t uids[kSlots] = {p.q,  p.k,  p.v,  p.g,  p.beta,  p.cu_seqlens, p.initial_state,
                                     p.d_o, p.d_final_state, p.a_log, p.dt_bias, p.dq, p.dk, p.dv,
                                     p.dg, p.dbeta, p.d_initial_state, p.d_a_log, p.d_dt_bias, p.transition,
                                     p.checkpoints};
  std::vector<std::int64_t> positions;
  rows.fill(-1);
  for (int s = 0; s < kSlots; ++s) {
    if (uids[s] < 0) continue;
    const std::int64_t pos = layout.index_of(uids[s]);
    if (pos < 0)
      return Status(ErrorCode::INTERNAL_ERROR, "engine linear_attention: gdn_bwd: tensor uid " +
                                                   std::to_string(uids[s]) +
                                                   " has no position in the graph's operand layout");
    auto it = std::find(positions.begin(), positions.end(), pos);
    rows[static_cast<std::size_t>(s)] = static_cast<std::int32_t>(it - positions.begin());
    if (it == positions.end()) positions.push_back(pos);
  }
  OperandNeeds needs;
  needs.declared_extents = true;
  needs.declared_strides = true;
  needs.declared_dtype = true;
  needs.memory = MemoryKind::DEVICE;
  OperandTable table(layout, needs, "linear_attention", positions);
  // Row loads of q/k/v and pair loads / stores of dO, the gradients and the states.
  for (int s : {kQ, kK, kV, kDO, kInit, kDFinal, kDQ, kDK, kDV, kDInit, kTrans, kCkpt}) {
    const std::int32_t row = rows[static_cast<std::size_t>(s)];
    if (row >= 0) table.require_alignment(static_cast<std::size_t>(row), 16);
  }
  return table;
}

}  // namespace

Result<GdnBwdProblem> gdn_bwd_overridden_problem(const GdnBwdProblem& built, const VariantPack& pack,
                                         const DeclaredLayout& layout) {
  using Seen = OverrideOperand;
  auto seen = [&](std::int64_t uid) { return override_operand(pack, layout, uid); };
  auto extent = [](const Seen& x, int i) { return x.extent(i); };
  auto refuse = [](const Seen& x, const std::string& rule) {
    return Status(ErrorCode::INVALID_VARIANT_PACK,
                  "engine linear_attention: gdn_bwd: shape override of " + operand_label(*x.slot) + ": " + rule);
  };
  auto list = [](const std::array<std::int64_t, kMaxRank>& v, int rank) { return int_list(v.data(), rank); };
  // Only dim 0 may change (heads and the head dim select the kernels); a tensor
  // other than q, k, v stays dense row-major.
  auto check_slot = [&](const Seen& x, bool dense) -> Status {
    if (!x.buf || !x.buf->overridden) return Status::ok();
    const int rank = x.slot->rank;
    for (int i = 1; i < rank; ++i)
      if (x.buf->dims[i] != x.slot->dims[i])
        return refuse(x, "rule built_extents: extents " + list(x.buf->dims, rank) + " change dim " +
                             std::to_string(i) + " (" + std::to_string(x.slot->dims[i]) +
                             " when built); only the token count and the sequence count may change");
    if (dense) {
      std::int64_t want = 1;
      for (int i = rank - 1; i >= 0; --i) {
        if (x.buf->dims[i] != 1 && x.buf->strides[i] != want)
          return refuse(x, "rule B7 layout: strides " + list(x.buf->strides, rank) +
                               "; the kernels read and write it dense row-major");
        want *= x.buf->dims[i];
      }
    }
    return Status::ok();
  };
  GdnBwdProblem p = built;
  const std::int64_t tok_uids[] = {built.q,   built.k,  built.v,  built.g,  built.beta, built.d_o,
                                   built.dq,  built.dk, built.dv, built.dg, built.dbeta};
  std::int64_t t = -1;
  for (std::size_t i = 0; i < std::size(tok_uids); ++i) {
    const Seen x = seen(tok_uids[i]);
    if (!x.buf) continue;
    OPGRAPH_CHECK(check_slot(x, i >= 3));
    const std::int64_t e = extent(x, 0);
    if (t < 0) t = e;
    else if (e != t)
      return refuse(x, "rule token_axis: " + std::to_string(e) + " tokens here, " + std::to_string(t) +
                           " for q; override every tensor the token axis spans (q, k, v, g, beta, dO, dQ, dK, dV, "
                           "dG, dBeta) alike");
  }
  // q, k, v: a view's token and head strides (rule B7).
  struct Strides {
    std::int64_t uid;
    std::int64_t *ts, *hs;
  };
  for (const Strides& st :
       {Strides{built.q, &p.q_ts, &p.q_hs}, Strides{built.k, &p.k_ts, &p.k_hs}, Strides{built.v, &p.v_ts, &p.v_hs}}) {
    const Seen x = seen(st.uid);
    if (!x.buf || !x.buf->overridden) continue;
    const auto& b = *x.buf;
    auto fits = [&](int i) { return b.dims[i] == 1 || (b.strides[i] >= 0 && b.strides[i] % 8 == 0); };
    if (b.strides[2] != 1 || !fits(0) || !fits(1))
      return refuse(x, "rule B7 layout: the head dim must stay contiguous and the token and head strides "
                       "multiples of 8 elements; got strides " + list(b.strides, 3));
    *st.ts = b.dims[0] == 1 ? 0 : b.strides[0];
    *st.hs = b.dims[1] == 1 ? 0 : b.strides[1];
  }
  p.t = t;
  const Seen cu = seen(built.cu_seqlens);
  p.n_seq = cu.buf ? extent(cu, 0) - 1 : built.n_seq;
  if (p.n_seq < 0 || p.n_seq > 65535)
    return refuse(cu, "rule B8 grid: cu_seqlens holds N + 1 offsets with 0 <= N <= 65535; got " +
                          std::to_string(p.n_seq + 1));
  for (std::int64_t uid : {built.initial_state, built.d_final_state, built.d_initial_state, built.transition}) {
    const Seen x = seen(uid);
    if (!x.buf) continue;
    OPGRAPH_CHECK(check_slot(x, true));
    if (extent(x, 0) != p.n_seq)
      return refuse(x, "rule state_rows: " + std::to_string(extent(x, 0)) + " state rows for " +
                           std::to_string(p.n_seq) + " sequences (one row a sequence)");
  }
  // state_checkpoints: its rows may change with T, never below what the call's tokens may need (rule B6).
  if (const Seen ck = seen(built.checkpoints); ck.buf) {
    OPGRAPH_CHECK(check_slot(ck, true));
    p.ckpt_rows = extent(ck, 0);
    if (p.ckpt_rows < gdn_bwd_checkpoint_rows_needed(p))
      return refuse(ck, "rule B6 checkpoints: " + std::to_string(p.ckpt_rows) + " rows; " + std::to_string(p.t) +
                            " tokens may need floor(T / " + std::to_string(p.checkpoint_every) +
                            ") = " + std::to_string(gdn_bwd_checkpoint_rows_needed(p)));
  }
  return p;
}

long long gdn_bwd_checkpoint_spans(const GdnBwdProblem& p) {
  return opgraph_gdn::gdn_bwd_spans(p.t, p.checkpoint_every / 64);
}
std::int64_t gdn_bwd_checkpoint_rows_needed(const GdnBwdProblem& p) { return p.t / p.checkpoint_every; }

std::vector<runtime::KernelRequest> gdn_bwd_kernel_requests(const GdnBwdProblem& p, const BwdForm& form) {
  std::vector<runtime::KernelRequest> out;
  if (p.summary) {
    out.push_back(request(p.d, p.io, kEntries[kPrep]));
    if (p.transition >= 0) out.push_back(request(p.d, p.io, kEntries[kFwdSummary]));
    out.push_back(request(p.d, p.io, kEntries[kRevSummary]));
    return out;
  }
  for (int e = 0; e < kKernels; ++e)
    if (form_entry(e, form, p.checkpoints >= 0)) out.push_back(request(p.d, p.io, kEntries[e], form.onepass));
  return out;
}

std::vector<runtime::KernelRequest> gdn_bwd_kernel_requests(const GdnBwdProblem& p, long long split) {
  return gdn_bwd_kernel_requests(p, BwdForm{split, false});
}

std::int64_t gdn_bwd_workspace_bytes(const GdnBwdProblem& p, long long split, bool onepass) {
  return workspace_of(p, split, onepass).total;
}

std::vector<BwdLaunchGrid> gdn_bwd_launch_grids(const GdnBwdProblem& p, const BwdForm& form) {
  const BwdLaunch l = launch_for(p, form);
  std::vector<BwdLaunchGrid> out;
  for (int e = 0; e < kKernels; ++e) {
    const runtime::LaunchDims& d = l.dims[static_cast<std::size_t>(e)];
    if (d.grid[0] > 0) out.push_back({kEntries[e], d.grid[0], d.grid[1], d.grid[2]});
  }
  return out;
}

std::vector<runtime::KernelRequest> gdn_bwd_declared_specialisations() {
  std::vector<runtime::KernelRequest> out;
  for (int e = 0; e < kKernels; ++e)
    for (long long d : {64, 128})
      for (DataType io : {DataType::BFLOAT16, DataType::HALF})
        if (!onepass_entry(e) && (!fused_entry(e) || d == 128)) out.push_back(request(d, io, kEntries[e]));
  for (int e : {kFwdSt, kFwdSpanF, kOnePass, kFinish, kGateParams})
    out.push_back(request(128, DataType::BFLOAT16, kEntries[e], /*onepass=*/true));
  return out;
}

Result<std::unique_ptr<CompiledPlan>> build_gdn_bwd_plan(const OpGraph& graph, const PlanConfig& config,
                                                         const PlanContext& ctx) {
  if (!ctx.layout)
    return Status(ErrorCode::INTERNAL_ERROR, "engine linear_attention: gdn_bwd built without the graph's layout");
  auto p = analyze_gdn_bwd(graph);  // gdn_bwd_support's answer, and the problem
  if (p.is_bad()) return p.status();
  auto form = gdn_bwd_form(*p, config);
  if (form.is_bad()) return form.status();
  std::array<std::int32_t, kSlots> rows{};
  const bool onepass = form->onepass;
  auto table = operand_table_for(*p, *ctx.layout, rows);
  if (table.is_bad()) return table.status();
  // The device the planning target names (device 0 for a target that names none),
  // its runtime shared with the other families and held for the whole build.
  const int ordinal = ctx.target().has_device() ? std::max(ctx.target().device->ordinal, 0) : 0;
  auto leased = runtime::shared_kernel_runtime(ordinal);
  if (leased.is_bad()) return leased.status();
  runtime::KernelRuntime& rt = **leased;
  if (onepass && (!rt.api().tensor_map_encode_tiled || !rt.api().memset_d32_async))
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                  "engine linear_attention: gdn_bwd: knob PIPELINE_ARCH 5 (the one-pass backward): rule B11 one pass: "
                  "the driver has no cuTensorMapEncodeTiled or cuMemsetD32Async");
  const runtime::ContextScope bound(rt.api(), rt.context());
  OPGRAPH_CHECK(bound.status());
  // The kernels the plan's form launches (the others stay null: their grids are empty).
  std::array<const runtime::LoadedKernel*, kKernels> kernels{};
  for (const auto& r : gdn_bwd_kernel_requests(*p, *form)) {
    auto k = rt.get(r);
    if (k.is_bad()) return k.status();
    for (int e = 0; e < kKernels; ++e)
      if (r.entry == kEntries[e]) kernels[static_cast<std::size_t>(e)] = *k;
  }
  return std::unique_ptr<CompiledPlan>(
      std::make_unique<GdnBwdPlan>(std::move(*p), *form, &rt, kernels, std::move(*table), rows));
}

Status gdn_bwd_plan_kernels(const OpGraph& graph, const PlanConfig& config, const PlanContext& ctx,
                            const KernelSink& sink) {
  auto p = analyze_gdn_bwd(graph);
  if (p.is_bad()) return p.status();
  auto form = gdn_bwd_form(*p, config);
  if (form.is_bad()) return form.status();
  if (!ctx.facts || !ctx.target().has_device())
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                  "engine linear_attention: compiles for a device target; this target has none");
  for (const auto& r : gdn_bwd_kernel_requests(*p, *form)) OPGRAPH_CHECK(sink(r));
  return Status::ok();
}

}  // namespace opgraph::linear_attention
