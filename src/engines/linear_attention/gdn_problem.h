// engines/linear_attention/gdn_problem.h — what the linear_attention family reads
// from a graph: one gdn forward node, reduced to a GdnProblem (extents, dtypes,
// the attributes as kernel flags, the operands' uids).
//
// analyze_gdn is the engine's check_support: it accepts a graph or declines with
// GRAPH_NOT_SUPPORTED naming the rule (L1..L7, below), the node and the tensor.
//  L1 op: exactly one node, op gdn (forward). The other linear-attention ops
//     (gdn_bwd, the summaries, kda, gdn2, gdp) are not served by this engine yet;
//  L2 q/k/v: BFLOAT16 or HALF, one type for the three;
//  L3 head dim: K = V = D with D in {64, 128};
//  L4 gates: g, beta, a_log, dt_bias FLOAT, BFLOAT16 or HALF; O FLOAT, BFLOAT16 or HALF;
//  L5 state: initial_state / final_state FLOAT or BFLOAT16, one type for both
//     when both are bound;
//  L6 layout: q, k, v with the head dim contiguous and token / head strides
//     multiples of 8 elements (views of a fused qkv projection are served);
//     every other operand dense row-major as declared (the packed strides of
//     its dims); a state tensor may pad its row stride (dim 0) to a multiple of
//     16 bytes, the same for initial_state and final_state; O non-virtual;
//  L7 grid: N <= 65535 sequences, HO <= 65535 heads;
//  L8 checkpoints: a bound state_checkpoints (checkpoint_every_n_tokens > 0, a graph output) is written by the
//     fused prefill (PIPELINE_ARCH 2, 3 and 4 under use_beta_sigmoid, d = 128) and the two-pass one
//     (PIPELINE_ARCH 1, d = 64 and 128, split or not), never by the one-pass prefill (a config naming
//     PIPELINE_ARCH 0 is refused by the rule's name);
//     FLOAT or BFLOAT16, dense [R, HO, V, K]. A virtual one is not written. The decode kernel is not used where
//     one is bound. (Until 2026-12-04 d = 64 was declined: the fused prefill alone wrote them.)
// Accepted as declared: scale, use_qk_l2norm, gate_domain, safe_gate with a_log /
// dt_bias, use_beta_sigmoid, allow_neg_eigval, initial_state, output_final_state,
// state_indices pools, overwrite_initial_state, batch_invariant, and
// checkpoint_every_n_tokens with its state_checkpoints output (L8).
//
// gdn_summary (analyze_gdn_summary, reached through analyze_gdn): per (sequence,
// head) the end state H from a zero seed ([N, HO, V, K]) and the transition's
// transpose M^T ([N, HO, K, K]), by the fused kernel's summary form (d = 128) or the
// two-pass prep and the scan's summary form (d = 64, a workspace; q read as k). Rules
// S1..S7 as L1..L7 above with these differences: S3 head dim K = V = 128 or 64; S4 H
// and M FLOAT, BFLOAT16 or HALF, dense as declared; no q, O or states (its numerics
// on the device: GdnGpu.SummaryMatchesTheReference).
#pragma once

#include <cstdint>
#include <string>

#include "opgraph/data_type.h"
#include "opgraph/status.h"

namespace opgraph {
class OpGraph;
}

namespace opgraph::linear_attention {

struct GdnProblem {
  std::string node;  // the gdn node's name
  // Operand uids (-1: not bound / not produced).
  std::int64_t q = -1, k = -1, v = -1, g = -1, beta = -1, cu_seqlens = -1, initial_state = -1, a_log = -1,
               dt_bias = -1, state_indices = -1, o = -1, final_state = -1;
  std::int64_t d = 0;                       // K = V
  std::int64_t t = 0, n_seq = 0;            // tokens, sequences
  std::int64_t hq = 0, hk = 0, hv = 0, ho = 0;
  std::int64_t state_rows = 0;              // N, or N_pool under state_indices
  std::int64_t state_row_stride = 0;        // elements between state rows
  std::int64_t q_ts = 0, q_hs = 0, k_ts = 0, k_hs = 0, v_ts = 0, v_hs = 0;  // token / head strides of q, k, v
  DataType io = DataType::BFLOAT16;         // q, k, v
  DataType g_type = DataType::FLOAT, beta_type = DataType::FLOAT, o_type = DataType::BFLOAT16;
  DataType state_type = DataType::FLOAT, a_log_type = DataType::FLOAT, dt_bias_type = DataType::FLOAT;
  bool cu64 = false;
  bool l2norm = false, safe_gate = false, linear_gate = false, beta_sigmoid = false, neg_eig = false;
  bool batch_invariant = false, overwrite = false;
  std::int64_t checkpoint_every = 0;
  // state_checkpoints, where bound (L8): its uid (-1: none written), type and rows R.
  std::int64_t checkpoints = -1;
  DataType ckpt_type = DataType::FLOAT;
  std::int64_t ckpt_rows = 0;
  double scale = 0.0;                       // resolved: the attribute, else D^-0.5
  // gdn_summary: o names H (o_type its type) and final_state M (state_type), both
  // dense [N, HO, D, D]; q, initial_state, state_indices unbound.
  bool summary = false;
};

// Reads `graph` (validated, frozen). GRAPH_NOT_SUPPORTED names the rule. A
// gdn_summary node goes to analyze_gdn_summary.
Result<GdnProblem> analyze_gdn(const OpGraph& graph);
Result<GdnProblem> analyze_gdn_summary(const OpGraph& graph);

// Whether the decode kernel serves `p` (not under batch_invariant, whose
// outputs must not depend on the batch: the prefill kernel serves every
// length; nor where state_checkpoints are written; else when T <= 8 N, i.e. at
// most 8 tokens a sequence on average).
bool use_decode(const GdnProblem& p);  // false for a summary

}  // namespace opgraph::linear_attention
