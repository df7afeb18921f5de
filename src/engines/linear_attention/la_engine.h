// engines/linear_attention/la_engine.h — the linear_attention family's engine.
//
// Engine "linear_attention": the gdn forward op (rules in gdn_problem.h) on
// NVRTC kernels compiled from kernels/gdn_{prefill,two_pass,decode}.cu through the runtime's
// compiled cache: a chunked tensor-core prefill kernel and a token-recurrent
// decode kernel (T <= 8 N), both one kernel per layout class (head dim and
// q/k/v type; B, T, heads, cu_seqlens and the attributes at run time).
#pragma once

#include <memory>
#include <vector>

#include "engines/linear_attention/gdn_problem.h"
#include "engines/linear_attention/kernels/gdn_params.cuh"
#include "exec/declared_layout.h"
#include "opgraph/engine.h"
#include "plan/manifest.h"
#include "runtime/nvrtc_compiler.h"

namespace opgraph::runtime {
class KernelRuntime;
}

namespace opgraph::linear_attention {

std::unique_ptr<Engine> make_la_engine(EngineIdentity identity);

// The process's KernelRuntime on device `ordinal` (one per device, shared with the
// other families that compile kernels: runtime/shared_runtimes.h), or nullptr
// before the first build_plan for that device opened it. build_plan opens the
// device its planning target names (DeviceProperties::ordinal; device 0 for a
// target that names none; INVALID_CUDA_DEVICE for one that does not exist);
// execute refuses a handle on another device (INVALID_CUDA_DEVICE). For tests.
runtime::KernelRuntime* shared_runtime_if_open(int ordinal = 0);

// The prefill modes (the engine's one knob, PIPELINE_ARCH; the first is the default):
//  0 one pass: gdn_prefill, one CTA per (V-slice, head, sequence) walks the chunks;
//  1 two passes: gdn_prefill_prep (one CTA per (chunk, head): everything that does
//    not depend on the state, into the plan's workspace), then gdn_prefill_scan
//    (one CTA per (V-slice, head, sequence): the state products per chunk).
//  2 fused (d = 128 only; sm_90a wgmma): gdn_prefill_fused, one CTA of two
//    warpgroups per (head, sequence) walks the chunks with every product on
//    wgmma and nothing between chunks in global memory (no workspace). A
//    d = 64 graph is refused under it at build (rule fused_head_dim).
//  3 fused, warp-specialised (d = 128): the same entries built with GDN_FUSED_WS=1
//    (kernels/gdn_fused_ws3.cuh ws::ws3_pass: two state warpgroups, which also load and
//    normalise the rows three chunks deep, and an auxiliary one a chunk ahead with the
//    gates, L / P, the inverse and T_v; 384 threads); 0.78-0.80x mode 2's time on the
//    H200 (2026-12-03, 0b900ea). The heuristics propose it right before mode 2 wherever
//    they propose mode 2.
//  4 fused, warp-specialised, the inverse on fp16 tiles (d = 128): mode 3's entries built with
//    GDN_WS3_F16INV=1 as well (kernel names end "_h"; kernels/gdn_ws_inverse.cuh); 0.934-0.949x
//    mode 3's time on an H100 (bench/results/2026-12-06-gdn-f16inv-h100.txt). fp16's range bounds
//    the chunk inverse T only where every A_l = I - beta_l k_l k_l^T is a contraction, which unit
//    keys and beta in [0, 2] make so: |T| <= 2 (< 5.3 with bf16 keys; scripts/check_f16_inverse_domain.py).
//    Rule f16_inverse_domain: mode 4 needs use_qk_l2norm (unit keys in the kernel); with
//    use_beta_sigmoid (beta in (0, 1), (0, 2) under allow_neg_eigval) the declaration proves the rest,
//    split or not; without it beta's range is checked at run time (unsplit, no bound checkpoints: the
//    "_g" builds): each (sequence, head) CTA of the fp16 build reads its betas first and, where one
//    leaves [0, 2], marks the pair in the plan's workspace ([N][HO] words) and skips it; mode 3's form
//    runs next and computes the marked pairs alone, so every pair is computed once. The heuristics
//    propose it right before mode 3 wherever they propose mode 3 on a graph where f16_inverse_domain
//    holds, and before the unsplit mode 3 where f16_inverse_guarded does.
// Under use_decode all run the decode kernel (no workspace). All keep
// batch_invariant: a chunk's pieces depend only on its own tokens.
// Mode 5 is gdn_bwd's alone (gdn_bwd.h: the one-pass backward); the forward refuses it (rule L11 backward only).
enum : int {
  kPrefillOnePass = 0,
  kPrefillTwoPass = 1,
  kPrefillFused = 2,
  kPrefillFusedWs = 3,
  kPrefillFusedWsH = 4,
  kBwdOnePass = 5
};

// Whether the declaration of `p` keeps the fused prefill's fp16 inverse (PIPELINE_ARCH 4) in fp16's
// range (rule f16_inverse_domain above): d = 128, use_qk_l2norm and use_beta_sigmoid.
bool f16_inverse_domain(const GdnProblem& p);
// Whether PIPELINE_ARCH 4 serves `p`'s unsplit plan with the run-time guard: d = 128, use_qk_l2norm, no
// use_beta_sigmoid, no bound state_checkpoints.
bool f16_inverse_guarded(const GdnProblem& p);

// Chain splitting (knob CHAIN_SPLIT, two-pass prefill only; 0 = off): the
// sequential pass split into spans of `split` 64-token chunks computed in
// parallel: gdn_span_summary (each span's end state H from a zero seed and its
// transition M, rows of M from the identity), gdn_span_fixup (per sequence the
// true seed of every span, X <- X M + H), gdn_span_scan (each span from its seed:
// O, and final_state from the last span). The values the knob takes:
inline constexpr long long kChainSplits[] = {0, 8, 16, 32, 64, 128, 256};

// What the split rules (chain_split_rule, fused_split_rule below; gdn_bwd_chain_split_rule) share:
// over the knob's span lengths j below `chunks` (a sequence's, on average) whose N x spans fits the
// grid's 65535, the least modelled cost(j, spans) (ties to the longer span), taken where it is at
// most keep_num / keep_den of the `unsplit` cost; else 0 (no split).
template <class Cost>
long long cheapest_split(long long chunks, long long n_seq, long long t, long long unsplit, long long keep_num,
                         long long keep_den, Cost cost) {
  long long best = 0, best_cost = unsplit;
  for (long long j : kChainSplits) {
    if (j == 0 || j >= chunks) continue;
    if (n_seq * opgraph_gdn::gdn_split_spans(t, j) > 65535) continue;
    const long long c = cost(j, (chunks + j - 1) / j);
    if (c < best_cost || (c == best_cost && best > 0 && j > best)) best = j, best_cost = c;
  }
  return best > 0 && keep_den * best_cost <= keep_num * unsplit ? best : 0;
}

// The kernel requests a plan of `p` compiles under `prefill_mode` and `split`:
// the main kernel (prefill, decode under use_decode, or the scan then the prep
// of the two-pass prefill; split: the span scan, the prep, the summary and the
// fix-up), then the pool copy when state_indices is bound and final_state produced.
std::vector<runtime::KernelRequest> kernel_requests(const GdnProblem& p, int prefill_mode = kPrefillOnePass,
                                                    long long split = 0);
// Whether request r (of kernel_requests) is PIPELINE_ARCH 4's guarded fallback: the build that checks beta
// (GDN_BETA_GUARD) without the fp16 inverse, launched after the fp16 one for the pairs it marked. build_plan tells it
// by its defines, not its name.
bool guard_fallback(const runtime::KernelRequest& r);

// The workspace (bytes) a plan of `p` under `prefill_mode` and `split` needs:
// 0 but for the two-pass prefill, ~72 KiB (d = 128) per (64-token chunk slot,
// head), with ceil(T / 64) + N chunk slots; a split adds three fp32 [D][D]
// blocks per (sequence, span, head).
std::int64_t workspace_bytes(const GdnProblem& p, int prefill_mode, long long split = 0);

// The span length the heuristics pick for a two-pass prefill on a device of
// `sm_count` multiprocessors (0: no split). The rule, from the H200 figures:
// every pass of the scan costs about the same time per chunk whatever the head
// count (one CTA a multiprocessor; bench/results/2026-12-02-gdn-ldmatrix-h200.txt:
// 1.6 ms for 512 chunks at 16 or 128 CTAs), so a pass of G CTAs over J chunks
// costs ~J x ceil(G / sm_count) chunk-steps. The split costs the summary
// (A x P x 2 D / 64 CTAs) plus the span scan (A x P x D / 64) over J = chunks / P
// each, against chunks x ceil(A x D / 64 / sm_count) unsplit (A = N x HO, chunks
// = ceil(T / N / 64)); the smallest modelled cost wins if it is at most 0.75 of
// the unsplit one.
long long chain_split_rule(const GdnProblem& p, long long sm_count);

// The chain split the heuristics propose for the fused prefill (d = 128; chunks a span, 0: none):
// chain_split_rule's model with the fused kernel's CTAs — one a (sequence x span, head) for the
// whole state, one CTA a multiprocessor, so a pass of G CTAs over J chunks costs J x ceil(G /
// sm_count) chunk-steps. Split, the summary pass runs 2 CTAs (H rows, M rows) a span but the
// last at 0.8 of a step (no O), the span scan one CTA a span, and the fix-up ~1.7 steps a span.
// Fitted to, and checked against, the H200's warp-specialised times at spans of 0 / 32 / 64 /
// 128 / 256 chunks (GdnGpu.TimingFiveCells, bench/results/2026-12-04-gdn-fused-split-h200.txt):
// the model is within 3 % of every measured ratio; it picks 32 at 2/8 heads (0.468 ms against
// 2.141 whole), 128 at 16/32 (1.419 against 2.190), 256 at 16/64 (1.969 against 2.192), one
// 32k sequence each, and none at 4 x 8192. The smallest modelled cost wins if it saves 5 %; never
// under batch_invariant. The model is of a split with no vanishing span (weak decay); with the span summaries'
// strong-decay shortcuts (GDN_SPAN_TAIL, GDN_WALK_SKIP, 2026-12-06) its picks are still the fastest spans of the
// three one-sequence cells under both gate regimes (H100, bench/results/2026-12-06-gdn-split-tail-h100.txt).
long long fused_split_rule(const GdnProblem& p, long long sm_count);

// The fused split's batches of several sequences (GDN_SPLIT_ADAPT, kernels/gdn_params.cuh): the longest sequence
// such a split leaves whole, in chunks — 5/4 of the chunks a multiprocessor takes when the batch's (chunk, head)
// steps are spread evenly over `sm_count`, so a batch of equal lengths that fills the device splits nothing and one
// long sequence among short ones does; 0 for one sequence (every sequence longer than a span splits). The plan's
// launch passes it to the kernels (GdnParams::split_min_chunks).
long long split_min_chunks(const GdnProblem& p, long long sm_count);
// Where the heuristics offer that split (spans of kAdaptSplit chunks) after the unsplit fused plans: a batch of
// several sequences whose chains fill the device (fused_first), which fused_split_rule leaves whole, not under
// batch_invariant, and whose chunks could hold a sequence longer than both a span and split_min_chunks. The lengths
// are on the device, so no rule can tell a skewed batch from an even one at planning: on the H100 the split took
// 0.89-0.90x the unsplit plan's time on the skewed varlen batch and 1.06x on four sequences of 8192 tokens
// (bench/results/2026-12-06-gdn-split-adapt-h100.txt); a caller whose batches are skewed pins it.
inline constexpr long long kAdaptSplit = 32;
bool offers_adapt_split(const GdnProblem& p, long long sm_count);

// Whether a decode plan of `p` (use_decode) runs gdn_decode_small (4 value rows a CTA of one
// warp since 2026-12-07, kernels/gdn_params.cuh; 8 of 2 warps when the rule was measured) rather than
// gdn_decode (32 rows a CTA of 4 warps): at most kDecodeSmallPairs
// (sequence, head) pairs. Measured on the H200 (bench/gdn_decode_sweep.sh,
// bench/results/2026-12-03-gdn-decode-sweep-h200.txt; 16/32 and 16/64 heads, T = 1, fp32
// pool in place, both with the token inputs loaded first): the small CTA is 3 % faster at
// B = 64 (2048 and 4096 pairs) and 2.4 % at 8192 pairs, 0.6-1.8 % slower from 16384. Fixed at
// build (a replayed plan keeps its kernel).
inline constexpr long long kDecodeSmallPairs = opgraph_gdn::kDecodeSmallPairs;  // gdn_params.cuh
bool decode_small(const GdnProblem& p);

// Whether the heuristics rank the fused prefill plans (PIPELINE_ARCH 3, then 2) before the
// two-pass one for `p` on a device of `sm_count` multiprocessors: d = 128, a prefill, and
// (sequence, head) CTAs (one a multiprocessor) on at least a fifth of the multiprocessors.
// Measured on the H200 in one process against the two-pass plan (bench/compare.py gdn,
// bench/results/2026-12-04-gdn-peers-d804a88-h200.txt): the warp-specialised form took 0.28-0.39x its time
// at 128 and 256 CTAs, 0.55-0.56x at 64 (1 x 32768 and 1 x 2048 tokens), 0.79x at 32, and 1.12x at
// 8 CTAs (2/8 heads, one 32k sequence: there chain_split_rule splits, and the split
// warp-specialised plan goes first: 0.73x the split two-pass plan). Between 8 and 32 CTAs the
// crossover is not measured; the rule takes the fused form from 27 CTAs of 132.
bool fused_first(const GdnProblem& p, long long sm_count);

// The family's heuristics (every mode): on a prefill graph the engine accepts, the split plans
// first — the warp-specialised fused one where fused_split_rule splits (d = 128; its fp16-inverse
// build, PIPELINE_ARCH 4, right before each PIPELINE_ARCH 3 plan where f16_inverse_domain holds), the two-pass
// one where chain_split_rule splits, the eight-warp fused one at fused_split_rule's span; then
// the fused plans (d = 128: warp-specialised, eight-warp) before the
// two-pass plan where fused_first holds, else after it (where offers_adapt_split holds, the warp-specialised
// fused split at kAdaptSplit right after the unsplit fused plans); the one-pass plan last; a graph the decode
// kernel serves gets the one-pass plan only (every mode runs the decode kernel); then the backend
// marker. A graph the engine declines gets the marker only (the reference serves it).
Result<std::vector<plan::Proposal>> heuristics(HeurMode mode, const PlanContext& ctx,
                                               const std::vector<const Engine*>& offered);

// The problem an execute with shape overrides runs (one kernel per layout class:
// the built plan's kernels at the call's extents): `built` with the token count T
// (dim 0 of q, k, v, g, beta, O, every one alike), the sequence count N
// (cu_seqlens [N + 1]; state_indices [N]), the state rows (dim 0 of
// initial_state / final_state; N without state_indices) and q / k / v's strides
// (rule L6) read from the normalised `pack` laid out by `layout`. Heads and the
// head dim select the kernels and may not change. A refusal is
// INVALID_VARIANT_PACK naming the tensor, its port and the rule.
Result<GdnProblem> overridden_problem(const GdnProblem& built, const VariantPack& pack, const DeclaredLayout& layout);

// Every specialisation the engine may compile (the CI compile set): prefill,
// decode, and the two-pass prefill's prep and scan for D in {64, 128} x q/k/v
// in {bf16, fp16}, and the pool copy.
std::vector<runtime::KernelRequest> declared_specialisations();

}  // namespace opgraph::linear_attention
