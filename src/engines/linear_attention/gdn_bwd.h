// engines/linear_attention/gdn_bwd.h — the linear_attention engine's gdn_bwd:
// one gdn_bwd node reduced to a GdnBwdProblem, its support rules, the kernels a
// plan compiles (kernels/gdn_bwd_states.cu, gdn_bwd_grads.cu) and the plan. la_engine.cpp hands every
// graph whose one node is gdn_bwd here (is_gdn_bwd).
//
// analyze_gdn_bwd accepts a graph or declines with GRAPH_NOT_SUPPORTED naming
// the rule (B1..B8), the node and the tensor:
//  B1 op: exactly one node, op gdn_bwd;
//  B2 q/k/v: BFLOAT16 or HALF, one type for the three;
//  B3 head dim: K = V = D with D in {64, 128};
//  B4 types: g, beta, dO, a_log, dt_bias and the gradients dQ, dK, dV, dG,
//     dBeta, d_a_log, d_dt_bias FLOAT, BFLOAT16 or HALF; initial_state,
//     d_final_state, d_initial_state FLOAT or BFLOAT16;
//  (B5, safe_gate, was declined by the first version; it is served now)
//  B6 checkpoints: a bound state_checkpoints (the forward's, every c = checkpoint_every_n_tokens tokens) FLOAT
//     or BFLOAT16, dense, with at least floor(T / c) rows (the most a batch of T tokens needs: the kernels
//     never read past them), and N x ceil(T / c) spans within the grid (65535); the forward recompute then
//     runs spans of c tokens at once, each from its checkpoint (gdn_bwd_fwd_span). Without the input the
//     cadence changes nothing: every chunk state is recomputed from initial_state.
//     (Until 2026-12-04 B6 declined any cadence.)
//  B7 layout: q, k, v with the head dim contiguous and token / head strides
//     multiples of 8 elements (as the forward's L6); every other operand dense
//     row-major as declared; dQ, dK, dV, dG, dBeta non-virtual (a virtual
//     d_initial_state, d_a_log or d_dt_bias is not written);
//  B8 grid: N <= 65535 sequences, HO <= 65535 heads.
//  B9 fused recompute (a plan's knob, at build): PIPELINE_ARCH 2 and 3 (BwdForm::fused, fused_rev) take D = 128
//     (not gdn_summary_bwd); 2 takes CHAIN_SPLIT 0 only, 3 every CHAIN_SPLIT (its split: six span kernels) but not
//     with state_checkpoints bound (then the fused forward recompute runs spans of the cadence seeded by them).
//  B10 forward only (at build): PIPELINE_ARCH 4 (the forward prefill's inverse on fp16 tiles) has no backward form.
//  B11 one pass (a plan's knob, at build): PIPELINE_ARCH 5 (BwdForm::onepass: gdn_bwd_fwd_st_fused storing each
//     chunk's S^T and T, then gdn_bwd_onepass, one CTA a (head, sequence) walking the chunks in reverse with dS^T on
//     chip, its loads by TMA, dq and dk added in L2 into [T][HQ] / [T][HK] sums that gdn_bwd_finish takes through
//     the l2norm Jacobian; under CHAIN_SPLIT the first pass is PIPELINE_ARCH 3's split's forward summaries, walk and
//     span recompute, its reverse summaries and walk seed each span's dS^T, and gdn_bwd_onepass runs one CTA a
//     (head, sequence x span)) takes D = 128, bf16 q, k, v and dO, every CHAIN_SPLIT, no state_checkpoints, not
//     gdn_summary_bwd and not batch_invariant (its dq / dk sums' order varies run to run); T and the chunk slots'
//     S^T rows within the TMA maps' 32-bit coordinates; a driver with cuTensorMapEncodeTiled and cuMemsetD32Async.
// Served: scale, use_qk_l2norm, gate_domain log and linear, safe_gate (with or
// without a_log / dt_bias; d_a_log and d_dt_bias as deterministic sums over the
// tokens), use_beta_sigmoid,
// allow_neg_eigval, initial_state, d_final_state (absent: zero),
// overwrite_initial_state (d_final_state and d_initial_state one buffer),
// batch_invariant (every chunk's work and every reduction has a fixed order,
// whatever the batch), grouped heads (dq, dk, dv summed over their groups),
// varlen THD with empty sequences. Execute-time shape overrides of the token
// count T and the sequence count N run the built kernels at the call's extents
// (heads and the head dim may not change; q, k, v may change their strides
// within B7, the other tensors stay dense). Its GPU numerics tests
// (tests/linear_attention_gpu/test_la_bwd_gpu.cpp) pass on the H200.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/declared_layout.h"
#include "opgraph/data_type.h"
#include "opgraph/engine.h"
#include "opgraph/status.h"
#include "plan/manifest.h"
#include "runtime/nvrtc_compiler.h"

namespace opgraph {
class Node;
class OpGraph;
}
namespace opgraph::linear_attention {

struct GdnBwdProblem {
  std::string node;
  // Operand uids (-1: not bound / not produced).
  std::int64_t q = -1, k = -1, v = -1, g = -1, beta = -1, cu_seqlens = -1, initial_state = -1, d_o = -1,
               d_final_state = -1, a_log = -1, dt_bias = -1, dq = -1, dk = -1, dv = -1, dg = -1, dbeta = -1,
               d_initial_state = -1, d_a_log = -1, d_dt_bias = -1, checkpoints = -1;
  std::int64_t d = 0;             // K = V
  std::int64_t t = 0, n_seq = 0;  // tokens, sequences
  std::int64_t hq = 0, hk = 0, hv = 0, ho = 0;
  std::int64_t q_ts = 0, q_hs = 0, k_ts = 0, k_hs = 0, v_ts = 0, v_hs = 0;
  DataType io = DataType::BFLOAT16;
  DataType g_type = DataType::FLOAT, beta_type = DataType::FLOAT, do_type = DataType::BFLOAT16;
  DataType init_type = DataType::FLOAT, dfin_type = DataType::FLOAT, dinit_type = DataType::FLOAT;
  DataType dq_type = DataType::BFLOAT16, dk_type = DataType::BFLOAT16, dv_type = DataType::BFLOAT16;
  DataType dg_type = DataType::FLOAT, dbeta_type = DataType::FLOAT;
  DataType a_log_type = DataType::FLOAT, dt_bias_type = DataType::FLOAT, dalog_type = DataType::FLOAT,
           ddt_type = DataType::FLOAT;
  DataType ckpt_type = DataType::FLOAT;
  std::int64_t checkpoint_every = 0, ckpt_rows = 0;  // with checkpoints: the cadence (tokens), R
  bool cu64 = false;
  bool l2norm = false, safe_gate = false, linear_gate = false, beta_sigmoid = false, neg_eig = false;
  bool batch_invariant = false, overwrite = false;
  double scale = 0.0;  // resolved: the attribute, else D^-0.5
  // gdn_summary_bwd (analyze_gdn_summary_bwd): no v and no token gradients; G is written through
  // d_initial_state (dinit_type), the transition (when produced) through `transition`.
  bool summary = false;
  std::int64_t transition = -1;
  DataType trans_type = DataType::FLOAT;
};

// Whether `graph` is one gdn_bwd or gdn_summary_bwd node (the graphs la_engine.cpp hands here).
bool is_gdn_bwd(const OpGraph& graph);

// Reads `graph` (validated, frozen). GRAPH_NOT_SUPPORTED names the rule. A gdn_summary_bwd
// graph is analyze_gdn_summary_bwd's.
Result<GdnBwdProblem> analyze_gdn_bwd(const OpGraph& graph);

// gdn_summary_bwd (gdn_summary_bwd.cpp): per sequence and head, G (the gradient of the state at
// the sequence's start from a zero gradient at its end, driven by dO) and, under output_transition,
// the transition M, with gdn_bwd's kernels: gdn_bwd_prep, then gdn_bwd_rev_summary and
// gdn_bwd_fwd_summary over every sequence whole (kBwdFlagSummary). Rules, each declined by name:
//  SB1 op: exactly one node, op gdn_summary_bwd;
//  SB2 q/k: BFLOAT16 or HALF, one type for both;
//  SB3 head dim: K = V = D with D in {64, 128} (V: dO's last dim);
//  SB4 types: g, beta, dO, a_log, dt_bias FLOAT, BFLOAT16 or HALF; G and transition FLOAT or BFLOAT16;
//  SB5 layout: q, k as gdn_bwd's B7; every other operand dense row-major; G and transition non-virtual;
//  SB6 grid: N <= 65535 sequences, HO <= 65535 heads.
// Served: scale, use_qk_l2norm, gate_domain, safe_gate with a_log / dt_bias, use_beta_sigmoid,
// allow_neg_eigval, batch_invariant (every sequence and head is one CTA's fixed-order work), grouped
// heads, varlen THD with empty sequences (G = 0, M = I).
Result<GdnBwdProblem> analyze_gdn_summary_bwd(const OpGraph& graph);

// The attributes both analyses read from node `n` into `p` (p.d set first: scale's default is D^-0.5):
// safe_gate, use_qk_l2norm, gate_domain, use_beta_sigmoid, allow_neg_eigval, batch_invariant, scale.
void read_gate_attributes(const Node& n, GdnBwdProblem& p);

// With state_checkpoints (rule B6): the seeded forward spans a sequence has at most (the grid's z per sequence),
// and the rows a batch of T tokens may need, floor(T / c).
long long gdn_bwd_checkpoint_spans(const GdnBwdProblem& p);
std::int64_t gdn_bwd_checkpoint_rows_needed(const GdnBwdProblem& p);

// The engine's check_support of a gdn_bwd graph: analyze_gdn_bwd's rules
// (B1..B8); a graph they accept is offered to the planner.
Status gdn_bwd_support(const OpGraph& graph);

// The problem an execute with shape overrides runs (one kernel per layout class:
// the built plan's kernels at the call's extents): `built` with the token count T
// (dim 0 of q, k, v, g, beta, dO and the token gradients, every one alike), the
// sequence count N (cu_seqlens [N + 1]; dim 0 of the state tensors) and q / k / v's
// strides (rule B7), read from the normalised `pack` laid out by `layout`. Heads and
// the head dim select the kernels and may not change; the other tensors stay dense.
// A refusal is INVALID_VARIANT_PACK naming the tensor, its port and the rule.
Result<GdnBwdProblem> gdn_bwd_overridden_problem(const GdnBwdProblem& built, const VariantPack& pack,
                                                 const DeclaredLayout& layout);

// A gdn_bwd plan's form, from its knobs: the chain split (CHAIN_SPLIT, chunks a span; 0: none), the fused
// forward recompute (PIPELINE_ARCH 2 and 3, rule B9: gdn_bwd_fwd_fused, the forward's warp-specialised fused pass
// storing each chunk's tiles, S^T and Vn, in place of gdn_bwd_prep and gdn_bwd_fwd_scan) and the fused reverse
// scan (PIPELINE_ARCH 3: gdn_bwd_rev_fused, three warpgroups a (head, sequence), in place of gdn_bwd_rev_scan);
// d = 128; under state_checkpoints the fused forward recompute runs spans of their cadence seeded by them
// (gdn_bwd_fwd_span_fused), under PIPELINE_ARCH 3's chain split six span kernels (gdn_bwd_kernel_requests).
struct BwdForm {
  long long split = 0;
  bool fused = false;
  bool fused_rev = false;
  bool onepass = false;  // PIPELINE_ARCH 5 (rule B11): gdn_bwd_fwd_st_fused (or 3's split kernels), gdn_bwd_onepass,
                         // gdn_bwd_finish
};

// Rule B11 (gdn_bwd_rules.cpp): why the one-pass form (PIPELINE_ARCH 5) does not serve `p`, split or not (empty: it
// does).
std::string gdn_bwd_b11_refusal(const GdnBwdProblem& p);

// Rule B9 (gdn_bwd_rules.cpp): why the fused form PIPELINE_ARCH `arch` (2 or 3) does not serve `p` under a split of
// `split` chunks (empty: it does). Only 3 splits (its six span kernels); 2 runs each sequence whole.
std::string gdn_bwd_b9_refusal(const GdnBwdProblem& p, long long split, long long arch);
// The form a plan config names (gdn_bwd_rules.cpp): its split (CHAIN_SPLIT, refused off its domain, under
// gdn_summary_bwd or past the grid's 65535 N x spans), PIPELINE_ARCH 2 the fused forward recompute and 3 that and the
// fused reverse scan (refused naming rule B9 where gdn_bwd_b9_refusal says why; 0 and 1 the prep and the scans).
Result<BwdForm> gdn_bwd_form(const GdnBwdProblem& p, const PlanConfig& config);

// The kernels a plan of `p` runs under a chain split of `split` chunks a span (0: none), in
// launch order (gdn_summary_bwd: gdn_bwd_prep, gdn_bwd_fwd_summary where the transition is
// produced, gdn_bwd_rev_summary): gdn_bwd_prep; unsplit gdn_bwd_fwd_scan, gdn_bwd_rev_scan, or split
// gdn_bwd_fwd_summary, gdn_bwd_rev_summary, gdn_bwd_span_fixup, gdn_bwd_fwd_span,
// gdn_bwd_rev_span (with state_checkpoints bound gdn_bwd_fwd_span replaces gdn_bwd_fwd_scan, unsplit or
// split, and a split's summary and fix-up serve the reverse direction only); then gdn_bwd_grads, gdn_bwd_finish (launched only when something is
// staged for it: HQ != HK or HV < HO), gdn_bwd_gate_params (launched only when d_a_log or
// d_dt_bias is produced), specialised by D and the q/k/v type.
std::vector<runtime::KernelRequest> gdn_bwd_kernel_requests(const GdnBwdProblem& p, long long split = 0);
// The same for a form (the fused forward recompute: gdn_bwd_fwd_fused first, no gdn_bwd_prep, no gdn_bwd_fwd_scan;
// the fused reverse scan: gdn_bwd_rev_fused for gdn_bwd_rev_scan; PIPELINE_ARCH 3 split: gdn_bwd_fwd_summary_fused,
// gdn_bwd_span_fixup (its forward walk), gdn_bwd_fwd_span_fused, gdn_bwd_rev_summary_fused, gdn_bwd_span_fixup_rev,
// gdn_bwd_rev_span_fused, then the gradients' kernels).
std::vector<runtime::KernelRequest> gdn_bwd_kernel_requests(const GdnBwdProblem& p, const BwdForm& form);

// The workspace (bytes) a plan of `p` needs (kernels/gdn_bwd_params.cuh,
// gdn_bwd_ws): per (64-token chunk slot, head) the chunk's tiles, the state and
// its gradient at the chunk's boundary (bf16 [D][D] each), Vn and dVn; then
// fp32 dq, dk per output head [T, HO, D] each only where HQ != HK, dv only where
// HV < HO, and fp32 [HO, T] twice (the safe gate's per-token terms). At D = 128
// about 180 KiB a (chunk slot, head) plus up to 1.5 KiB a (token, head) of
// staging; ceil(T / 64) + N chunk slots. Under a chain split (`split` > 0) five fp32
// [D][D] blocks a (sequence, span, head) besides.
// `onepass`: the one-pass form's (PIPELINE_ARCH 5; kernels/gdn_bwd_params.cuh's gdn_bwd_ws_onepass: S^T and T a
// chunk slot, the dq / dk sums [T, HQ or HK, D], no dS^T, Vn or dVn; its split adds the block tiles and span blocks).
std::int64_t gdn_bwd_workspace_bytes(const GdnBwdProblem& p, long long split = 0, bool onepass = false);

// Every entry a plan of `form` for `p` launches at its built extents, in launch order, with its grid (x, y, z);
// entries the form does not launch are left out (the host side of the launches, for tests without a device).
struct BwdLaunchGrid {
  std::string entry;
  unsigned x = 0, y = 0, z = 0;
};
std::vector<BwdLaunchGrid> gdn_bwd_launch_grids(const GdnBwdProblem& p, const BwdForm& form);

// The chain split the heuristics propose for `p` on a device of `sm_count`
// multiprocessors (chunks a span; 0: none): a count of waves a chunk step for the
// scans unsplit against the split's passes and fix-up (gdn_bwd.cpp), taken where it
// saves 5 %; never under batch_invariant.
long long gdn_bwd_chain_split_rule(const GdnBwdProblem& p, long long sm_count);

// The chain split of the fused forms (PIPELINE_ARCH 3 with CHAIN_SPLIT: span summaries, the fix-up's two walks,
// each span's forward recompute and reverse scan from its seed) the heuristics propose for `p` (chunks a span; 0:
// none): waves of one CTA a (head, sequence [x span]) times a chunk step's time per pass, unsplit against split, taken
// where it saves 5 %; never under batch_invariant or where rule B9 refuses PIPELINE_ARCH 3.
long long gdn_bwd_fused_split_rule(const GdnBwdProblem& p, long long sm_count);

// The chain split of the one-pass form (PIPELINE_ARCH 5 with CHAIN_SPLIT) the heuristics propose for `p`, before
// PIPELINE_ARCH 3's split (chunks a span; 0: none): where rule B11 serves `p` and gdn_bwd_fused_split_rule splits,
// its spans halved while longer than 64 chunks and their CTAs fill at most two waves of the multiprocessors.
long long gdn_bwd_onepass_split_rule(const GdnBwdProblem& p, long long sm_count);

// Whether the heuristics rank the fused forms (PIPELINE_ARCH 3, then 2) before the prep and the scans: rule B9
// serves `p` (d = 128, not gdn_summary_bwd), the chain split rule does not split, and either state_checkpoints are
// bound (the fused forward recompute then runs the cadence's spans at once: 0.71-0.90x the whole-sequence plan's
// time on the H100 every 256..4096 tokens where the scans' rule does not split,
// bench/results/2026-12-05-gdn-split-mskip-h100.txt) or the (head, sequence) chains, one CTA each, number at least
// 3/4 of the multiprocessors. On the H200 PIPELINE_ARCH 3 took 0.778-0.796x their time where 256 or 128 chains ran
// (2: 0.842-0.858x) and 1.06-1.52x with 64 or fewer (one sequence, no checkpoints; the prep's parallel work and the
// scans' two V slices a chain win there): bench/results/2026-12-05-gdn-bwd-rev-loader-h200.txt.
bool gdn_bwd_fused_first(const GdnBwdProblem& p, long long sm_count);

// Whether the heuristics rank the one-pass form (PIPELINE_ARCH 5) first: rule B11 serves `p`, the (head, sequence)
// chains, one CTA each, number at least 9/10 of the multiprocessors and the sequences average 4096 tokens or more.
// On the H100 it took 0.879-0.886x PIPELINE_ARCH 3's time at 16/32 and 16/64, 4 x 8192 (128 and 256 chains) and
// 1.25-1.91x with 64 or fewer chains (bench/results/2026-12-07-gdn-onepass-red-tma-h100.txt, call 8).
bool gdn_bwd_onepass_first(const GdnBwdProblem& p, long long sm_count);

// Every specialisation gdn_bwd may compile: the twelve entries for D in {64, 128}
// x q/k/v in {bf16, fp16}, and the six fused ones (gdn_bwd_fwd_fused, gdn_bwd_rev_fused and the split's
// gdn_bwd_fwd_summary_fused, gdn_bwd_fwd_span_fused, gdn_bwd_rev_summary_fused, gdn_bwd_rev_span_fused) for
// D = 128 x {bf16, fp16}; the one-pass form's five (gdn_bwd_fwd_st_fused and its split's gdn_bwd_fwd_span_fused from
// one build, gdn_bwd_onepass and its builds of gdn_bwd_finish and gdn_bwd_gate_params) for D = 128, bf16.
std::vector<runtime::KernelRequest> gdn_bwd_declared_specialisations();

// The engine's entry points for a gdn_bwd graph (la_engine.cpp dispatches to them when is_gdn_bwd): the plan (on
// the device the planning target names, as the forward's; its kernels from the compiled cache; the CHAIN_SPLIT knob
// picks the split, PIPELINE_ARCH 2 and 3 the fused forms, 5 the one-pass form), the kernels it compiles, and the
// family heuristics' proposals (on a graph analyze_gdn_bwd accepts; none otherwise), in order: the one-pass form
// where gdn_bwd_onepass_first holds; where the fused forms do not come first and gdn_bwd_fused_split_rule splits,
// the one-pass split (gdn_bwd_onepass_split_rule) and PIPELINE_ARCH 3's split; the scans' split where
// gdn_bwd_chain_split_rule splits; the fused forms (3, then 2) where gdn_bwd_fused_first holds; the whole-sequence
// scans; else the fused forms (2, then 3) where rule B9 serves the graph; PIPELINE_ARCH 3's split last where the
// fused forms came first and its rule splits.
Result<std::unique_ptr<CompiledPlan>> build_gdn_bwd_plan(const OpGraph& graph, const PlanConfig& config,
                                                         const PlanContext& ctx);
Status gdn_bwd_plan_kernels(const OpGraph& graph, const PlanConfig& config, const PlanContext& ctx,
                            const KernelSink& sink);
void gdn_bwd_proposals(const Engine& engine, const OpGraph& graph, long long sm_count,
                       std::vector<plan::Proposal>& out);

}  // namespace opgraph::linear_attention
